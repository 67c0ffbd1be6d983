// The typed REST client against a real server: typed CRUD, pagination cost, Idempotency-Key reuse
// across a lost response (a proxy in front of the real server), Retry-After, and the error type.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AegisApiError, createAegisClient, textBody, type AegisClient } from '../../client/client.ts';
import { backoffMs, retryAfterMs } from '../../client/transport.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let aegis: AegisClient;
beforeAll(async () => {
  t = await startTestServer();
  aegis = createAegisClient({ baseUrl: t.url, apiKey: t.adminKey, retryBaseMs: 10 });
});
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server; `handle` decides each answer. */
async function listen(handle: (seen: Seen, res: import('node:http').ServerResponse, req: import('node:http').IncomingMessage) => void | Promise<void>): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    seen.push(entry);
    await handle(entry, res, req);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const json = (res: import('node:http').ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('typed calls against the real server', () => {
  it('creates, lists, reads, updates and deletes a Shield site; writes carry a fresh Idempotency-Key, reads none', async () => {
    const sent: { method: string; key: string | null; auth: string | null }[] = [];
    const client = createAegisClient({
      baseUrl: t.url,
      apiKey: t.adminKey,
      fetch: (request) => {
        sent.push({ method: request.method, key: request.headers.get('idempotency-key'), auth: request.headers.get('authorization') });
        return fetch(request);
      },
    });

    const site = await client.POST('/api/v1/shield/sites', { body: { domain: 'typed.example.com', origin_url: 'https://origin.example.net', mode: 'block', labels: { team: 'web' } } });
    expect(site).toMatchObject({ domain: 'typed.example.com', mode: 'block', labels: { team: 'web' }, id: expect.stringMatching(/^site_/) });

    const listed = await client.listAll('/api/v1/shield/sites', { params: { query: { domain: 'typed.example.com' } } });
    expect(listed.items.map((s) => s.id)).toEqual([site.id]);

    expect(await client.GET('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } } })).toEqual(site);
    const updated = await client.PATCH('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } }, body: { mode: 'log' } });
    expect(updated).toMatchObject({ id: site.id, mode: 'log', labels: { team: 'web' } });

    expect(await client.DELETE('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } } })).toBeUndefined();
    const gone = await client.GET('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } } }).catch((err: unknown) => err);
    expect(gone).toBeInstanceOf(AegisApiError);
    expect(gone).toMatchObject({ status: 404, code: 'not_found' });

    expect(sent.map((s) => s.method)).toEqual(['POST', 'GET', 'GET', 'PATCH', 'DELETE', 'GET']);
    expect(sent.every((s) => s.auth === `Bearer ${t.adminKey}`)).toBe(true);
    const writes = sent.filter((s) => s.method !== 'GET');
    expect(writes.every((s) => s.key !== null && UUID.test(s.key))).toBe(true);
    expect(new Set(writes.map((s) => s.key)).size).toBe(writes.length);
    expect(sent.filter((s) => s.method === 'GET').every((s) => s.key === null)).toBe(true);
    expect(client.stats).toMatchObject({ requests: 6, reads: 3, writes: 3, retries: 0 });
  });

  it('uploads a Shield schema as YAML text', async () => {
    const site = await aegis.POST('/api/v1/shield/sites', { body: { domain: 'schema.example.com', origin_url: 'https://origin.example.net', mode: 'block' } });
    const yaml = 'openapi: 3.1.0\ninfo:\n  title: Pets\n  version: "1"\npaths:\n  /pets:\n    get:\n      responses:\n        "200":\n          description: ok\n';
    const schema = await aegis.PUT('/api/v1/shield/sites/{id}/schema', { params: { path: { id: site.id } }, ...textBody(yaml, 'application/yaml') });
    // Stored byte for byte: the server got the YAML text, not a JSON-encoded string.
    expect(schema).toMatchObject({ site_id: site.id, document: yaml, operations: [{ method: 'GET', path: '/pets' }] });
  });

  it('lists 450 IP rules in 3 requests at 200 a page (and in 9 at 50)', async () => {
    const site = await aegis.POST('/api/v1/shield/sites', { body: { domain: 'pages.example.com', origin_url: 'https://origin.example.net', mode: 'block' } });
    const csv = ['type,value,action,note', ...Array.from({ length: 450 }, (_, i) => `ip,10.1.${Math.floor(i / 250)}.${i % 250},deny,rule ${i}`)].join('\n');
    const imported = await aegis.POST('/api/v1/shield/sites/{id}/ip-access/import', { params: { path: { id: site.id } }, ...textBody(csv, 'text/csv') });
    expect(imported.created).toBe(450);

    const readsBefore = aegis.stats.reads;
    const all = await aegis.listAll('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: site.id } } });
    expect(all.items).toHaveLength(450);
    expect(new Set(all.items.map((rule) => rule.id)).size).toBe(450);
    expect(all.requests).toBe(3);
    expect(aegis.stats.reads - readsBefore).toBe(3);

    expect((await aegis.listAll('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: site.id } }, limit: 50 })).requests).toBe(9);

    // Filters pass through, and the iterator walks the same pages.
    const values: string[] = [];
    for await (const rule of aegis.iterate('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: site.id }, query: { action: 'deny', type: 'ip' } } })) values.push(rule.value);
    expect(values).toHaveLength(450);
    expect((await aegis.listAll('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: site.id }, query: { action: 'allow' } } })).items).toEqual([]);
  });

  it('throws AegisApiError with the envelope and the request id; a 4xx is not retried', async () => {
    const retriesBefore = aegis.stats.retries;
    const err = await aegis.POST('/api/v1/shield/sites', { body: { domain: 'Not A Domain', origin_url: 'ftp://x', mode: 'block' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AegisApiError);
    const apiError = err as AegisApiError;
    expect(apiError).toMatchObject({ status: 422, code: 'validation_failed', request: 'POST /api/v1/shield/sites' });
    const fields = (apiError.details.fields as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(['domain', 'origin_url']);
    expect(apiError.requestId).toMatch(/^\S{8,}$/);
    expect(t.logs.some((line) => line.includes(apiError.requestId!))).toBe(true);
    expect(apiError.message).toContain('422 validation_failed');
    expect(aegis.stats.retries).toBe(retriesBefore);

    // A real conflict (409 without our key in its details) is an answer, not a reason to retry.
    await aegis.POST('/api/v1/shield/sites', { body: { domain: 'twice.example.com', origin_url: 'https://o.example.net', mode: 'block' } });
    const conflict = await aegis.POST('/api/v1/shield/sites', { body: { domain: 'twice.example.com', origin_url: 'https://o.example.net', mode: 'log' } }).catch((e: unknown) => e);
    expect(conflict).toMatchObject({ status: 409, code: 'conflict', details: { field: 'domain' } });
    expect(aegis.stats.retries).toBe(retriesBefore);
  });
});

describe('retries', () => {
  it('a write whose response is lost is retried with the same Idempotency-Key and applied once', async () => {
    // A proxy in front of the real server that forwards the first attempt of each write, lets the
    // server apply it and answer, then drops the connection instead of passing the answer on.
    const attempts = new Map<string, number>();
    const replayed: (string | undefined)[] = [];
    const upstream = new URL(t.url);
    const proxy = await listen((seen, res) => {
      const key = seen.headers['idempotency-key'];
      const n = typeof key === 'string' ? (attempts.get(key) ?? 0) + 1 : 0;
      if (typeof key === 'string') attempts.set(key, n);
      const forward = httpRequest({ host: '127.0.0.1', port: upstream.port, method: seen.method, path: seen.url, headers: { ...seen.headers, host: upstream.host } }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          if (seen.method === 'POST' && n === 1) {
            res.socket?.destroy();
            return;
          }
          if (seen.method === 'POST') replayed.push(answer.headers['idempotent-replayed'] as string | undefined);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      });
      forward.end(seen.body);
    });
    try {
      const client = createAegisClient({ baseUrl: proxy.url, apiKey: t.adminKey, retryBaseMs: 10 });
      const site = await client.POST('/api/v1/shield/sites', { body: { domain: 'lost.example.com', origin_url: 'https://origin.example.net', mode: 'block' } });
      // Virtual patches have no natural key: without the Idempotency-Key a retry would make a second one.
      const patch = await client.POST('/api/v1/shield/sites/{id}/virtual-patches', {
        params: { path: { id: site.id } },
        body: { url_pattern: '/login', method: 'POST', match_param: 'user', match_regex: "'\\s*or\\s", action: 'block' },
      });

      const posts = proxy.seen.filter((s) => s.method === 'POST');
      expect(posts).toHaveLength(4);
      expect(posts[0]!.headers['idempotency-key']).toBe(posts[1]!.headers['idempotency-key']);
      expect(posts[2]!.headers['idempotency-key']).toBe(posts[3]!.headers['idempotency-key']);
      expect(posts[0]!.headers['idempotency-key']).not.toBe(posts[2]!.headers['idempotency-key']);
      // The retries were answered from the stored first answers, not applied again.
      expect(replayed).toEqual(['true', 'true']);
      expect(client.stats).toMatchObject({ writes: 4, retries: 2 });

      const sites = await aegis.listAll('/api/v1/shield/sites', { params: { query: { domain: 'lost.example.com' } } });
      expect(sites.items.map((s) => s.id)).toEqual([site.id]);
      const patches = await aegis.listAll('/api/v1/shield/sites/{id}/virtual-patches', { params: { path: { id: site.id } } });
      expect(patches.items.map((p) => p.id)).toEqual([patch.id]);
    } finally {
      await proxy.close();
    }
  });

  it('honours Retry-After on 429 and resends the same Idempotency-Key', async () => {
    const fake = await listen((seen, res) => {
      if (fake.seen.length === 1) return json(res, 429, { error: { code: 'rate_limited', message: 'slow down', details: {} } }, { 'retry-after': '1' });
      return json(res, 201, { id: 'site_fake', domain: 'x.example.com', origin_url: 'https://o', mode: 'block', labels: {}, created_at: '', updated_at: '' });
    });
    try {
      // retryBaseMs is tiny: any wait near a second can only come from Retry-After.
      const client = createAegisClient({ baseUrl: fake.url, apiKey: 'svc_live_test', retryBaseMs: 1 });
      const started = performance.now();
      const site = await client.POST('/api/v1/shield/sites', { body: { domain: 'x.example.com', origin_url: 'https://o', mode: 'block' } });
      const elapsed = performance.now() - started;
      expect(site.id).toBe('site_fake');
      expect(fake.seen).toHaveLength(2);
      const [first, second] = fake.seen;
      expect(first!.headers['idempotency-key']).toMatch(UUID);
      expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
      expect(second!.body).toBe(first!.body);
      expect(client.stats).toMatchObject({ requests: 2, writes: 2, retries: 1 });
      expect(client.stats.waitedMs).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeGreaterThanOrEqual(900);
    } finally {
      await fake.close();
    }
  });

  it('gives up after maxRetries on 503, and does not retry a 500', async () => {
    const fake = await listen((seen, res) => {
      if (seen.url.startsWith('/api/v1/me')) return json(res, 503, { error: { code: 'unavailable', message: 'closing', details: {} } });
      return json(res, 500, { error: { code: 'internal', message: 'boom', details: {} } });
    });
    try {
      const client = createAegisClient({ baseUrl: fake.url, apiKey: 'svc_live_test', maxRetries: 2, retryBaseMs: 1 });
      await expect(client.GET('/api/v1/me')).rejects.toMatchObject({ status: 503, code: 'unavailable' });
      expect(fake.seen).toHaveLength(3);
      await expect(client.GET('/api/v1/orgs/current')).rejects.toMatchObject({ status: 500, code: 'internal' });
      expect(fake.seen).toHaveLength(4);
      expect(client.stats).toMatchObject({ requests: 4, reads: 4, retries: 2 });
    } finally {
      await fake.close();
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and backs off exponentially with jitter', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    for (let retry = 0; retry < 5; retry++) {
      const step = 100 * 2 ** retry;
      const wait = backoffMs(retry, 100, 60_000);
      expect(wait).toBeGreaterThanOrEqual(step / 2);
      expect(wait).toBeLessThanOrEqual(step);
    }
    expect(backoffMs(20, 100, 5000)).toBeLessThanOrEqual(5000);
  });
});
