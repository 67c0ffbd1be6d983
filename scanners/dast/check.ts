// What a DAST finding keeps in details.check so verify-fix can run exactly that check again, and
// the injection point abstraction the active checks share.
import type { ScanRequest } from '../web/http.ts';
import { baseOf, crawlRequestToScan, encodeParams, getUrl, type Param } from './crawl.ts';

/**
 * details.check of every DAST finding (plain JSON):
 * - rule: the rule id that produced it; recheck runs that rule only.
 * - method, url, params, in: the request as the crawl made it (GET: url with its query; POST: the
 *   form action, params the urlencoded body). For `in: 'path'` (traversal in the URL path) url is
 *   the directory URL the payloads are appended to.
 * - parameter, index: the injected parameter (index among params, for repeated names).
 * - variant: the payload variant that proved it (tried first on a recheck; the other variants of
 *   the same rule are tried too, so a fix that only blocks one spelling does not pass).
 * - subject: for passive rules, the header or cookie name the finding is about.
 */
export interface DastCheck {
  rule: string;
  method: 'GET' | 'POST';
  url: string;
  params: Param[];
  in: 'query' | 'body' | 'path';
  parameter?: string;
  index?: number;
  variant?: string;
  subject?: string;
}

/** One parameter of one crawled request, where payloads go. */
export interface InjectionPoint {
  method: 'GET' | 'POST';
  url: string;
  params: Param[];
  in: 'query' | 'body';
  index: number;
}

export function pointName(p: InjectionPoint): string {
  return p.params[p.index]![0];
}

export function pointValue(p: InjectionPoint): string {
  return p.params[p.index]![1];
}

/** The request with the point's value replaced by `value`, every other parameter as crawled. */
export function withValue(p: InjectionPoint, value: string): ScanRequest {
  const params = p.params.map(([k, v], i): Param => [k, i === p.index ? value : v]);
  if (p.in === 'query') return { method: p.method, url: getUrl(baseOf(p.url), params) };
  return { method: p.method, url: p.url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: encodeParams(params) };
}

/** The request exactly as crawled (the baseline). */
export function baselineRequest(c: Pick<DastCheck, 'method' | 'url' | 'params' | 'in'>): ScanRequest {
  return c.in === 'path' ? { method: c.method, url: c.url } : crawlRequestToScan({ method: c.method, url: c.url, params: c.params, in: c.in });
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** Reads a stored details.check back, rejecting anything malformed (it comes from the database). */
export function parseCheck(raw: Record<string, unknown>): DastCheck {
  const { rule, method, url, params, parameter, index, variant, subject } = raw;
  const where = raw.in;
  if (!isString(rule) || !isString(url)) throw new Error('DAST check: rule and url are required');
  if (method !== 'GET' && method !== 'POST') throw new Error('DAST check: method must be GET or POST');
  if (where !== 'query' && where !== 'body' && where !== 'path') throw new Error('DAST check: in must be query, body or path');
  if (!Array.isArray(params) || !params.every((p): p is Param => Array.isArray(p) && p.length === 2 && isString(p[0]) && isString(p[1]))) {
    throw new Error('DAST check: params must be [name, value] pairs');
  }
  if (parameter !== undefined && !isString(parameter)) throw new Error('DAST check: parameter must be a string');
  if (index !== undefined && (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= params.length)) throw new Error('DAST check: bad index');
  return {
    rule,
    method,
    url,
    params: params.map(([k, v]): Param => [k, v]),
    in: where,
    ...(isString(parameter) ? { parameter } : {}),
    ...(typeof index === 'number' ? { index } : {}),
    ...(isString(variant) ? { variant } : {}),
    ...(isString(subject) ? { subject } : {}),
  };
}
