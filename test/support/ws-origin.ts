// A real WebSocket origin for gateway tests (the `ws` package on a node:http server): echoes every
// message as it came (text or binary), closes with a code when asked (`close:<code>`), and records
// the handshakes and closes it saw. A few paths misbehave on purpose: `/refuse` answers 403,
// `/silent` never answers, `/greet` sends a frame in the same write as its 101. Plain requests get
// their headers back as JSON.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';

export interface WsOrigin {
  url: string;
  port: number;
  handshakes: { url: string; headers: IncomingHttpHeaders }[];
  /** Closes seen by the origin's side of each connection. */
  closes: { url: string; code: number; reason: string }[];
  /** Plain (non-upgrade) requests. */
  requests: { url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** An unmasked text frame (server to client) of a short payload. */
export function serverTextFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  if (payload.length > 125) throw new Error('short frames only');
  return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
}

export async function startWsOrigin(): Promise<WsOrigin> {
  const handshakes: WsOrigin['handshakes'] = [];
  const closes: WsOrigin['closes'] = [];
  const requests: WsOrigin['requests'] = [];
  const sockets = new Set<Duplex>();
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    const url = req.url ?? '';
    handshakes.push({ url, headers: req.headers });
    socket.on('error', () => socket.destroy());
    if (url.startsWith('/refuse')) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Origin: yes\r\nContent-Length: 14\r\nConnection: close\r\n\r\norigin says no');
      return;
    }
    if (url.startsWith('/silent')) return;
    if (url.startsWith('/greet')) {
      const accept = createHash('sha1').update(`${String(req.headers['sec-websocket-key'])}${GUID}`).digest('base64');
      socket.write(Buffer.concat([Buffer.from(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`, 'latin1'), serverTextFrame('welcome')]));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data, isBinary) => {
        const text = isBinary ? '' : data.toString();
        if (text.startsWith('close:')) ws.close(Number(text.slice(6)), 'origin bye');
        else ws.send(data, { binary: isBinary });
      });
      ws.on('close', (code, reason) => closes.push({ url, code, reason: reason.toString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    handshakes,
    closes,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        wss.close();
        server.close(() => resolve());
      }),
  };
}
