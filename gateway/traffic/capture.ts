// Turns one decided request into its traffic record (traffic-record.ts): metadata always, values
// only for the requests the sampler picks — and never a credential. Runs on the hot path once the
// answer has started, so it reads only what the request already parsed and builds small strings.
import type { ParsedIp } from '../../schemas/checks/ip.ts';
import type { InspectedRequest } from '../inspected-request.ts';
import { apiKeyDigests } from '../rules/rate-limits.ts';
import type { ManagedByLevel, ManagedLevels } from '../rules/managed/index.ts';
import type { Verdict } from '../pipeline.ts';
import type { CapturedRequest, RecordedValues, ValuesReason } from './traffic-record.ts';

/** Longest value kept (characters): enough to see an attack's shape, not a document. */
const MAX_VALUE_CHARS = 256;
/** Longest text body kept when it is not parsed into fields (XML, plain text). */
const MAX_TEXT_BODY_CHARS = 1024;
const MAX_HEADERS = 32;
const MAX_FIELDS = 64;
const MAX_PATH = 1024;

/**
 * Parameter, field and header names that carry credentials or session state: dropped at capture,
 * whatever their value, so no preview (and no database) ever holds one.
 */
const CREDENTIAL_NAME =
  /passw|passphrase|pwd|secret|token|cookie|authori[sz]ation|^auth$|^auth[-_]|[-_]auth$|session|credential|api[-_]?key|access[-_]?key|private[-_]?key|signature|csrf|xsrf|otp$|^otp|^pin$|ssn|card[-_]?(number|no)|^cc[-_]?num|cvv|cvc|iban/i;

export const isCredentialName = (name: string): boolean => CREDENTIAL_NAME.test(name);

const cut = (value: string, max = MAX_VALUE_CHARS): string => (value.length > max ? value.slice(0, max) : value);

/** `name=value` pairs of a query string or form, credential names dropped, values cut, re-encoded. */
function keptPairs(pairs: Iterable<[string, string]>): string {
  const out: string[] = [];
  for (const [name, value] of pairs) {
    if (out.length >= MAX_FIELDS) break;
    if (isCredentialName(name)) continue;
    out.push(`${encodeURIComponent(cut(name, 128))}=${encodeURIComponent(cut(value))}`);
  }
  return out.join('&');
}

/** A JSON document with credential-named keys removed and long strings cut, within MAX_FIELDS values. */
function keptJson(value: unknown, budget: { left: number }, depth = 0): unknown {
  if (budget.left <= 0 || depth > 8) return null;
  if (typeof value === 'string') {
    budget.left--;
    return cut(value);
  }
  if (Array.isArray(value)) return value.slice(0, MAX_FIELDS).map((v) => keptJson(v, budget, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(value)) {
      if (budget.left <= 0) break;
      if (isCredentialName(name)) continue;
      out[cut(name, 128)] = keptJson(v, budget, depth + 1);
    }
    return out;
  }
  budget.left--;
  return value;
}

/** The values rules read, credentials dropped and every value cut (RecordedValues). */
function captureValues(request: InspectedRequest): RecordedValues {
  const headers: Record<string, string> = {};
  let count = 0;
  for (const [name, value] of Object.entries(request.headers)) {
    if (count >= MAX_HEADERS) break;
    if (value === undefined || isCredentialName(name) || name === 'host') continue;
    headers[name] = cut(Array.isArray(value) ? value.join(', ') : value);
    count++;
  }
  let body: string | null = null;
  let contentType = request.contentType;
  if (request.bodyState === 'json') {
    body = JSON.stringify(keptJson(request.json, { left: MAX_FIELDS }));
  } else if (request.bodyState === 'form' || request.bodyState === 'multipart') {
    // A multipart body is kept as the form its text fields make: replay reads the same names and values.
    body = keptPairs(request.fields.filter((f) => f.source === 'form' || f.source === 'multipart').map((f): [string, string] => [f.raw, f.value]));
    contentType = 'application/x-www-form-urlencoded';
  } else if (request.bodyText !== null) {
    body = cut(request.bodyText, MAX_TEXT_BODY_CHARS);
  }
  return { query: keptPairs(request.query), headers, contentType: body === null ? '' : contentType, body };
}

export interface CaptureInput {
  siteId: string;
  request: InspectedRequest;
  clientIp: string;
  parsedIp: ParsedIp;
  asn: number | null;
  country: string | null;
  verdict: Verdict;
  /** The site's managed rules at every level (sites/compile.ts), judged for the record; null when off. */
  managedLevels: ManagedLevels | null;
  status: number;
  arrived: number;
  latencyMs: number;
}

/** The request's record; its values only when `valuesReason` says they are kept. */
export function captureRecord(input: CaptureInput, managedByLevel: ManagedByLevel | null, valuesReason: ValuesReason | null): CapturedRequest {
  const { request, verdict } = input;
  const headers = request.headers;
  return {
    siteId: input.siteId,
    at: input.arrived,
    clientIp: input.clientIp,
    asn: input.asn,
    country: input.country,
    method: request.method,
    path: cut(request.path, MAX_PATH),
    status: input.status,
    latencyMs: input.latencyMs,
    hasSession: headers.cookie !== undefined || headers.authorization !== undefined || headers['x-api-key'] !== undefined,
    apiKeys: apiKeyDigests(headers),
    action: verdict.action,
    ruleKind: verdict.ruleKind,
    ruleId: verdict.ruleId,
    would: verdict.would,
    managedByLevel,
    values: valuesReason ? captureValues(request) : null,
    valuesReason,
  };
}
