// The HTTP/1.1 server both listeners use — the plain port's, and the one TLS connections that
// negotiated http/1.1 (or no ALPN) are handed to — built the same way, so a request reads the same
// on either: node:http's parser and defaults, keep-alive, upgrades (WebSockets) to the request
// handler, and a bare 400 for what the parser refuses.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;

/**
 * The largest request head either protocol takes: HTTP/1.1's request line and header lines here,
 * HTTP/2's header list (SETTINGS_MAX_HEADER_LIST_SIZE, http2.ts). One figure, so a long URL or a
 * large cookie reaches the rules — and is blocked and recorded, or allowed — over both protocols
 * alike, instead of being refused unrecorded by one parser and inspected over the other.
 * node:http's own default (16 KiB) is below what HTTP/2 clients may send.
 */
export const MAX_REQUEST_HEAD_BYTES = 64 * 1024;

export function createHttp1Server(onRequest: (req: IncomingMessage, res: ServerResponse) => void, onUpgrade: UpgradeListener, log: Logger): Server {
  const server = createServer({ keepAliveTimeout: 65_000, maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, onRequest);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(req, socket, head).catch((err: unknown) => {
      log.error({ err }, 'shield: upgrade failed');
      socket.destroy();
    });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return;
    // A head past the limit is 431 (RFC 6585), as node:http itself answers; anything else the parser refuses, 400.
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
  return server;
}
