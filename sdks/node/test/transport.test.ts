// Transport conditions no real server produces on demand: a peer that never answers (timeouts are
// retried with the same Idempotency-Key, then APITimeoutError) and a refused connection.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Aegis, APIConnectionError, APITimeoutError } from '../src/index.ts';

let silent: Server;
let url: string;
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  silent = createServer((req) => {
    seen.push(req); // never answers
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
});

describe('transport', () => {
  it('retries a timed-out mutation with the same key, then throws APITimeoutError', async () => {
    const aegis = new Aegis({ apiKey: 'k', baseUrl: url, maxRetries: 1, timeoutMs: 1_000 });
    const error = await aegis.shieldSites.create({ domain: 'a.example.com', origin_url: 'https://o.example.com', mode: 'log' }, { requestId: 'req-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(seen).toHaveLength(2);
    const keys = seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(seen.every((r) => r.headers['x-request-id'] === 'req-1' && r.headers.authorization === 'Bearer k')).toBe(true);
  });

  it('a refused connection is an APIConnectionError; an abort is not retried', async () => {
    const refused = new Aegis({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    await expect(refused.shieldSites.get('site_x')).rejects.toBeInstanceOf(APIConnectionError);
    const before = seen.length;
    const controller = new AbortController();
    const pending = new Aegis({ apiKey: 'k', baseUrl: url, maxRetries: 3 }).shieldSites.get('site_x', { signal: controller.signal });
    // Abort once the request has arrived (a fixed delay may fire before it does on a busy machine).
    const abortOnArrival = (async () => {
      while (seen.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort(new Error('stop'));
    })();
    await expect(pending).rejects.toThrow('stop');
    await abortOnArrival;
    expect(seen.length - before).toBe(1);
  });
});
