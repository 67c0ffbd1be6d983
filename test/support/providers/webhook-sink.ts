// A local endpoint that keeps every webhook a stand-in delivers, as sent (headers and raw body),
// so a test can hand them to a connector's verify/read.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenOnLoopback } from '../loopback.ts';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

export async function startWebhookSink(): Promise<{ url: string; received: ReceivedWebhook[]; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  const listening = await listenOnLoopback(server);
  return { url: `${listening.url}/hook`, received, close: () => listening.close() };
}
