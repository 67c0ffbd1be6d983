// Reading a request body for inspection without holding more than the cap: chunks are collected
// until the body ends (inspected, then forwarded from memory) or passes the cap (then the collected
// chunks and the rest of the stream are available to forward, when the site only logs).
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

/** A complete body, or the first `cap`-odd bytes (`head`) and a stream of the whole body for forwarding. */
export type ReadBody = { complete: true; buffer: Buffer } | { complete: false; head: Buffer; stream: Readable };

export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

export function readBody(req: IncomingMessage, cap: number): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > cap) {
        cleanup();
        req.pause();
        resolve({ complete: false, head: Buffer.concat(chunks, size), stream: Readable.from(rest(chunks, req)) });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ complete: true, buffer: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

async function* rest(head: Buffer[], req: IncomingMessage): AsyncGenerator<Buffer> {
  yield* head;
  for await (const chunk of req) yield chunk as Buffer;
}

export function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}
