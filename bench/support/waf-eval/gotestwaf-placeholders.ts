// gotestwaf's placeholders (internal/payload/placeholder): where its Go HTTP client puts an encoded
// payload, rewritten here as the request that reaches the wire. The random names gotestwaf draws
// (parameter and header names, the multipart boundary) come from a hash of the test instead, so
// two runs send the same bytes and their results can be diffed. GraphQL and gRPC placeholders are
// not here: they need an endpoint speaking those protocols.
import { createHash } from 'node:crypto';
import { ENCODERS } from './gotestwaf-encoders.ts';
import { goRequestTarget, pathEscape } from './go-url.ts';
import type { Placement } from './types.ts';

/**
 * The headers gotestwaf's default config.yaml adds to every request (a desktop Chrome), without
 * `Connection: close`: this evaluation keeps connections alive, which no WAF rule looks at.
 */
export const CLIENT_HEADERS: Readonly<Record<string, string>> = {
  pragma: 'no-cache',
  'cache-control': 'no-cache',
  'sec-ch-ua': '"Chromium";v="122", "Not(A:Brand";v="24", "Google Chrome";v="122"',
  'sec-ch-ua-mobile': '?0',
  'sec-ch-ua-platform': '"Windows"',
  'upgrade-insecure-requests': '1',
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  'sec-fetch-site': 'none',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-user': '?1',
  'sec-fetch-dest': 'document',
  'accept-encoding': 'gzip, deflate, br, zstd',
  'accept-language': 'en-US;q=0.8,en;q=0.7',
};

/** A RawRequest placeholder's settings (method, path, headers and body with `{{payload}}` in them). */
export interface RawRequestConfig {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Placeholder {
  name: string;
  config?: RawRequestConfig | undefined;
}

/** A request as gotestwaf's client would send it, before the evaluation labels it. */
export interface WireRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: string;
  placement: Placement;
  /** Query bytes escaped because Go would write them raw (go-url.ts). */
  queryEscaped: boolean;
}

/** Why a combination was not sent: gotestwaf's client could not have built it either. */
export type Unbuildable = { unbuildable: string };

export const PLACEHOLDER_PLACEMENT: Record<string, Placement> = {
  URLParam: 'query',
  URLPath: 'path',
  HTMLForm: 'form',
  HTMLMultipartForm: 'multipart',
  JSONBody: 'json',
  JSONRequest: 'json',
  XMLBody: 'xml',
  SOAPBody: 'xml',
  Header: 'header',
  UserAgent: 'user_agent',
  RequestBody: 'body',
  RawRequest: 'raw',
};

const PAYLOAD = '{{payload}}';

/** gotestwaf's RandomHex(5): ten hex digits, here derived from `seed`. */
const randomHex = (seed: string, bytes = 5): string => createHash('sha256').update(seed).digest('hex').slice(0, 2 * bytes);

/** Go's net/http refuses header values with control characters other than tab. */
const validHeaderValue = (value: string): boolean => !/[\x00-\x08\x0a-\x1f\x7f]/.test(value);

const SOAP_ENVELOPE = (element: string, content: string): string => `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"
	xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
	<soapenv:Header>
		<ns1:RequestHeader soapenv:actor="http://schemas.xmlsoap.org/soap/actor/next"
			soapenv:mustUnderstand="0" xmlns:ns1="https://www.google.com/apis/ads/publisher/v202002">
		</ns1:RequestHeader>
	</soapenv:Header>
	<soapenv:Body>
		<getAdUnitsByStatement xmlns="https://www.google.com/apis/ads/publisher/v202002">
			<filterStatement>
				<${element}>${content}</${element}>
			</filterStatement>
		</getAdUnitsByStatement>
	</soapenv:Body>
</soapenv:Envelope>`;

