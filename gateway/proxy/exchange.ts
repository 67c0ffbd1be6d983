// A client's request and our response, whichever protocol carried them: node:http's for HTTP/1.1
// (the plain listener, and TLS connections that negotiated http/1.1) or node:http2's compatibility
// objects for HTTP/2. The request handler and the modules it calls use only what both have; an
// HTTP/2 request's headers were already rewritten as HTTP/1.1 would carry them (edge/h2-request.ts),
// so rules never see a pseudo-header or a protocol difference.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

export type GatewayRequest = IncomingMessage | Http2ServerRequest;
export type GatewayResponse = ServerResponse | Http2ServerResponse;

export function isHttp2Request(req: GatewayRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2;
}

export function isHttp2Response(res: GatewayResponse): res is Http2ServerResponse {
  return 'stream' in res;
}

/**
 * `Connection: close` where the protocol has it. HTTP/2 forbids connection-specific headers (node
 * throws on them): a stream ends with its response, and the connection carries on.
 */
export function closeConnection(res: GatewayResponse): Record<string, string> {
  return isHttp2Response(res) ? {} : { connection: 'close' };
}
