// The HTTP part of a webhook delivery: one POST, judged by its status alone. Deliveries are an SSRF
// vector (the server POSTs wherever an admin says), so they go through the outbound policy
// (net/outbound.ts, the tenant class): unless private targets are allowed the address actually
// connected to is checked (guarded lookup: a name that changed its answer since the
// URL was saved cannot reach a private address), literal addresses are checked before connecting
// (net.connect skips `lookup` for those), and only https is spoken. Redirects are not followed: a
// 3xx would otherwise lead the POST to an address nobody checked, so it counts as a failure.
import { isIP } from 'node:net';
import { request } from 'undici';
import { everywhere, outboundAgent, tenantRule, type AddressResolver } from '../../platform/net/outbound.ts';
import { refusalMessage } from './url-policy.ts';

/** Bytes of a response read before the connection is dropped: receivers should answer fast and short. */
export const MAX_RESPONSE_BYTES = 4 * 1024;
/** Bytes of the response body kept in the delivery log. */
export const STORED_RESPONSE_BYTES = 1024;

export interface SendResult {
  /** 2xx: the receiver took the event. */
  ok: boolean;
  /** The response's status, or null when none came (refused, unreachable, timed out). */
  status: number | null;
  /** The first STORED_RESPONSE_BYTES of the response body, as text. */
  body: string | null;
  durationMs: number;
  /** Why the attempt failed (null on success). */
  error: string | null;
}

export interface SenderOptions {
  allowPrivate: boolean;
  /** How endpoint names are resolved (AEGIS_WEBHOOK_DNS_SERVERS, else the system resolver). */
  resolve: AddressResolver;
  timeoutMs: number;
}

export interface WebhookSender {
  send(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<SendResult>;
  close(): Promise<void>;
}

class RefusedTargetError extends Error {
  override name = 'RefusedTargetError';
}

/** The message of an error and of its causes: undici wraps the interesting part (ECONNREFUSED, a refusal). */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 4; e = e.cause) {
    if (e.message && !parts.some((p) => p.includes(e.message))) parts.push(e.message);
  }
  return parts.join(': ') || String(err);
}

/** Reads at most MAX_RESPONSE_BYTES, then stops (the rest is not wanted, and may never end). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= MAX_RESPONSE_BYTES) break;
  }
  // Breaking out of the loop destroys the stream; call it anyway for the early-exit path's clarity.
  body.destroy();
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES);
}

/** Text of the stored part of a body; PostgreSQL text cannot hold NUL. */
const storedText = (bytes: Buffer): string => bytes.subarray(0, STORED_RESPONSE_BYTES).toString('utf8').replace(/\u0000/g, '');

/** A sender with one connection pool, made once per worker (or API process) and reused by every delivery. */
export function webhookSender({ allowPrivate, resolve, timeoutMs }: SenderOptions): WebhookSender {
  // The tenant rule of the outbound policy, with the webhook resolver and wording.
  const rule = tenantRule({ allowPrivateTargets: allowPrivate, resolve, refusal: (host, reason) => new RefusedTargetError(refusalMessage(host, reason)) });
  const refuse = rule.refuse;
  const agent = outboundAgent(everywhere(rule), { timeoutMs, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  /** Why the URL may not be posted to before any connection is made, or null. */
  function refusal(url: URL): string | null {
    if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return `${url.protocol} is not allowed; webhooks are delivered over https://`;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) === 0) return null;
    const reason = refuse(host);
    return reason ? refusalMessage(host, reason) : null;
  }

  return {
    async send(url, body, headers, signal) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return { ok: false, status: null, body: null, durationMs: 0, error: 'the webhook URL is not valid' };
      }
      const refused = refusal(target);
      if (refused) return { ok: false, status: null, body: null, durationMs: 0, error: refused };
      // One deadline for connecting, the headers and the body together.
      const deadline = AbortSignal.timeout(timeoutMs);
      const abort = signal ? AbortSignal.any([deadline, signal]) : deadline;
      try {
        const response = await request(target, { method: 'POST', headers, body, dispatcher: agent, signal: abort });
        const bytes = await readCapped(response.body);
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        const error = ok
          ? null
          : response.statusCode >= 300 && response.statusCode < 400
            ? `the endpoint answered ${response.statusCode} (a redirect); redirects are not followed`
            : `the endpoint answered ${response.statusCode}`;
        return { ok, status: response.statusCode, body: storedText(bytes), durationMs: elapsed(), error };
      } catch (err) {
        const error = deadline.aborted ? `timed out after ${timeoutMs} ms` : describe(err);
        return { ok: false, status: null, body: null, durationMs: elapsed(), error };
      }
    },
    close: () => agent.close(),
  };
}
