// The challenge's tokens and checks without a gateway: signing, binding, expiry, replay, the
// return-path filter, the form handler over real HTTP, and the page's own SHA-256 against node's.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHALLENGE_PATH, Challenges, MAX_FORM_BYTES, safeReturnTo, type SubmitContext } from '../../gateway/challenge/challenge.ts';
import { SOLVER_SOURCE, renderChallengePage } from '../../gateway/challenge/page.ts';
import {
  CLEARANCE_COOKIE,
  SEED_TTL_SECONDS,
  deriveChallengeKeys,
  deriveKey,
  hasEnoughWork,
  isValidClearance,
  issueClearance,
  issueSeed,
  leadingZeroBits,
  openToken,
  readSeed,
  signToken,
  verifyClearance,
  workDigest,
} from '../../gateway/challenge/tokens.ts';

const serverKey = randomBytes(32);
const keys = deriveChallengeKeys(serverKey);
const T0 = Date.UTC(2030, 0, 1);
const SITE = 'site_a';
const IP = '198.51.100.7';

/** A nonce for `seed` with enough work, found the slow obvious way. */
function solve(seed: string, bits: number): string {
  for (let n = 0; ; n++) if (hasEnoughWork(seed, String(n), bits)) return String(n);
}

/** A nonce that does not have enough work (the check must refuse it). */
function nonSolution(seed: string, bits: number): string {
  for (let n = 0; ; n++) if (!hasEnoughWork(seed, String(n), bits)) return String(n);
}