/** Default headers under the request's own (RawRequest's and the placeholders' win, case-insensitively). */
function withClientHeaders(own: Record<string, string>, placeholder: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const ownNames = new Set(Object.keys(own).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(CLIENT_HEADERS)) {
    // gotestwaf leaves the User-Agent to the UserAgent placeholder.
    if (ownNames.has(name) || (placeholder === 'UserAgent' && name === 'user-agent')) continue;
    headers[name] = value;
  }
  for (const [name, value] of Object.entries(own)) headers[name.toLowerCase()] = value;
  return headers;
}

/**
 * The request gotestwaf sends for `encoded` (the payload after its encoder) in `placeholder`,
 * against a target URL of `http://<host>/`. `seed` names the test, for the random names.
 */
export function placeRequest(placeholder: Placeholder, encoded: string, seed: string): WireRequest | Unbuildable {
  const name = randomHex(`${seed}|name`);
  const build = (method: string, url: string, own: Record<string, string>, body?: string): WireRequest | Unbuildable => {
    const target = goRequestTarget(url);
    if (target === null) return { unbuildable: 'url.Parse rejects the URL (control character or bad %-escape)' };
    // Go writes header values trimmed of spaces and tabs.
    const headers = Object.fromEntries(Object.entries(withClientHeaders(own, placeholder.name)).map(([header, value]) => [header, value.replace(/^[ \t]+|[ \t]+$/g, '')]));
    const bad = Object.entries(headers).find(([, value]) => !validHeaderValue(value));
    if (bad) return { unbuildable: `net/http rejects the ${bad[0]} header value (control character)` };
    return { method, target: target.target, headers, ...(body === undefined ? {} : { body }), placement: PLACEHOLDER_PLACEMENT[placeholder.name]!, queryEscaped: target.queryEscaped };
  };
  switch (placeholder.name) {
    case 'URLParam':
      return build('GET', `/?${name}=${encoded}`, {});
    case 'URLPath':
      return build('GET', `/${encoded}`, {});
    case 'HTMLForm':
      return build('POST', '/', { 'content-type': 'application/x-www-form-urlencoded' }, `${name}=${encoded}`);
    case 'HTMLMultipartForm': {
      // Go's mime/multipart writer: a 60-hex-digit boundary, CRLF line ends, one form field.
      const boundary = randomHex(`${seed}|boundary`, 30);
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${encoded}\r\n--${boundary}--\r\n`;
      return build('POST', '/', { 'content-type': `multipart/form-data; boundary=${boundary}` }, body);
    }
    case 'JSONBody':
      return build('POST', '/', { 'content-type': 'application/json' }, encoded);
    case 'JSONRequest':
      return build('POST', '/', { 'content-type': 'application/json' }, `{"test": true, "${name}": "${ENCODERS.JSUnicode!.encode(encoded)}"}`);
    case 'XMLBody':
      return build('POST', '/', { 'content-type': 'application/xml' }, encoded);
    case 'SOAPBody':
      return build('POST', '/', { soapaction: '"http://schemas.xmlsoap.org/soap/actor/next"', 'content-type': 'text/xml' }, SOAP_ENVELOPE(`ab${name}`, ENCODERS.XMLEntity!.encode(encoded)));
    case 'Header':
      return build('GET', '/', { [`x-${name}`]: encoded });
    case 'UserAgent':
      return build('GET', '/', { 'user-agent': encoded });
    case 'RequestBody':
      return build('POST', '/', {}, encoded);
    case 'RawRequest': {
      const config = placeholder.config;
      if (!config) return { unbuildable: 'RawRequest without its settings' };
      // The payload is path-escaped in the URL, and goes as it is into headers and body.
      const path = config.path.replaceAll(PAYLOAD, pathEscape(encoded));
      const own = Object.fromEntries(Object.entries(config.headers).map(([header, value]) => [header, value.replaceAll(PAYLOAD, encoded)]));
      const body = config.body.replaceAll(PAYLOAD, encoded);
      return build(config.method, path.startsWith('/') ? path : `/${path}`, own, body === '' ? undefined : body);
    }
    default:
      return { unbuildable: `placeholder ${placeholder.name} is not sent over plain HTTP here` };
  }
}
