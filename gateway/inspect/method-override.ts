// The methods a request may be routed as. Frameworks let a request stand for another method:
// Express's method-override and Rack (Rails) read X-HTTP-Method-Override on a POST, the widespread
// WSGI middleware on any method, others X-HTTP-Method or X-Method-Override; Rails, Laravel and
// Symfony read a `_method` form field on a POST (and some a query parameter). A rule that protects
// `PUT /orders` must therefore also see a request that says PUT. The gateway evaluates such a
// request as every method it names as well as its own (the pipeline): an origin that honours the
// override and one that does not are both covered, and clients that rely on overrides keep working.
import type { InspectedRequest } from '../inspected-request.ts';

export const OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;
const OVERRIDE_FIELD = '_method';
const TOKEN = /^[A-Za-z]{1,20}$/;

/** Methods the headers announce, known before the body is read (the body's `_method` only after). */
export function headerOverrides(method: string, headers: InspectedRequest['headers']): string[] {
  const out: string[] = [];
  for (const name of OVERRIDE_HEADERS) {
    const value = headers[name];
    for (const text of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      for (const part of text.split(',')) add(out, part, method);
    }
  }
  return out;
}

/** Every method other than its own the request names: in override headers, and for a POST in `_method` fields. */
export function overrideMethods(request: InspectedRequest): string[] {
  const out = headerOverrides(request.method, request.headers);
  if (request.method !== 'POST') return out;
  for (const field of request.fields) {
    if ((field.source === 'query' || field.source === 'form' || field.source === 'multipart' || field.source === 'json') && field.raw.toLowerCase() === OVERRIDE_FIELD) add(out, field.value, request.method);
  }
  return out;
}

function add(out: string[], text: string, own: string): void {
  const method = text.trim().toUpperCase();
  if (TOKEN.test(method) && method !== own && !out.includes(method)) out.push(method);
}

/** The same request, seen as `method`: what a rule matching on methods compares. */
export function asMethod(request: InspectedRequest, method: string): InspectedRequest {
  return {
    method,
    get path() {
      return request.path;
    },
    get query() {
      return request.query;
    },
    get headers() {
      return request.headers;
    },
    get contentType() {
      return request.contentType;
    },
    get bodyState() {
      return request.bodyState;
    },
    get json() {
      return request.json;
    },
    get decodedPath() {
      return request.decodedPath;
    },
    get fields() {
      return request.fields;
    },
    get bodyText() {
      return request.bodyText;
    },
    get anomalies() {
      return request.anomalies;
    },
    get refusal() {
      return request.refusal;
    },
  };
}

/** The request and each method an override names, as the views method-reading rules are asked about. */
export function requestViews(request: InspectedRequest): readonly InspectedRequest[] {
  const overrides = overrideMethods(request);
  return overrides.length === 0 ? [request] : [request, ...overrides.map((method) => asMethod(request, method))];
}
