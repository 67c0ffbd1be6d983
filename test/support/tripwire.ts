// An "internal service" for SSRF tests: an HTTP server on a loopback address (127.0.0.1, or
// 127.0.0.2, which Linux routes to lo as well) that answers every request with a secret and counts
// every TCP connection made to it — a test asserts that the server under attack never connected.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Tripwire {
  /** http://host:port */
  url: string;
  host: string;
  port: number;
  /** TCP connections accepted so far (any protocol: git://, ssh and HTTP all count). */
  connections: number;
  /** Request lines received (`GET /path`). */
  requests: string[];
  close(): Promise<void>;
}

export const INTERNAL_SECRET = 'internal-secret-AKIAQQQQ7MXRWZ2ELXGA';

export async function startTripwire(host = '127.0.0.1', answer?: (req: IncomingMessage, res: ServerResponse) => void): Promise<Tripwire> {
  const state = { connections: 0, requests: [] as string[] };
  const server = createServer((req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    if (answer) return answer(req, res);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: INTERNAL_SECRET, object: 'model', created: 0, owned_by: 'internal' }], secret: INTERNAL_SECRET }));
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    get connections() {
      return state.connections;
    },
    requests: state.requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
