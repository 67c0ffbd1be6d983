// Reading a request body before the origin is contacted, within the body budget (body-admission.ts):
// chunks are held until the body ends (then inspected as needed and forwarded from memory), or
// until it passes the buffer cap (then the held chunks and the rest of the stream are forwarded,
// still watched). Every byte held is claimed from the client's and the gateway's budget, and a
// body must keep arriving at the minimum rate, while buffered and while streamed.
import { isHttp2Request, type GatewayRequest } from './exchange.ts';
import { Readable } from 'node:stream';
import type { AdmissionRefusal, BodyTicket } from './body-admission.ts';

/** Why a body was not read: too slow, over a budget, or the client went away. */
export type BodyRefusal = 'slow_body' | AdmissionRefusal | 'client_gone';

/**
 * A complete body; or the first `cap`-odd bytes (`head`) and a stream of the whole body for
 * forwarding; or why the body was not read.
 */
export type ReadBody = { complete: true; buffer: Buffer } | { complete: false; head: Buffer; stream: Readable } | { refused: BodyRefusal };

/** The error a streamed body fails with when its client sends too slowly (forward.ts answers 408). */
export class SlowBodyError extends Error {
  override name = 'SlowBodyError';
}

export interface BodyGuard {
  ticket: BodyTicket;
  minBytesPerSecond: number;
  graceMs: number;
}

export function hasBody(req: GatewayRequest): boolean {
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) return true;
  // HTTP/2 frames bodies itself: one without Content-Length (as chunked is in HTTP/1.1) is there
  // unless the request's HEADERS frame ended the stream.
  return length === undefined && isHttp2Request(req) && !req.stream.endAfterHeaders;
}

/** Whether `bytes` arriving over `elapsedMs` is slower than the guard allows (never within the grace period). */
const tooSlow = (guard: BodyGuard, bytes: number, elapsedMs: number): boolean => elapsedMs > guard.graceMs && bytes * 1000 < guard.minBytesPerSecond * elapsedMs;

export function readBody(req: GatewayRequest, cap: number, guard: BodyGuard): Promise<ReadBody> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: ReadBody) => {
      cleanup();
      resolve(result);
    };
    const watchdog = setInterval(() => {
      if (tooSlow(guard, size, Date.now() - started)) finish({ refused: 'slow_body' });
    }, 1_000);
    const onData = (chunk: Buffer) => {
      const over = guard.ticket.hold(chunk.length);
      if (over) return finish({ refused: over });
      chunks.push(chunk);
      size += chunk.length;
      if (size > cap) {
        req.pause();
        finish({ complete: false, head: Buffer.concat(chunks, size), stream: Readable.from(rest(chunks, req, guard, started, size)) });
      }
    };
    const onEnd = () => finish({ complete: true, buffer: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    const onGone = () => finish({ refused: 'client_gone' });
    const cleanup = () => {
      clearInterval(watchdog);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/** The held chunks, then the rest of the body, failing with SlowBodyError when it slows below the minimum. */
async function* rest(head: Buffer[], req: GatewayRequest, guard: BodyGuard, started: number, already: number): AsyncGenerator<Buffer> {
  yield* head;
  let size = already;
  const slow = new SlowBodyError('the request body arrived too slowly');
  const watchdog = setInterval(() => {
    if (tooSlow(guard, size, Date.now() - started)) req.destroy(slow);
  }, 1_000);
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  } catch (err) {
    throw req.errored === slow ? slow : err;
  } finally {
    clearInterval(watchdog);
  }
}

export function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}
