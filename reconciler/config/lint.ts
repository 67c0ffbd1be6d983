// The security lint of `aegis validate`: configurations that are valid but probably not what a
// security team wants. Warnings, never errors: each can be deliberate (a site in `log` mode while
// it is being tuned). Only clear cases are flagged, so that a warning is worth reading.
import { checkRuleValue, type IpRuleType } from '../../api/shield/ip-access/values.ts';
import type { ConfigProblem, DesiredObject } from '../model.ts';
import { fieldOrigin } from './origins.ts';
import { sortProblems, WARNING_PREFIX } from './problems.ts';

/** Networks that contain every address of their family. */
const EVERY_ADDRESS: Readonly<Record<string, string>> = { '0.0.0.0/0': 'every IPv4 client', '::/0': 'every IPv6 client' };

/** What an IP rule value covers when that is "everyone" (`every IPv4 client`), else null. */
export function coversEveryAddress(type: string, value: string): string | null {
  if (type !== 'cidr') return null;
  const check = checkRuleValue(type as IpRuleType, value);
  return check.ok ? (EVERY_ADDRESS[check.key] ?? null) : null;
}

/** A rule counts requests to the whole site when it matches every path and method. */
export const matchesWholeSite = (spec: Record<string, unknown>): boolean => spec.url_pattern === '/*' && spec.method === 'ANY';

/** At most one request per this many seconds, per client, is past "rate limiting" and into "blocking". */
export const BLOCKING_SECONDS_PER_REQUEST = 3600;

/**
 * A rate limit that in effect blocks everything: it covers the whole site, acts on the excess,
 * and lets a client through at most once an hour.
 */
export function blocksEverything(spec: Record<string, unknown>): boolean {
  const budget = Number(spec.budget);
  const window = Number(spec.window_seconds);
  return matchesWholeSite(spec) && spec.action !== 'log' && budget >= 1 && window / budget >= BLOCKING_SECONDS_PER_REQUEST;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function warning(object: DesiredObject, field: string, message: string): ConfigProblem {
  const origin = fieldOrigin(object, field);
  return { location: origin.location, kind: object.kind, name: object.name, message: `${WARNING_PREFIX}${origin.path}: ${message}` };
}

function lintObject(object: DesiredObject): ConfigProblem[] {
  const { spec } = object;
  switch (object.kind) {
    case 'ShieldSite':
      return spec.mode === 'log' ? [warning(object, 'mode', 'site does not block: in log mode its rules only record what they would do')] : [];
    case 'VirtualPatch':
      return spec.action === 'log' ? [warning(object, 'action', 'virtual patch does not block: matching requests are only logged')] : [];
    case 'IpAccessRule': {
      const who = coversEveryAddress(String(spec.type), String(spec.value));
      if (who && spec.action === 'allow') return [warning(object, 'value', `allow rule for ${String(spec.value)} lets ${who} bypass the site's other rules`)];
      if (who && spec.action === 'deny') return [warning(object, 'value', `deny rule for ${String(spec.value)} blocks ${who}`)];
      return [];
    }
    case 'RateLimitRule':
      return blocksEverything(spec)
        ? [warning(object, 'budget', `${String(spec.budget)} request(s) per ${String(spec.window_seconds)} s on every path and method effectively blocks the site`)]
        : [];
    case 'Webhook': {
      let url: URL;
      try {
        url = new URL(String(spec.url));
      } catch {
        return [];
      }
      return url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname) ? [warning(object, 'url', 'deliveries (findings, blocked requests) travel unencrypted over http://; use https://')] : [];
    }
    default:
      return [];
  }
}

/** Warnings (messages prefixed `warning:`), sorted by file, line and column. */
export function lintConfig(objects: readonly DesiredObject[]): ConfigProblem[] {
  return sortProblems(objects.flatMap(lintObject));
}
