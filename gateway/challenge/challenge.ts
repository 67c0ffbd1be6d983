// The challenge a rule with action `challenge` puts in front of a request.
//
//   1. The gateway answers the request with a page (page.ts) carrying a signed puzzle seed bound to
//      the site, the client IP and five minutes. Status 403, `Cache-Control: no-store`: browsers
//      render the page all the same, while caches, crawlers and scripts see that this is not the
//      resource they asked for (Cloudflare's interstitials answer 403 for the same reason).
//   2. The page's script finds a nonce with SHA-256(seed ":" nonce) starting with D zero bits and
//      posts seed, nonce and return_to to CHALLENGE_PATH on the same host.
//   3. handleSubmit checks the answer and sets a signed clearance cookie bound to the site, the
//      client IP and (by default) 30 minutes, then sends the browser back with 303 See Other.
//   4. hasClearance lets later requests holding that cookie past challenge rules.
//
// Replay. Nothing is stored per client except the seeds already redeemed: each seed earns one
// clearance. That memory is per process (and capped), so with several gateway processes a seed can
// be redeemed once on each. The design does not depend on it: a seed only verifies for the site
// and client IP it was issued to and only until it expires, so replaying it can never yield more
// than another clearance for that same site and client, expiring at the latest SEED_TTL_SECONDS +
// the clearance lifetime after the seed was issued. One solved puzzle buys at most that much.
import { closeConnection, type GatewayRequest, type GatewayResponse } from '../proxy/exchange.ts';
import { randomBytes } from 'node:crypto';
import { FAILURE_CSP, challengeCsp, renderChallengePage, renderFailurePage } from './page.ts';
import { CLEARANCE_COOKIE, deriveChallengeKeys, hasEnoughWork, issueClearance, issueSeed, readSeed, verifyClearance, type ChallengeKeys } from './tokens.ts';

/** Reserved path, on every protected host, that challenge answers are posted to. */
export const CHALLENGE_PATH = '/.aegis/challenge';

export const DEFAULT_DIFFICULTY_BITS = 16;
export const DEFAULT_CLEARANCE_TTL_SECONDS = 30 * 60;
/** Above this a browser would need minutes (2^24 hashes is already several seconds on a phone). */
const MAX_DIFFICULTY_BITS = 32;
const MAX_RETURN_TO_CHARS = 2048;
/**
 * Larger forms are refused with 413. A form is a seed (~300 bytes), a nonce and the return path,
 * which browsers percent-encode: every character but [A-Za-z0-9*._-] (so every `/`, `?`, `&`, `=`
 * and `%`) becomes three bytes. The limit must fit the longest return path we accept, encoded.
 */
export const MAX_FORM_BYTES = 3 * MAX_RETURN_TO_CHARS + 2048;
/** Our nonces are decimal counters; anything else is not an answer from our page. */
const NONCE = /^[0-9]{1,16}$/;
/** Seeds remembered at most; past it the oldest are forgotten early (see UsedSeeds). */
const USED_SEEDS_CAPACITY = 100_000;

