// Reading a request body for inspection without holding more than the cap: chunks are collected
// until the body ends (inspected, then forwarded from memory) or passes the cap (the collected
// chunks and the rest of the stream are forwarded uninspected).
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { BodyState } from '../inspected-request.ts';

export type ReadBody = { complete: true; buffer: Buffer } | { complete: false; stream: Readable };

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
        resolve({ complete: false, stream: Readable.from(rest(chunks, req)) });
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

/** Parses a complete body of an inspectable type. */
export function parseBody(contentType: string, buffer: Buffer): { state: BodyState; json?: unknown; form?: URLSearchParams } {
  if (buffer.length === 0) return { state: 'none' };
  if (contentType === 'application/json' || contentType.endsWith('+json')) {
    try {
      return { state: 'json', json: JSON.parse(buffer.toString('utf8')) };
    } catch {
      return { state: 'unparsable' };
    }
  }
  if (contentType === 'application/x-www-form-urlencoded') return { state: 'form', form: new URLSearchParams(buffer.toString('utf8')) };
  return { state: 'other' };
}

export function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}