/** The form field `name` of a rendered challenge page. */
function field(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no field ${name}`);
  return m[1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

class Clock {
  ms = T0;
  readonly now = () => this.ms;
}

describe('signed tokens', () => {
  it('derives distinct 32-byte keys per purpose and refuses a server key of the wrong size', () => {
    expect(keys.puzzle).toHaveLength(32);
    expect(keys.puzzle.equals(keys.clearance)).toBe(false);
    expect(deriveKey(serverKey, 'x').equals(deriveKey(serverKey, 'x'))).toBe(true);
    expect(deriveKey(serverKey, 'x').equals(deriveKey(serverKey, 'y'))).toBe(false);
    expect(() => deriveKey(Buffer.alloc(16), 'x')).toThrow(RangeError);
  });

  it('opens what it signed and nothing altered', () => {
    const token = signToken(keys.clearance, { a: 1, b: 'two' });
    expect(openToken(keys.clearance, token)).toEqual({ a: 1, b: 'two' });

    const [payload, signature] = token.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ a: 2, b: 'two' })).toString('base64url');
    expect(openToken(keys.clearance, `${forged}.${signature}`)).toBeNull();
    const flipped = signature[0] === 'A' ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    expect(openToken(keys.clearance, `${payload}.${flipped}`)).toBeNull();
    expect(openToken(keys.puzzle, token)).toBeNull();
    expect(openToken(deriveChallengeKeys(randomBytes(32)).clearance, token)).toBeNull();

    for (const bad of ['', '.', payload, `${payload}.`, `.${signature}`, `${payload}.${signature}.x`, `${payload}.${signature}=`, `${payload}!.${signature}`, `${token}${'A'.repeat(2000)}`]) {
      expect(openToken(keys.clearance, bad), bad).toBeNull();
    }
  });

  it('accepts only the canonical spelling of a signature', () => {
    const token = signToken(keys.clearance, { a: 1 });
    // The 43rd base64url character carries 4 signature bits and 2 padding bits; a lenient decoder
    // maps several characters to the same bytes, we must not.
    const last = token.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const index = alphabet.indexOf(last);
    const sibling = alphabet[(index & ~3) | ((index + 1) & 3)]!;
    const variant = token.slice(0, -1) + sibling;
    expect(Buffer.from(variant.split('.')[1]!, 'base64url').equals(Buffer.from(token.split('.')[1]!, 'base64url'))).toBe(true);
    expect(openToken(keys.clearance, variant)).toBeNull();
  });

  it('refuses correctly signed payloads that are not JSON objects', () => {
    // Signed by hand: signToken only takes objects.
    for (const text of ['[1,2]', '"text"', '42', 'null', '{"a":']) {
      const encoded = Buffer.from(text).toString('base64url');
      const token = `${encoded}.${createHmac('sha256', keys.clearance).update(encoded).digest('base64url')}`;
      expect(openToken(keys.clearance, token), text).toBeNull();
    }
  });
});

describe('proof of work', () => {
  it('counts leading zero bits', () => {
    expect(leadingZeroBits(new Uint8Array([0x80]))).toBe(0);
    expect(leadingZeroBits(new Uint8Array([0x01]))).toBe(7);
    expect(leadingZeroBits(new Uint8Array([0x00, 0x00, 0x3f]))).toBe(18);
    expect(leadingZeroBits(new Uint8Array([0, 0]))).toBe(16);
  });

  it('hashes seed ":" nonce', () => {
    expect(workDigest('abc', '12').equals(createHash('sha256').update('abc:12').digest())).toBe(true);
    const nonce = solve('seed', 10);
    expect(leadingZeroBits(workDigest('seed', nonce))).toBeGreaterThanOrEqual(10);
    expect(hasEnoughWork('seed', nonce, 10)).toBe(true);
  });
});

describe('seeds', () => {
  it('carry site, client, lifetime and difficulty, signed with the puzzle key only', () => {
    const token = issueSeed(keys.puzzle, { siteId: SITE, clientIp: IP, difficultyBits: 12, nowMs: T0 });
    const seed = readSeed(keys.puzzle, token);
    expect(seed).toMatchObject({ siteId: SITE, clientIp: IP, issuedAt: T0 / 1000, expiresAt: T0 / 1000 + SEED_TTL_SECONDS, difficultyBits: 12 });
    expect(seed!.random).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(readSeed(keys.clearance, token)).toBeNull();
    // Every seed is unique, even for the same client in the same second.
    expect(issueSeed(keys.puzzle, { siteId: SITE, clientIp: IP, difficultyBits: 12, nowMs: T0 })).not.toBe(token);
  });

  it('are not clearances, and clearances are not seeds', () => {
    const seed = issueSeed(keys.puzzle, { siteId: SITE, clientIp: IP, difficultyBits: 12, nowMs: T0 });
    expect(isValidClearance(keys.clearance, seed, SITE, IP, T0)).toBe(false);
    const clearance = issueClearance(keys.clearance, { siteId: SITE, clientIp: IP, nowMs: T0, ttlSeconds: 60 });
    expect(readSeed(keys.puzzle, clearance)).toBeNull();
  });
});

describe('clearances', () => {
  const clearance = issueClearance(keys.clearance, { siteId: SITE, clientIp: IP, nowMs: T0, ttlSeconds: 60 });

  it('hold for their site and client until they expire', () => {
    expect(isValidClearance(keys.clearance, clearance, SITE, IP, T0)).toBe(true);
    expect(isValidClearance(keys.clearance, clearance, SITE, IP, T0 + 59_999)).toBe(true);
    expect(isValidClearance(keys.clearance, clearance, SITE, IP, T0 + 60_000)).toBe(false);
    expect(isValidClearance(keys.clearance, clearance, 'site_b', IP, T0)).toBe(false);
    expect(isValidClearance(keys.clearance, clearance, SITE, '198.51.100.8', T0)).toBe(false);
    expect(isValidClearance(keys.puzzle, clearance, SITE, IP, T0)).toBe(false);
  });

  it('cannot be altered to another client, site or lifetime', () => {
    const signature = clearance.split('.')[1]!;
    const payload = JSON.parse(Buffer.from(clearance.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const change of [{ ip: '203.0.113.1' }, { s: 'site_b' }, { exp: (payload.exp as number) + 3600 }]) {
      const forged = `${Buffer.from(JSON.stringify({ ...payload, ...change })).toString('base64url')}.${signature}`;
      expect(isValidClearance(keys.clearance, forged, (change.s as string | undefined) ?? SITE, (change.ip as string | undefined) ?? IP, T0)).toBe(false);
    }
  });

  it('are found in a Cookie header among other cookies', () => {
    const ok = (header: string | undefined) => verifyClearance(keys.clearance, header, SITE, IP, T0);
    expect(ok(`${CLEARANCE_COOKIE}=${clearance}`)).toBe(true);
    expect(ok(`a=1; ${CLEARANCE_COOKIE}=${clearance}; b=2`)).toBe(true);
    expect(ok(`a=1;${CLEARANCE_COOKIE}=${clearance}`)).toBe(true);
    expect(ok(`${CLEARANCE_COOKIE}=stale; ${CLEARANCE_COOKIE}=${clearance}`)).toBe(true);
    expect(ok(undefined)).toBe(false);
    expect(ok('')).toBe(false);
    expect(ok(`x${CLEARANCE_COOKIE}=${clearance}`)).toBe(false);
    expect(ok(`a=${CLEARANCE_COOKIE}=${clearance}`)).toBe(false);
    expect(ok(`${CLEARANCE_COOKIE}=${clearance.slice(0, -1)}`)).toBe(false);
  });

  it('stop looking after a handful of candidates', () => {
    const junk = Array.from({ length: 50 }, () => `${CLEARANCE_COOKIE}=${issueClearance(keys.clearance, { siteId: 'other', clientIp: IP, nowMs: T0, ttlSeconds: 60 })}`);
    expect(verifyClearance(keys.clearance, [...junk.slice(0, 3), `${CLEARANCE_COOKIE}=${clearance}`].join('; '), SITE, IP, T0)).toBe(true);
    expect(verifyClearance(keys.clearance, [...junk, `${CLEARANCE_COOKIE}=${clearance}`].join('; '), SITE, IP, T0)).toBe(false);
  });
});

describe('safeReturnTo', () => {
  it('keeps paths on this origin', () => {
    for (const ok of ['/', '/some/path?x=1', '/a/b/?q=%2F%2Fevil.com&r=https://evil.com', '/%2F%2Fevil.com', '/%5Cevil.com', '/%0D%0ASet-Cookie:%20x=1', '/p#frag', '/.aegis/challengex', '/a:b@c']) {
      expect(safeReturnTo(ok), ok).toBe(ok);
    }
  });

  it('sends everything else to /', () => {
    const refused = [
      null,
      undefined,
      '',
      '//evil.com',
      '//evil.com/path',
      '/\\evil.com',
      '\\\\evil.com',
      '/\\/evil.com',
      'https://evil.com',
      'http:/evil.com',
      'https:evil.com',
      'javascript:alert(1)',
      'evil.com',
      ' /path',
      '/\t/evil.com',
      '/\n/evil.com',
      '/\r\n/evil.com',
      '/path\r\nSet-Cookie: a=1',
      '/ evil',
      '/\u0000',
      '/caf\u00e9',
      '/\uff0f\uff0fevil.com',
      '/..//evil.com',
      '/./..//evil.com',
      '/a/../..//evil.com',
      CHALLENGE_PATH,
      `${CHALLENGE_PATH}?x=1`,
      `/./${CHALLENGE_PATH.slice(1)}`,
      `/x/..${CHALLENGE_PATH}`,
      `/${'a'.repeat(2048)}`,
    ];
    for (const bad of refused) expect(safeReturnTo(bad), JSON.stringify(bad)).toBe('/');
  });
});

describe('Challenges.verifySubmission', () => {
  const clock = new Clock();
  const challenges = new Challenges({ serverKey, difficultyBits: 8, clearanceTtlSeconds: 600, now: clock.now });
  const ctx = { siteId: SITE, clientIp: IP };

  const solved = (returnTo: string | null = '/back?x=1') => {
    const seed = challenges.issueSeed(SITE, IP);
    return { seed, nonce: solve(seed, 8), returnTo };
  };

  it('refuses bad settings', () => {
    expect(() => new Challenges({ serverKey, difficultyBits: 0 })).toThrow(RangeError);
    expect(() => new Challenges({ serverKey, difficultyBits: 33 })).toThrow(RangeError);
    expect(() => new Challenges({ serverKey, difficultyBits: 2.5 })).toThrow(RangeError);
    expect(() => new Challenges({ serverKey, clearanceTtlSeconds: 0 })).toThrow(RangeError);
  });

  it('turns a correct answer into a clearance for that site and client', () => {
    clock.ms = T0;
    const result = challenges.verifySubmission(solved(), ctx);
    expect(result).toMatchObject({ ok: true, returnTo: '/back?x=1' });
    if (!result.ok) throw new Error('unreachable');
    const cookie = `${CLEARANCE_COOKIE}=${result.clearance}`;
    expect(challenges.hasClearance(cookie, SITE, IP)).toBe(true);
    expect(challenges.hasClearance(cookie, 'site_b', IP)).toBe(false);
    expect(challenges.hasClearance(cookie, SITE, '198.51.100.8')).toBe(false);
    clock.ms = T0 + 600_000;
    expect(challenges.hasClearance(cookie, SITE, IP)).toBe(false);
    // Another process with the same server key honours it; one with another key does not.
    const peer = new Challenges({ serverKey, now: () => T0 });
    expect(peer.hasClearance(cookie, SITE, IP)).toBe(true);
    expect(new Challenges({ serverKey: randomBytes(32), now: () => T0 }).hasClearance(cookie, SITE, IP)).toBe(false);
  });

  it('redeems each seed once', () => {
    clock.ms = T0;
    const form = solved();
    expect(challenges.verifySubmission(form, ctx).ok).toBe(true);
    expect(challenges.verifySubmission(form, ctx)).toMatchObject({ ok: false, reason: 'replayed' });
    // Another nonce for the same seed is the same seed.
    let other = Number(form.nonce) + 1;
    while (!hasEnoughWork(form.seed, String(other), 8)) other++;
    expect(challenges.verifySubmission({ ...form, nonce: String(other) }, ctx)).toMatchObject({ ok: false, reason: 'replayed' });
    // Past its lifetime a seed is refused as expired, so forgetting it then is safe.
    clock.ms = T0 + SEED_TTL_SECONDS * 1000;
    expect(challenges.verifySubmission(form, ctx)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('does not let a wrong answer use up the seed', () => {
    clock.ms = T0;
    const form = solved();
    expect(challenges.verifySubmission({ ...form, nonce: nonSolution(form.seed, 8) }, ctx)).toMatchObject({ ok: false, reason: 'insufficient_work' });
    expect(challenges.verifySubmission(form, { siteId: 'site_b', clientIp: IP })).toMatchObject({ ok: false, reason: 'wrong_site' });
    expect(challenges.verifySubmission(form, { siteId: SITE, clientIp: '203.0.113.9' })).toMatchObject({ ok: false, reason: 'wrong_client' });
    expect(challenges.verifySubmission(form, ctx).ok).toBe(true);
  });

  it('refuses expired, forged and malformed answers', () => {
    clock.ms = T0;
    const form = solved();
    const late = solved();
    clock.ms = T0 + SEED_TTL_SECONDS * 1000 - 1;
    expect(challenges.verifySubmission(form, ctx).ok).toBe(true);
    clock.ms = T0 + SEED_TTL_SECONDS * 1000;
    expect(challenges.verifySubmission(late, ctx)).toMatchObject({ ok: false, reason: 'expired' });
    clock.ms = T0;

    const fresh = solved('/keep');
    const [payload, signature] = fresh.seed.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const easier = `${Buffer.from(JSON.stringify({ ...claims, d: 1 })).toString('base64url')}.${signature}`;
    expect(challenges.verifySubmission({ ...fresh, seed: easier, nonce: solve(easier, 1) }, ctx)).toMatchObject({ ok: false, reason: 'bad_signature', returnTo: '/keep' });
    const foreign = new Challenges({ serverKey: randomBytes(32), difficultyBits: 8, now: clock.now }).issueSeed(SITE, IP);
    expect(challenges.verifySubmission({ seed: foreign, nonce: solve(foreign, 8), returnTo: '/' }, ctx)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // A clearance is signed with the other key: it is no seed.
    const clearance = issueClearance(keys.clearance, { siteId: SITE, clientIp: IP, nowMs: T0, ttlSeconds: 60 });
    expect(challenges.verifySubmission({ seed: clearance, nonce: '1', returnTo: '/' }, ctx)).toMatchObject({ ok: false, reason: 'bad_signature' });

    for (const nonce of [null, '', '-1', '1e3', ' 1', '0x10', '1'.repeat(17), '１']) {
      expect(challenges.verifySubmission({ ...fresh, nonce }, ctx), String(nonce)).toMatchObject({ ok: false, reason: 'malformed' });
    }
    expect(challenges.verifySubmission({ ...fresh, seed: null }, ctx)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(challenges.verifySubmission({ ...fresh, returnTo: '//evil.com' }, ctx)).toMatchObject({ ok: true, returnTo: '/' });
  });

  it('judges a seed by the difficulty it was issued with', () => {
    clock.ms = T0;
    const hard = new Challenges({ serverKey, difficultyBits: 12, now: clock.now });
    const seed = hard.issueSeed(SITE, IP);
    // A process now configured with 8 bits still wants the 12 the seed was issued with.
    let nonce = 0;
    while (!hasEnoughWork(seed, String(nonce), 8) || hasEnoughWork(seed, String(nonce), 12)) nonce++;
    expect(challenges.verifySubmission({ seed, nonce: String(nonce), returnTo: '/' }, ctx)).toMatchObject({ ok: false, reason: 'insufficient_work' });
    expect(challenges.verifySubmission({ seed, nonce: solve(seed, 12), returnTo: '/' }, ctx).ok).toBe(true);
  });
});

describe('the challenge over HTTP', () => {
  const clock = new Clock();
  const challenges = new Challenges({ serverKey, difficultyBits: 8, clearanceTtlSeconds: 900, now: clock.now });
  let server: Server;
  let base: string;
  const submitCtx: Omit<SubmitContext, 'requestId'> = { siteId: SITE, clientIp: '127.0.0.1', secure: false };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const secure = req.headers['x-test-secure'] === '1';
      if (req.method === 'POST' && req.url === CHALLENGE_PATH) void challenges.handleSubmit(req, res, { ...submitCtx, secure, requestId: 'req_test' });
      else challenges.sendChallenge(res, { siteId: SITE, clientIp: '127.0.0.1', returnTo: req.url ?? '/', requestId: 'req_<test>' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(base + CHALLENGE_PATH, { method: 'POST', body, redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });

  it('serves the page: 403, uncacheable, locked down by CSP, with a noscript explanation', async () => {
    const res = await fetch(`${base}/some/path?x=1&y="2"`);
    expect(res.status).toBe(403);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)![1]!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    const html = await res.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toMatch(/<noscript>[^<]*<p>[^]*enable JavaScript[^]*<\/noscript>/);
    expect(html).toContain(`action="${CHALLENGE_PATH}"`);
    expect(html).toContain('data-bits="8"');
    expect(html).toContain('req_&lt;test&gt;');
    expect(field(html, 'return_to')).toBe('/some/path?x=1&y=%222%22');
    expect(readSeed(keys.puzzle, field(html, 'seed'))).toMatchObject({ siteId: SITE, clientIp: '127.0.0.1', difficultyBits: 8 });
    // Two responses never share a CSP nonce or a seed.
    const again = await fetch(`${base}/`);
    expect(again.headers.get('content-security-policy')).not.toBe(csp);
    expect(field(await again.text(), 'seed')).not.toBe(field(html, 'seed'));
  });

  it('sets the clearance cookie and redirects back with 303', async () => {
    clock.ms = T0;
    const page = await (await fetch(`${base}/some/path?x=1`)).text();
    const seed = field(page, 'seed');
    const form = new URLSearchParams({ seed, nonce: solve(seed, 8), return_to: field(page, 'return_to') });
    const res = await post(form.toString());
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/some/path?x=1');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const cookie = res.headers.get('set-cookie')!;
    const [pair, ...attributes] = cookie.split('; ');
    expect(pair!.startsWith(`${CLEARANCE_COOKIE}=`)).toBe(true);
    expect(attributes.sort()).toEqual(['HttpOnly', 'Max-Age=900', 'Path=/', 'SameSite=Lax']);
    expect(challenges.hasClearance(pair, SITE, '127.0.0.1')).toBe(true);

    const again = await post(form.toString());
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    const html = await again.text();
    expect(html).toContain('already used');
    expect(html).toContain('href="/some/path?x=1"');
    expect(again.headers.get('content-security-policy')).not.toContain('script-src');
  });

  it('marks the cookie Secure when the client came over https', async () => {
    clock.ms = T0;
    const seed = challenges.issueSeed(SITE, '127.0.0.1');
    const res = await post(new URLSearchParams({ seed, nonce: solve(seed, 8), return_to: '/' }).toString(), { 'x-test-secure': '1' });
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')!.split('; ')).toContain('Secure');
  });

  it('accepts the longest return path a browser can post, and refuses larger bodies with 413', async () => {
    clock.ms = T0;
    const seed = challenges.issueSeed(SITE, '127.0.0.1');
    // Every character of this path is percent-encoded in the form: three bytes each.
    const returnTo = `/a${'&=%?/'.repeat(410)}`.slice(0, 2048);
    expect(safeReturnTo(returnTo)).toBe(returnTo);
    const body = new URLSearchParams({ seed, nonce: solve(seed, 8), return_to: returnTo }).toString();
    expect(body.length).toBeGreaterThan(6000);
    expect(body.length).toBeLessThanOrEqual(MAX_FORM_BYTES);
    const res = await post(body);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(returnTo);

    const big = await post(`seed=${'a'.repeat(MAX_FORM_BYTES)}`);
    expect(big.status).toBe(413);
  });

  it('ignores answers that are not a url-encoded form', async () => {
    clock.ms = T0;
    const seed = challenges.issueSeed(SITE, '127.0.0.1');
    const res = await post(JSON.stringify({ seed, nonce: solve(seed, 8) }), { 'content-type': 'application/json' });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('not understood');
  });
});

interface Solver {
  digest(suffix: string): Int32Array;
  search(from: number, count: number): number;
}

/** The page's solver, run as a browser would: the source text alone, in a fresh JS realm. */
function loadSolver(): (prefix: string, bits: number) => Solver {
  const context = vm.createContext({});
  vm.runInContext(SOLVER_SOURCE, context, { filename: 'solver.js' });
  const create: unknown = context.createSolver;
  if (typeof create !== 'function') throw new Error('SOLVER_SOURCE does not define createSolver');
  return (prefix, bits) => (create as (prefix: string, bits: number) => Solver)(prefix, bits);
}

const wordsToBuffer = (words: Int32Array): Buffer => {
  const out = Buffer.alloc(32);
  for (let i = 0; i < 8; i++) out.writeInt32BE(words[i]!, i * 4);
  return out;
};

describe('the in-browser solver', () => {
  const createSolver = loadSolver();

  it('computes the same SHA-256 as node for every prefix and suffix length around the block boundaries', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:';
    let checked = 0;
    for (let prefixLength = 0; prefixLength <= 200; prefixLength++) {
      const prefix = Array.from({ length: prefixLength }, (_, i) => alphabet[(i * 7 + prefixLength) % alphabet.length]).join('');
      const solver = createSolver(prefix, 1);
      for (const suffix of ['0', '7', '42', '123456', '99999999', '1234567890123456', '']) {
        const expected = createHash('sha256').update(prefix + suffix).digest();
        expect(wordsToBuffer(solver.digest(suffix)).toString('hex'), `${prefixLength}+${suffix.length}`).toBe(expected.toString('hex'));
        checked++;
      }
    }
    expect(checked).toBe(201 * 7);
  });

  it('hashes a real seed the way the gateway checks it', () => {
    const seed = issueSeed(keys.puzzle, { siteId: SITE, clientIp: IP, difficultyBits: 12, nowMs: T0 });
    const solver = createSolver(`${seed}:`, 12);
    for (let n = 0; n < 2000; n += 37) expect(wordsToBuffer(solver.digest(String(n))).equals(workDigest(seed, String(n)))).toBe(true);
    const nonce = solver.search(0, 1 << 20);
    expect(nonce).toBeGreaterThanOrEqual(0);
    expect(hasEnoughWork(seed, String(nonce), 12)).toBe(true);
    // And it is the first such nonce: the solver misses none.
    expect(String(nonce)).toBe(solve(seed, 12));
    expect(createSolver(`${seed}:`, 12).search(0, nonce)).toBe(-1);
  });

  it('derives its constants with a safe margin, so another engine\u2019s Math.cbrt gives the same ones', () => {
    // The solver truncates frac(root) * 2^32; a root off by a few ulps (~2^-18 after scaling) must
    // not cross an integer. FIPS 180-4's first and last round constants as a spot check.
    const solver = createSolver('', 1);
    expect(wordsToBuffer(solver.digest('')).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const primes: number[] = [];
    for (let c = 2; primes.length < 64; c++) if (primes.every((p) => c % p !== 0)) primes.push(c);
    for (const [i, p] of primes.entries()) {
      for (const root of i < 8 ? [Math.cbrt(p), Math.sqrt(p)] : [Math.cbrt(p)]) {
        const scaled = (root - Math.floor(root)) * 2 ** 32;
        const distance = Math.min(scaled - Math.floor(scaled), Math.ceil(scaled) - scaled);
        expect(distance, `prime ${p}`).toBeGreaterThan(2 ** -14);
      }
    }
  });

  it('is what the page embeds', () => {
    const html = renderChallengePage({ seed: 's', difficultyBits: 4, returnTo: '/', action: CHALLENGE_PATH, cspNonce: 'n', requestId: 'r' });
    expect(html).toContain(SOLVER_SOURCE);
    expect(html).not.toMatch(/<\/script[^]*<\/script/);
  });
});
