// A URL scan's target as stored with the scan: the URL, its scope and limits, and the
// authentication sealed (it is a credential for the target). Checked when the scan is asked for —
// a target on a private address is refused at once unless AEGIS_ALLOW_PRIVATE_TARGETS — and turned
// into the ScanHttp the scanner sends through when it runs (which checks resolved addresses again).
import { isIP } from 'node:net';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import { validationFailed } from '../../../platform/http/errors.ts';
import { refusedAddress } from '../../../platform/net/address-policy.ts';
import { DEFAULT_LIMITS, ScanHttp, type ScanAuth } from '../../../scanners/web/http.ts';
import type { CommonScanInput } from './schemas.ts';
import { checkSandboxHosts, isDemoTarget, type SandboxScope } from '../../sandbox/target-policy.ts';

export interface UrlSource {
  [key: string]: unknown;
  kind: 'url';
  url: string;
  scope: { hosts: string[]; path_prefixes: string[]; resolve?: Record<string, string> };
  limits: { max_requests: number; requests_per_second: number };
  /** The `auth` of the request, sealed with the scan's target as context. */
  sealed_auth?: string;
  /** A test-mode scan of Aegis's own demo target: allowed to reach this server, within its path only. */
  sandbox_demo?: true;
}

const invalid = (field: string, message: string) => validationFailed(`request body is invalid: ${field} ${message}`, { fields: [{ field, message }] });

/** The URL without query, fragment or credentials; host lower-cased. Scans of one target are compared. */
export function urlTarget(url: string, field = 'target'): { target: string; parsed: URL } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(field, 'is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(field, 'must be an http or https URL');
  if (parsed.username || parsed.password) throw invalid(field, 'must not carry credentials; use `auth`');
  return { target: `${parsed.origin}${parsed.pathname}`, parsed };
}

/** Refuses literal private addresses and `localhost` up front; names are checked when resolved. */
export function checkAddress(parsed: URL, allowPrivate: boolean, field: string, resolve: Record<string, string> = {}): void {
  if (allowPrivate) return;
  const host = resolve[parsed.hostname.toLowerCase()] ?? parsed.hostname.replace(/^\[|\]$/g, '');
  const reason = isIP(host) !== 0 ? refusedAddress(host) : /^localhost$|\.localhost$/i.test(host) ? `${host} is the server itself` : null;
  if (reason) throw invalid(field, `${reason}; scans of private addresses need AEGIS_ALLOW_PRIVATE_TARGETS=true on the server`);
}

export interface PrepareOptions {
  allowPrivateTargets: boolean;
  box: SecretBox;
  field?: string;
  /** Test mode: the hosts the scan may probe (api/sandbox/target-policy.ts); undefined for live data. */
  sandbox?: SandboxScope | undefined;
}

export function prepareUrlSource(url: string, input: CommonScanInput, options: PrepareOptions): { target: string; source: UrlSource } {
  const field = options.field ?? 'target';
  const { target, parsed } = urlTarget(url, field);
  const resolve = Object.fromEntries(Object.entries(input.scope?.resolve ?? {}).map(([name, address]) => [name.toLowerCase(), address]));
  for (const [name, address] of Object.entries(resolve)) if (isIP(address) === 0) throw invalid(`scope.resolve.${name}`, 'must be an IP address');
  // The demo target is this server: the scan is held to the demo's path, whatever scope was asked.
  const demo = options.sandbox !== undefined && isDemoTarget(options.sandbox, parsed);
  if (demo && Object.keys(resolve).length > 0) throw invalid('scope.resolve', 'cannot be used with the demo target');
  if (!demo) checkAddress(parsed, options.allowPrivateTargets, field, resolve);
  const hosts = demo ? [parsed.host] : (input.scope?.hosts ?? [parsed.host]).map((h) => h.toLowerCase());
  if (!hosts.includes(parsed.host)) throw invalid('scope.hosts', `must include the target's host ${parsed.host}`);
  if (options.sandbox && !demo) checkSandboxHosts(options.sandbox, hosts, field);
  const prefixes = demo ? [new URL(options.sandbox!.demoUrl).pathname] : (input.scope?.path_prefixes ?? ['/']);
  if (!prefixes.some((p) => parsed.pathname.startsWith(p))) throw invalid('scope.path_prefixes', `must include the target's path ${parsed.pathname}`);
  const source: UrlSource = {
    kind: 'url',
    url: parsed.href.replace(/#.*$/, ''),
    scope: { hosts, path_prefixes: prefixes, ...(Object.keys(resolve).length > 0 ? { resolve } : {}) },
    limits: { max_requests: input.max_requests ?? DEFAULT_LIMITS.maxRequests, requests_per_second: input.requests_per_second ?? DEFAULT_LIMITS.requestsPerSecond },
    ...(input.auth && (Object.keys(input.auth.headers ?? {}).length > 0 || Object.keys(input.auth.cookies ?? {}).length > 0)
      ? { sealed_auth: options.box.seal(JSON.stringify(input.auth), target) }
      : {}),
    ...(demo ? { sandbox_demo: true as const } : {}),
  };
  return { target, source };
}

export function isUrlSource(source: unknown): source is UrlSource {
  return typeof source === 'object' && source !== null && (source as { kind?: unknown }).kind === 'url';
}

/** The client a scanner (or a recheck) of this source sends through. */
export function scanHttpFor(source: UrlSource, target: string, options: { box: SecretBox; allowPrivateTargets: boolean; signal: AbortSignal }): ScanHttp {
  const auth = source.sealed_auth ? (JSON.parse(options.box.open(source.sealed_auth, target)) as ScanAuth) : undefined;
  return new ScanHttp({
    scope: { hosts: source.scope.hosts, pathPrefixes: source.scope.path_prefixes },
    limits: { maxRequests: source.limits.max_requests, requestsPerSecond: source.limits.requests_per_second },
    ...(auth ? { auth } : {}),
    allowPrivate: options.allowPrivateTargets || source.sandbox_demo === true,
    signal: options.signal,
    ...(source.scope.resolve ? { resolve: source.scope.resolve } : {}),
  });
}
