// Rate-limit rules compiled for the gateway: which requests a rule counts, by what identity, and
// what happens past its budget. Requests that lack the rule's identity (no API key, no such header)
// are counted by client IP instead, so leaving the header out is not a way around the limit. An
// `api_key` rule counts every credential the request carries (a bearer token and an X-Api-Key),
// each against its own budget: a junk Authorization rotated beside a fixed X-Api-Key the origin
// actually reads is not a fresh identity, the fixed key is still counted.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RateLimitRuleRow } from '../../platform/db/schema.ts';
import { compileUrlPattern, methodMatches } from './url-pattern.ts';

export interface CompiledRateLimit {
  id: string;
  method: string;
  urlPattern: string;
  matchesPath: (path: string) => boolean;
  identity: { kind: 'ip' } | { kind: 'api_key' } | { kind: 'header'; name: string };
  budget: number;
  windowMs: number;
  action: 'block' | 'challenge' | 'log';
  escalateMs: number;
}

export type RateLimitSource = Pick<RateLimitRuleRow, 'id' | 'identity' | 'url_pattern' | 'method' | 'budget' | 'window_seconds' | 'action' | 'escalate_to_deny_minutes'>;

export function compileRateLimits(rows: readonly RateLimitSource[], foldCase = false): CompiledRateLimit[] {
  return rows.map((row) => ({
    id: row.id,
    method: row.method,
    urlPattern: row.url_pattern,
    matchesPath: compileUrlPattern(row.url_pattern, foldCase),
    identity: row.identity === 'ip' ? { kind: 'ip' } : row.identity === 'api_key' ? { kind: 'api_key' } : { kind: 'header', name: row.identity.slice('header:'.length).toLowerCase() },
    budget: row.budget,
    windowMs: row.window_seconds * 1000,
    action: row.action as CompiledRateLimit['action'],
    escalateMs: row.escalate_to_deny_minutes * 60_000,
  }));
}

export function ruleApplies(rule: CompiledRateLimit, method: string, path: string): boolean {
  return methodMatches(rule.method, method) && rule.matchesPath(path);
}

/** Short, stable digest: keys and header values never reach the counter store in clear. */
const digest = (value: string): string => createHash('sha256').update(value).digest('base64url').slice(0, 22);

/** Every API key the request carries: the bearer token and X-Api-Key (either may be what the origin reads). */
function apiKeysOf(headers: IncomingHttpHeaders): string[] {
  const keys: string[] = [];
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') {
    const token = auth.slice(7).trim();
    if (token !== '') keys.push(token);
  }
  const key = headers['x-api-key'];
  if (typeof key === 'string' && key !== '' && !keys.includes(key)) keys.push(key);
  return keys;
}

/** The API keys a request presents, as the digests it is counted by (and recorded by: traffic/capture.ts). */
export const apiKeyDigests = (headers: IncomingHttpHeaders): string[] => apiKeysOf(headers).map(digest);

/** The identities a rule counts this request by, as counter-key fragments: one, or one per API key it carries. */
export function identityKeys(rule: CompiledRateLimit, headers: IncomingHttpHeaders, clientIp: string): string[] {
  if (rule.identity.kind === 'api_key') {
    const keys = apiKeyDigests(headers);
    if (keys.length > 0) return keys.map((key) => `k:${key}`);
  } else if (rule.identity.kind === 'header') {
    const value = headers[rule.identity.name];
    const text = Array.isArray(value) ? value.join(',') : value;
    if (text) return [`h:${rule.identity.name}:${digest(text)}`];
  }
  return [`ip:${clientIp}`];
}
