// What the gateway itself answers: block, rate-limit, unknown-host and upstream-error responses.
// HTML for browsers, the API's error envelope for clients that ask for JSON. Every answer names
// the request id so a blocked user can quote it to the site's operators.
import { closeConnection, isHttp2Response, type GatewayRequest, type GatewayResponse } from './exchange.ts';
import { hasBody } from './request-body.ts';

export interface GatewayAnswer {
  status: number;
  code: string;
  title: string;
  message: string;
  headers?: Record<string, string>;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function wantsJson(req: GatewayRequest): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

export function sendAnswer(req: GatewayRequest, res: GatewayResponse, answer: GatewayAnswer, requestId: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const json = wantsJson(req);
  const body = json
    ? JSON.stringify({ error: { code: answer.code, message: answer.message, request_id: requestId } })
    : `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(answer.title)}</title></head>` +
      `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">` +
      `<h1>${escapeHtml(answer.title)}</h1><p>${escapeHtml(answer.message)}</p>` +
      `<p style="color:#666;font-size:.85em">Request id: <code>${escapeHtml(requestId)}</code> · Aegis Shield</p></body></html>`;
  const headers: Record<string, string | number> = {
    // A body left unread (refused before it ended) would otherwise be read as the next request.
    ...(!req.complete && hasBody(req) ? closeConnection(res) : {}),
    'content-type': json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-request-id': requestId,
    ...answer.headers,
  };
  // HTTP/2 has no Connection header (an answer's `connection: close` means nothing there).
  if (isHttp2Response(res)) delete headers.connection;
  res.writeHead(answer.status, headers);
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

export const ANSWERS = {
  blocked: { status: 403, code: 'forbidden', title: 'Access denied', message: 'This request was blocked by the site’s security rules.' },
  rateLimited: (retryAfterSeconds: number): GatewayAnswer => ({
    status: 429,
    code: 'rate_limited',
    title: 'Too many requests',
    message: 'You have sent too many requests. Try again later.',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  unknownHost: { status: 421, code: 'misdirected_request', title: 'Unknown site', message: 'No site protected by this gateway serves this host name.' },
  misdirected: { status: 421, code: 'misdirected_request', title: 'Misdirected request', message: 'This connection was opened for another host name. Open a new connection for this one.' },
  badGateway: { status: 502, code: 'bad_gateway', title: 'Bad gateway', message: 'The site’s origin server could not be reached or answered incorrectly.' },
  gatewayTimeout: { status: 504, code: 'gateway_timeout', title: 'Gateway timeout', message: 'The site’s origin server did not answer in time.' },
  badRequest: { status: 400, code: 'bad_request', title: 'Bad request', message: 'The request could not be read.' },
  slowBody: { status: 408, code: 'request_timeout', title: 'Request timeout', message: 'The request body arrived too slowly.', headers: { connection: 'close' } },
  busy: { status: 503, code: 'unavailable', title: 'Busy', message: 'The site is receiving more uploads than it can take right now. Try again shortly.', headers: { 'retry-after': '5' } },
  badHost: { status: 400, code: 'bad_request', title: 'Bad request', message: 'The Host header must be a host name or address with an optional port, and nothing else.' },
  headersTooLarge: { status: 431, code: 'request_header_fields_too_large', title: 'Request headers too large', message: 'The request’s headers are larger than this gateway accepts.' },
  payloadTooLarge: { status: 413, code: 'payload_too_large', title: 'Request too large', message: 'The request body is larger than this site’s security checks accept.' },
  unsupportedMediaType: { status: 415, code: 'unsupported_media_type', title: 'Unsupported request encoding', message: 'The request body’s encoding or character set is not accepted by this site’s security checks.' },
} satisfies Record<string, GatewayAnswer | ((n: number) => GatewayAnswer)>;
