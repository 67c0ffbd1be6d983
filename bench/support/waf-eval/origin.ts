// The origin behind every WAF under test: answers 200 to whatever it is sent, with a header that
// says the answer is its own. A response without that header was written by the WAF in front (or
// by its HTTP parser), so "blocked" never depends on guessing which status codes a WAF uses, and an
// origin's own 400 for a URL it cannot parse cannot pass for a block. Node's HTTP parser (the one
// the gateway uses, lenient here), in a worker thread so it does not share the gateway's event loop.
import { Worker } from 'node:worker_threads';

/** The response header only the origin sets. */
export const ORIGIN_HEADER = 'x-eval-origin';

const SERVER = `
const { createServer } = require('node:http');
const { parentPort, workerData: count } = require('node:worker_threads');
const ports = [];
for (let i = 0; i < count; i++) {
  const server = createServer({ insecureHTTPParser: true, maxHeaderSize: 1024 * 1024, keepAliveTimeout: 120000, requestTimeout: 0 }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain', '${ORIGIN_HEADER}': '1' }).end('ok\\n'));
  });
  server.headersTimeout = 130000;
  server.listen(0, '127.0.0.1', () => {
    ports.push(server.address().port);
    if (ports.length === count) parentPort.postMessage(ports);
  });
}
`;

export interface Origin {
  /** The same origin on `count` ports. */
  ports: number[];
  close(): Promise<void>;
}

/**
 * The origin, listening on `count` ports: the gateway keeps one connection pool per origin URL and
 * refuses a client more than its share of one pool (proxy/forward.ts), so sites that one client
 * loads at once each get their own port.
 */
export async function startOrigin(count = 1): Promise<Origin> {
  const worker = new Worker(SERVER, { eval: true, workerData: count });
  const ports = await new Promise<number[]>((resolve, reject) => {
    worker.once('message', (value: number[]) => resolve(value));
    worker.once('error', reject);
  });
  return { ports, close: async () => void (await worker.terminate()) };
}
