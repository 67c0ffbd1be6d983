// Request ids: taken from an incoming X-Request-Id when it is a plain token (so ids from a load
// balancer carry through), otherwise generated; echoed on every response and in every log line.
import type { IncomingMessage } from 'node:http';
import { randomHex } from '../ids.ts';

const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export const newRequestId = (): string => `req_${randomHex(12)}`;

export function requestIdFor(req: Pick<IncomingMessage, 'headers'>): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  return newRequestId();
}
