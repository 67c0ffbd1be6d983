// The only way URL scanners (DAST, API, CVE templates) send traffic. Every request is checked and
// paced here, so no scanner can forget to:
//   - stay in scope: the request's host is one of the scope's hosts and its path under one of the
//     scope's prefixes (OutOfScopeError otherwise; nothing is sent);
//   - refuse private, loopback and link-local addresses, checked on the address actually connected
//     to after DNS, unless the server runs with AEGIS_ALLOW_PRIVATE_TARGETS=true (tests do);
//   - respect the budget (total requests; BudgetExhaustedError past it) and the rate (requests per
//     second, spread evenly).
// Requests go out exactly as given: the path is sent raw (a `/../` is not normalised away, which a
// traversal check needs), redirects are never followed, bodies are read up to a cap.
import { isIP } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Agent } from 'undici';
import { refusedAddress } from '../../platform/net/address-policy.ts';
import { systemResolver, type AddressResolver } from '../../platform/net/guarded-lookup.ts';
import { everywhere, outboundAgent, tenantRule } from '../../platform/net/outbound.ts';

export interface ScanScope {
  /** `host` or `host:port` as in URL.host, lower case. */
  hosts: string[];
  /** Path prefixes requests must start with (`/` for everything). */
  pathPrefixes: string[];
}

export interface ScanLimits {
  /** Requests the scan may send in total. */
  maxRequests: number;
  requestsPerSecond: number;
  /** Per request, to the end of the body. */
  timeoutMs: number;
  /** Larger bodies are cut here (and `truncated` set). */
  maxBodyBytes: number;
}

export const DEFAULT_LIMITS: ScanLimits = { maxRequests: 2_000, requestsPerSecond: 20, timeoutMs: 10_000, maxBodyBytes: 1024 * 1024 };

export interface ScanAuth {
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
}

export interface ScanRequest {
  method: string;
  /** Absolute URL. Its path is sent as written (raw), query included. */
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Leave out the scan's authentication (checks of what answers without it). */
  anonymous?: boolean;
}

export interface HttpExchange {
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  status: number;
  /** Lower-case names; repeated headers joined with ", " (set-cookie kept as an array in `setCookies`). */
  headers: Record<string, string>;
  setCookies: string[];
  body: string;
  truncated: boolean;
  durationMs: number;
}

export class OutOfScopeError extends Error {}
export class BudgetExhaustedError extends Error {}
export class RefusedTargetError extends Error {}

export interface ScanHttpOptions {
  scope: ScanScope;
  limits?: Partial<ScanLimits>;
  auth?: ScanAuth;
  allowPrivate: boolean;
  signal?: AbortSignal;
  userAgent?: string;
  /** Host name → address to connect to instead of asking DNS (like curl's --resolve); the address policy still applies. */
  resolve?: Record<string, string>;
}

/** Splits an absolute URL into origin and the raw request target, without normalising the path. */
export function splitUrl(url: string): { origin: string; host: string; target: string; pathname: string } {
  const m = /^(https?):\/\/([^/?#]+)([^#]*)/i.exec(url);
  if (!m) throw new OutOfScopeError(`not an absolute http(s) URL: ${url}`);
  const parsed = new URL(`${m[1]}://${m[2]}/`);
  const target = m[3] === '' ? '/' : m[3]!.startsWith('/') ? m[3]! : `/${m[3]}`;
  return { origin: parsed.origin, host: parsed.host.toLowerCase(), target, pathname: target.split('?')[0]! };
}

export class ScanHttp {
  readonly limits: ScanLimits;
  private readonly agent: Agent;
  private sent = 0;
  private nextSlot = 0;

  constructor(private readonly options: ScanHttpOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    // A pinned name (options.resolve) is answered without DNS; the address policy applies either way.
    const resolve: AddressResolver = (hostname, lookupOptions, done) => {
      const pinned = options.resolve?.[hostname.toLowerCase()];
      if (pinned) return done(null, [{ address: pinned, family: isIP(pinned) }]);
      systemResolver(hostname, lookupOptions, done);
    };
    // The outbound policy's tenant rule (net/outbound.ts), with the pinned names and the scanner's error.
    const rule = tenantRule({
      allowPrivateTargets: options.allowPrivate,
      resolve,
      refusal: (hostname, reason) => Object.assign(new RefusedTargetError(`${hostname}: ${reason} (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow)`), { code: 'EREFUSED_TARGET' }),
    });
    this.agent = outboundAgent(everywhere(rule), { rejectUnauthorized: false, connections: 8, pipelining: 0 });
  }

  /** Requests sent so far (the budget counts these). */
  get requests(): number {
    return this.sent;
  }

  get remaining(): number {
    return Math.max(0, this.limits.maxRequests - this.sent);
  }

  /** Whether `url` is inside the scope (host and path prefix). */
  inScope(url: string): boolean {
    try {
      const { host, pathname } = splitUrl(url);
      return this.options.scope.hosts.includes(host) && this.options.scope.pathPrefixes.some((p) => pathname.startsWith(p));
    } catch {
      return false;
    }
  }

  async send(req: ScanRequest): Promise<HttpExchange> {
    const { origin, host, target } = splitUrl(req.url);
    if (!this.inScope(req.url)) throw new OutOfScopeError(`out of scope: ${req.method} ${req.url}`);
    const hostname = new URL(origin).hostname.replace(/^\[|\]$/g, '');
    if (!this.options.allowPrivate && isIP(hostname) !== 0) {
      const reason = refusedAddress(hostname);
      if (reason) throw new RefusedTargetError(`${reason} (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow)`);
    }
    if (this.sent >= this.limits.maxRequests) throw new BudgetExhaustedError(`request budget of ${this.limits.maxRequests} used up`);
    this.sent++;
    await this.pace();
    const headers: Record<string, string> = { 'user-agent': this.options.userAgent ?? 'aegis-scanner/1', ...(req.anonymous ? {} : this.options.auth?.headers), ...req.headers };
    const cookies = req.anonymous ? undefined : this.options.auth?.cookies;
    if (cookies && Object.keys(cookies).length > 0) {
      const own = Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join('; ');
      headers.cookie = headers.cookie ? `${headers.cookie}; ${own}` : own;
    }
    headers.host ??= host;
    const started = performance.now();
    const signal = this.options.signal ? AbortSignal.any([this.options.signal, AbortSignal.timeout(this.limits.timeoutMs)]) : AbortSignal.timeout(this.limits.timeoutMs);
    const res = await this.agent.request({ origin, path: target, method: req.method, headers, body: req.body, signal });
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (size + chunk.length > this.limits.maxBodyBytes) {
        chunks.push(chunk.subarray(0, this.limits.maxBodyBytes - size));
        truncated = true;
        res.body.destroy();
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    const durationMs = performance.now() - started;
    const flat: Record<string, string> = {};
    let setCookies: string[] = [];
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      if (name === 'set-cookie') setCookies = Array.isArray(value) ? value : [value];
      flat[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return {
      request: { method: req.method, url: req.url, headers, ...(req.body !== undefined ? { body: req.body } : {}) },
      status: res.statusCode,
      headers: flat,
      setCookies,
      body: Buffer.concat(chunks).toString('utf8'),
      truncated,
      durationMs,
    };
  }

  /** Even spacing at the configured rate, shared by concurrent callers. */
  private async pace(): Promise<void> {
    const interval = 1000 / this.limits.requestsPerSecond;
    const now = performance.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + interval;
    if (slot > now) await delay(slot - now, undefined, this.options.signal ? { signal: this.options.signal } : undefined);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