export interface ChallengeOptions {
  serverKey: Buffer;
  difficultyBits?: number | undefined;
  clearanceTtlSeconds?: number | undefined;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

export interface ChallengeContext {
  siteId: string;
  clientIp: string;
  /** The challenged request's target (path and query); the page returns there once solved. */
  returnTo: string;
  requestId: string;
}

export interface SubmitContext {
  siteId: string;
  clientIp: string;
  /** Whether the client reached us over https: the cookie is then marked Secure. */
  secure: boolean;
  requestId: string;
}

export type SubmitFailure = 'malformed' | 'bad_signature' | 'expired' | 'wrong_site' | 'wrong_client' | 'insufficient_work' | 'replayed';

export type SubmitResult = { ok: true; returnTo: string; clearance: string } | { ok: false; reason: SubmitFailure; returnTo: string };

/**
 * Where to send the browser after the challenge: the given target if it is a path on this origin,
 * else `/`. Refused: anything not starting with a single `/` (`//host` and `/\host` are
 * protocol-relative to browsers, which read `\` as `/`), whitespace and control characters
 * (browsers strip tabs and newlines from URLs, so `/\t/host` would become `//host`), non-ASCII
 * (not valid in a Location header), paths that normalise to `//…` (`/..//host`: harmless in a
 * browser, but an origin that re-emits its normalised path would turn it into a redirect off-site),
 * and the challenge path itself. Percent-encoded variants (`/%2F%2Fhost`, `/%5Chost`, `%0D%0A`)
 * stay encoded, so browsers read them as path characters on this origin.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (typeof value !== 'string' || value.length > MAX_RETURN_TO_CHARS) return '/';
  if (!/^\/[\x21-\x7e]*$/.test(value) || value.startsWith('//') || value.includes('\\')) return '/';
  let resolved: URL;
  try {
    // Belt and braces: whatever a URL parser makes of it must stay on the same origin.
    resolved = new URL(value, 'http://origin.invalid');
  } catch {
    return '/';
  }
  if (resolved.origin !== 'http://origin.invalid' || resolved.pathname.startsWith('//') || resolved.pathname === CHALLENGE_PATH) return '/';
  return value;
}

/**
 * Ids of redeemed seeds until they expire. Seeds are redeemed roughly in the order they were
 * issued and all live equally long, so expired ids sit at the front of the (insertion-ordered)
 * map and pruning stops at the first live one. When full, the oldest id is dropped early: its seed
 * could then be redeemed once more, which again yields only a clearance for the same client.
 */
class UsedSeeds {
  readonly #expiry = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** Records the seed id; false when it was already redeemed. */
  claim(id: string, expiresAtMs: number, nowMs: number): boolean {
    for (const [seen, expiry] of this.#expiry) {
      if (expiry > nowMs) break;
      this.#expiry.delete(seen);
    }
    if (this.#expiry.has(id)) return false;
    this.#expiry.set(id, expiresAtMs);
    if (this.#expiry.size > this.capacity) {
      const oldest = this.#expiry.keys().next();
      if (!oldest.done) this.#expiry.delete(oldest.value);
    }
    return true;
  }
}

type FormRead = { kind: 'ok'; body: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

/** Reads a request body of at most `limit` bytes without ever holding more. */
function readSmallBody(req: GatewayRequest, limit: number): Promise<FormRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: 'too_large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: FormRead) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish({ kind: 'too_large' });
      } else chunks.push(chunk);
    };
    const onEnd = () => finish({ kind: 'ok', body: Buffer.concat(chunks, size) });
    const onAbort = () => finish({ kind: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

const FAILURE_MESSAGES: Record<SubmitFailure, string> = {
  malformed: 'The answer to the browser check was not understood.',
  bad_signature: 'The answer to the browser check could not be verified.',
  expired: 'The browser check took too long to complete.',
  wrong_site: 'The answer to the browser check was meant for another site.',
  wrong_client: 'Your network address changed during the browser check.',
  insufficient_work: 'The answer to the browser check was not correct.',
  replayed: 'This browser check was already used.',
};

function send(res: GatewayResponse, status: number, headers: Record<string, string | number>, body: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
  res.end(body);
}

export class Challenges {
  readonly CHALLENGE_PATH = CHALLENGE_PATH;
  readonly difficultyBits: number;
  readonly clearanceTtlSeconds: number;
  readonly #keys: ChallengeKeys;
  readonly #now: () => number;
  readonly #usedSeeds = new UsedSeeds(USED_SEEDS_CAPACITY);

  constructor(options: ChallengeOptions) {
    this.difficultyBits = options.difficultyBits ?? DEFAULT_DIFFICULTY_BITS;
    this.clearanceTtlSeconds = options.clearanceTtlSeconds ?? DEFAULT_CLEARANCE_TTL_SECONDS;
    if (!Number.isInteger(this.difficultyBits) || this.difficultyBits < 1 || this.difficultyBits > MAX_DIFFICULTY_BITS) {
      throw new RangeError(`challenge difficulty must be an integer from 1 to ${MAX_DIFFICULTY_BITS} bits, got ${this.difficultyBits}`);
    }
    if (!Number.isInteger(this.clearanceTtlSeconds) || this.clearanceTtlSeconds < 1) {
      throw new RangeError(`clearance lifetime must be a positive number of seconds, got ${this.clearanceTtlSeconds}`);
    }
    this.#keys = deriveChallengeKeys(options.serverKey);
    this.#now = options.now ?? Date.now;
  }

  /** Whether the Cookie header holds a live clearance for this site and client IP. */
  hasClearance(cookieHeader: string | undefined, siteId: string, clientIp: string): boolean {
    return verifyClearance(this.#keys.clearance, cookieHeader, siteId, clientIp, this.#now());
  }

  /** A fresh puzzle seed for this site and client (what the page embeds). */
  issueSeed(siteId: string, clientIp: string): string {
    return issueSeed(this.#keys.puzzle, { siteId, clientIp, difficultyBits: this.difficultyBits, nowMs: this.#now() });
  }

  /** Answers the request with the challenge page. */
  sendChallenge(res: GatewayResponse, ctx: ChallengeContext): void {
    const cspNonce = randomBytes(16).toString('base64');
    const html = renderChallengePage({
      seed: this.issueSeed(ctx.siteId, ctx.clientIp),
      difficultyBits: this.difficultyBits,
      returnTo: safeReturnTo(ctx.returnTo),
      action: CHALLENGE_PATH,
      cspNonce,
      requestId: ctx.requestId,
    });
    send(res, 403, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': challengeCsp(cspNonce), 'x-request-id': ctx.requestId }, html);
  }

  /**
   * Checks a posted answer; on success also redeems the seed (a second submission of it fails)
   * and returns the clearance to set.
   */
  verifySubmission(form: { seed: string | null; nonce: string | null; returnTo: string | null }, ctx: { siteId: string; clientIp: string }): SubmitResult {
    const returnTo = safeReturnTo(form.returnTo);
    const fail = (reason: SubmitFailure): SubmitResult => ({ ok: false, reason, returnTo });
    if (!form.seed || !form.nonce || !NONCE.test(form.nonce)) return fail('malformed');
    const seed = readSeed(this.#keys.puzzle, form.seed);
    if (!seed) return fail('bad_signature');
    const nowMs = this.#now();
    if (seed.expiresAt * 1000 <= nowMs) return fail('expired');
    if (seed.siteId !== ctx.siteId) return fail('wrong_site');
    if (seed.clientIp !== ctx.clientIp) return fail('wrong_client');
    if (!hasEnoughWork(form.seed, form.nonce, seed.difficultyBits)) return fail('insufficient_work');
    // Last, so that only a complete, correct answer redeems the seed.
    if (!this.#usedSeeds.claim(seed.random, seed.expiresAt * 1000, nowMs)) return fail('replayed');
    const clearance = issueClearance(this.#keys.clearance, { siteId: ctx.siteId, clientIp: ctx.clientIp, nowMs, ttlSeconds: this.clearanceTtlSeconds });
    return { ok: true, returnTo, clearance };
  }

  /** Handles a POST to CHALLENGE_PATH: reads the form, verifies it, answers 303 or 403 (413 if too large). */
  async handleSubmit(req: GatewayRequest, res: GatewayResponse, ctx: SubmitContext): Promise<'passed' | 'failed'> {
    const read = await readSmallBody(req, MAX_FORM_BYTES);
    if (read.kind === 'aborted') {
      res.destroy();
      return 'failed';
    }
    if (read.kind === 'too_large') {
      // The rest of the body is not read: close the connection rather than drain it.
      send(res, 413, { 'content-type': 'text/plain; charset=utf-8', ...closeConnection(res), 'x-request-id': ctx.requestId }, 'Request body too large.\n');
      return 'failed';
    }
    const contentType = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    const form = contentType === 'application/x-www-form-urlencoded' ? new URLSearchParams(read.body.toString('utf8')) : new URLSearchParams();
    const result = this.verifySubmission({ seed: form.get('seed'), nonce: form.get('nonce'), returnTo: form.get('return_to') }, ctx);
    if (!result.ok) {
      const html = renderFailurePage({ message: `${FAILURE_MESSAGES[result.reason]} Please try again.`, retryHref: result.returnTo, requestId: ctx.requestId });
      send(res, 403, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': FAILURE_CSP, 'x-request-id': ctx.requestId }, html);
      return 'failed';
    }
    const cookie = `${CLEARANCE_COOKIE}=${result.clearance}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${this.clearanceTtlSeconds}${ctx.secure ? '; Secure' : ''}`;
    send(res, 303, { location: result.returnTo, 'set-cookie': cookie, 'x-request-id': ctx.requestId }, '');
    return 'passed';
  }
}
