// OCSP stapling: for each served certificate that names an OCSP responder (Authority Information
// Access) and comes with its issuer in the chain, the gateway fetches the responder's answer in the
// background — through the outbound policy it was given, as tenant traffic: an uploaded certificate
// names whatever responder its uploader chose — and staples it to handshakes that ask for it
// (the TLS server's OCSPRequest event). An answer is kept until its nextUpdate and refreshed at
// half its validity; a failed fetch is retried with backoff while the last good answer, still
// valid, keeps being stapled. No responder, no issuer, or no valid answer: nothing is stapled.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServedCertificate } from './certificates.ts';
import { ocspQuery, ocspResponderOf, readOcspResponse, type OcspQuery } from './ocsp-message.ts';

const MIN_REFRESH_MS = 5 * 60_000;
const NO_NEXT_UPDATE_REFRESH_MS = 60 * 60_000;
const MAX_BACKOFF_MS = 60 * 60_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface OcspStaplerOptions {
  /** A fetch under the outbound policy (platform/net/outbound.ts). */
  fetch: typeof fetch;
  log: Logger;
  now?: () => number;
}

interface Tracked {
  siteId: string;
  url: string;
  query: OcspQuery;
  /** The stapled response and when it stops being valid. */
  response: Buffer | null;
  validUntil: number;
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

const derKey = (der: Buffer): string => createHash('sha256').update(der).digest('hex');
const fingerprintKey = (fingerprint256: string): string => fingerprint256.replace(/:/g, '').toLowerCase();

export class OcspStapler {
  /** By the leaf's SHA-256 (hex): what node hands the OCSPRequest event is the leaf's DER. */
  readonly #byLeaf = new Map<string, Tracked>();
  readonly #bySite = new Map<string, string>();
  readonly #now: () => number;
  #closed = false;

  constructor(private readonly options: OcspStaplerOptions) {
    this.#now = options.now ?? Date.now;
  }

  /** Starts keeping a staple for the site's certificate (replacing the previous one's), or stops (null). */
  track(siteId: string, certificate: ServedCertificate | null): void {
    const previous = this.#bySite.get(siteId);
    const key = certificate ? fingerprintKey(certificate.fingerprint) : undefined;
    if (previous !== undefined && previous === key) return;
    if (previous !== undefined) this.#forget(previous);
    this.#bySite.delete(siteId);
    if (!certificate || !certificate.issuer || key === undefined) return;
    const url = ocspResponderOf(certificate.leaf);
    const query = url ? ocspQuery(certificate.leaf, certificate.issuer) : null;
    if (!url || !query) return;
    const tracked: Tracked = { siteId, url, query, response: null, validUntil: 0, failures: 0, timer: undefined };
    this.#byLeaf.set(key, tracked);
    this.#bySite.set(siteId, key);
    void this.#refresh(tracked);
  }

  /** The response to staple for a leaf certificate (DER), if a valid one is held. */
  responseFor(leafDer: Buffer): Buffer | null {
    const tracked = this.#byLeaf.get(derKey(leafDer));
    if (!tracked?.response) return null;
    return tracked.validUntil > this.#now() ? tracked.response : null;
  }

  close(): void {
    this.#closed = true;
    for (const tracked of this.#byLeaf.values()) clearTimeout(tracked.timer);
    this.#byLeaf.clear();
    this.#bySite.clear();
  }

  #forget(key: string): void {
    const tracked = this.#byLeaf.get(key);
    clearTimeout(tracked?.timer);
    this.#byLeaf.delete(key);
  }

  async #refresh(tracked: Tracked): Promise<void> {
    let nextIn: number;
    try {
      const answer = await this.#fetch(tracked);
      const now = this.#now();
      tracked.failures = 0;
      if (answer.status.status === 'unknown') {
        // The responder does not know the certificate: stapling that would only confuse clients.
        tracked.response = null;
        nextIn = NO_NEXT_UPDATE_REFRESH_MS;
      } else {
        tracked.response = answer.der;
        const { thisUpdate, nextUpdate } = answer.status;
        tracked.validUntil = nextUpdate ? nextUpdate.getTime() : now + NO_NEXT_UPDATE_REFRESH_MS;
        nextIn = nextUpdate ? Math.max(MIN_REFRESH_MS, (thisUpdate.getTime() + nextUpdate.getTime()) / 2 - now) : NO_NEXT_UPDATE_REFRESH_MS;
      }
    } catch (err) {
      tracked.failures++;
      nextIn = Math.min(MAX_BACKOFF_MS, MIN_REFRESH_MS * 2 ** (tracked.failures - 1));
      this.options.log.warn({ site_id: tracked.siteId, responder: tracked.url, err: describe(err), retry_in_ms: nextIn }, 'shield: OCSP response not fetched; retrying later');
    }
    if (this.#closed || this.#byLeaf.get(this.#bySite.get(tracked.siteId) ?? '') !== tracked) return;
    tracked.timer = setTimeout(() => void this.#refresh(tracked), nextIn);
    tracked.timer.unref();
  }

  async #fetch(tracked: Tracked): Promise<{ der: Buffer; status: NonNullable<ReturnType<typeof readOcspResponse>> }> {
    const res = await this.options.fetch(tracked.url, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
      body: new Uint8Array(tracked.query.request),
    });
    const der = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`the responder answered ${res.status}`);
    if (der.length > MAX_RESPONSE_BYTES) throw new Error('the response is too large');
    const status = readOcspResponse(der, tracked.query.serial);
    if (!status) throw new Error('the response is not a successful answer for this certificate');
    if (status.nextUpdate && status.nextUpdate.getTime() <= this.#now()) throw new Error('the response has already expired');
    return { der, status };
  }
}

/** An error and its causes, as one line: undici says only "fetch failed" and puts why in `cause`. */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 4; depth++) {
    if (!(e instanceof Error)) {
      parts.push(String(e));
      break;
    }
    const code = (e as NodeJS.ErrnoException).code;
    parts.push(code ? `${e.message} (${code})` : e.message);
    e = e.cause;
  }
  return parts.join(': ');
}
