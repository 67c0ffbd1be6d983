// A real origin server for gateway tests: echoes what it received as JSON, with a few routes that
// misbehave on purpose (slow headers, a large streamed body).
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { listenOnLoopback } from './loopback.ts';

export interface Echo {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyLength: number;
  body: string;
  /** SHA-256 of the body bytes as received, hex: tests compare it with what the client sent. */
  bodySha256: string;
}

export interface Origin {
  url: string;
  /** Requests received so far. */
  received: Echo[];
  close(): Promise<void>;
}

export async function startOrigin(): Promise<Origin> {
  const received: Echo[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const echo: Echo = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        bodyLength: body.length,
        body: body.length <= 4096 ? body.toString('utf8') : '',
        bodySha256: createHash('sha256').update(body).digest('hex'),
      };
      received.push(echo);
      if (req.url?.startsWith('/slow')) {
        setTimeout(() => res.end('late'), 3_000).unref();
        return;
      }
      if (req.url?.startsWith('/big')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 64; i++) res.write(Buffer.alloc(16 * 1024, i));
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-origin-private', 'x-origin-private': 'hop', 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] });
      res.end(JSON.stringify(echo));
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, received, close };
}
