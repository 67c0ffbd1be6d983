// Outbound webhook deliveries end to end: real receivers (node:http on 127.0.0.1) get events raised
// through the API (creating an API key raises `api_key.created`), and the delivery log, redelivery,
// test pings, secret rotation, timeouts, redirects, disabling and the delivery-time address check
// are observed through HTTP. On PostgreSQL, real `aegis worker` processes show that two workers
// never deliver one attempt twice and that a killed worker's deliveries still arrive.
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyServiceSignature } from '../../api/webhooks/signature.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { eventually } from '../support/gateway.ts';
import { spawnWorker } from '../support/worker-process.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const postgres = inject('databaseTemplate').kind === 'postgres';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1; `answer` decides each response (by default 200 "ok"). */
async function startReceiver(answer: (req: Received, n: number, res: ServerResponse) => void = (_r, _n, res) => res.end('ok'), port = 0): Promise<Receiver> {
  const requests: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(received);
      answer(received, requests.length, res);
    });
  });
  await new Promise<void>((ready) => server.listen(port, '127.0.0.1', ready));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const status = (code: number) => (_r: Received, _n: number, res: ServerResponse) => {
  res.statusCode = code;
  res.end(`status ${code}`);
};

/** A port nothing listens on (listened on and closed again). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

const receivers: Receiver[] = [];
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

async function createWebhook(server: TestServer, url: string, events = ['api_key.created']): Promise<{ id: string; secret: string }> {
  const res = await server.call('POST', '/api/v1/webhooks', { body: { url, events } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Raises one `api_key.created` event. */
async function trigger(server: TestServer, name = 'webhook trigger'): Promise<void> {
  const res = await server.call('POST', '/api/v1/api-keys', { body: { name, scopes: ['scans:read'] } });
  expect(res.status, res.text).toBe(201);
}

async function onlyDelivery(server: TestServer, webhookId: string) {
  const list = await server.call('GET', `/api/v1/webhooks/${webhookId}/deliveries`);
  expect(list.status, list.text).toBe(200);
  expect(list.body.data).toHaveLength(1);
  return list.body.data[0];
}

const detail = async (server: TestServer, webhookId: string, deliveryId: string) => (await server.call('GET', `/api/v1/webhooks/${webhookId}/deliveries/${deliveryId}`)).body;

/** Waits for the webhook's single delivery to satisfy `check`, and returns its detail. */
async function deliveryWhen(server: TestServer, webhookId: string, check: (d: any) => boolean, timeoutMs = 10_000) {
  let last: any;
  await eventually(async () => {
    const list = await server.call('GET', `/api/v1/webhooks/${webhookId}/deliveries`);
    const first = list.body.data?.[0];
    if (!first) return false;
    last = await detail(server, webhookId, first.id);
    return check(last);
  }, timeoutMs, 50).catch((err: Error) => {
    throw new Error(`${err.message}; last: ${JSON.stringify(last)}`);
  });
  return last;
}

const v1Count = (header: string | string[] | undefined) => String(header).split(',').filter((p) => p.startsWith('v1=')).length;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ allowPrivateTargets: true, webhookRetryDelaysMs: [200, 200, 200], rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  await t?.close();
  await Promise.all(receivers.map((r) => r.close()));
});
// Every webhook of the organisation gets every api_key.created event: each test starts with none.
afterEach(async () => {
  const list = await t.call('GET', '/api/v1/webhooks?limit=200');
  for (const w of list.body.data as { id: string }[]) await t.call('DELETE', `/api/v1/webhooks/${w.id}`);
});

describe('webhook deliveries', () => {
  it('retries on the schedule with the same event id, logs every attempt, and redelivers on request', async () => {
    const r = await receiver((req, n, res) => status(n <= 2 ? 500 : 200)(req, n, res));
    const { id, secret } = await createWebhook(t, `${r.url}/hook`);
    await trigger(t);
    await eventually(async () => r.requests.length >= 3, 10_000);
    const eventIds = new Set(r.requests.map((q) => q.headers['x-service-event-id']));
    expect(eventIds.size).toBe(1);
    expect(r.requests.map((q) => q.headers['x-service-delivery-attempt'])).toEqual(['1', '2', '3']);
    for (const q of r.requests) {
      expect(q.headers['content-type']).toBe('application/json');
      expect(q.headers['user-agent']).toBe('Aegis-Webhooks/1');
      expect(q.headers['x-service-event-type']).toBe('api_key.created');
      expect(verifyServiceSignature(q.body, q.headers['x-service-signature'] as string, secret)).toBe(true);
      const body = JSON.parse(q.body);
      expect(body).toMatchObject({ id: q.headers['x-service-event-id'], object: 'event', type: 'api_key.created' });
    }

    const summary = await onlyDelivery(t, id);
    const delivered = await deliveryWhen(t, id, (d) => d.status === 'succeeded');
    expect(delivered).toMatchObject({ id: summary.id, event_id: [...eventIds][0], event_type: 'api_key.created', attempt_count: 3, response_status: 200, response_body: 'status 200', error: null, next_attempt_at: null });
    expect(r.requests[0]!.headers['x-service-delivery-id']).toBe(summary.id);
    expect(delivered.attempts.map((a: { response_status: number }) => a.response_status)).toEqual([500, 500, 200]);
    expect(delivered.attempts.map((a: { trigger: string }) => a.trigger)).toEqual(['automatic', 'automatic', 'automatic']);
    expect(delivered.attempts.map((a: { succeeded: boolean }) => a.succeeded)).toEqual([false, false, true]);
    expect(delivered.attempts[0].error).toContain('500');

    // filters
    expect((await t.call('GET', `/api/v1/webhooks/${id}/deliveries?status=failed`)).body.data).toHaveLength(0);
    expect((await t.call('GET', `/api/v1/webhooks/${id}/deliveries?status=succeeded&event_type=api_key.created`)).body.data).toHaveLength(1);
    expect((await t.call('GET', `/api/v1/webhooks/${id}/deliveries?event_type=scan.completed`)).body.data).toHaveLength(0);

    const again = await t.call('POST', `/api/v1/webhooks/${id}/deliveries/${summary.id}/redeliver`);
    expect(again.status, again.text).toBe(202);
    await eventually(async () => r.requests.length >= 4, 10_000);
    const fourth = r.requests[3]!;
    expect(fourth.headers['x-service-event-id']).toBe([...eventIds][0]);
    expect(fourth.headers['x-service-delivery-attempt']).toBe('4');
    expect(verifyServiceSignature(fourth.body, fourth.headers['x-service-signature'] as string, secret)).toBe(true);
    const after = await deliveryWhen(t, id, (d) => d.attempts.length === 4);
    expect(after.attempts[3]).toMatchObject({ trigger: 'manual', succeeded: true, response_status: 200 });
    expect(after.status).toBe('succeeded');
    expect((await t.call('POST', `/api/v1/webhooks/${id}/deliveries/whd_01jxxxxxxxxxxxxxxxxxxxxxxx/redeliver`)).status).toBe(404);
  });

  it('sends a signed ping to the webhook on /test, synchronously, even when it is disabled', async () => {
    const r = await receiver();
    const { id, secret } = await createWebhook(t, `${r.url}/ping`);
    const res = await t.call('POST', `/api/v1/webhooks/${id}/test`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'webhook_delivery', webhook_id: id, event_type: 'ping', status: 'succeeded', attempt_count: 1, response_status: 200 });
    expect(r.requests).toHaveLength(1);
    const ping = r.requests[0]!;
    expect(ping.headers['x-service-event-type']).toBe('ping');
    expect(verifyServiceSignature(ping.body, ping.headers['x-service-signature'] as string, secret)).toBe(true);
    expect(JSON.parse(ping.body).data.object).toMatchObject({ object: 'ping', webhook_id: id });
    const log = await detail(t, id, res.body.id);
    expect(log.attempts).toEqual([expect.objectContaining({ trigger: 'test', succeeded: true })]);

    await t.call('PATCH', `/api/v1/webhooks/${id}`, { body: { enabled: false } });
    expect((await t.call('POST', `/api/v1/webhooks/${id}/test`)).body.status).toBe('succeeded');
    expect(r.requests).toHaveLength(2);
  });

  it('signs with both secrets after a rotation, until the previous one expires', async () => {
    const r = await receiver();
    const { id, secret: first } = await createWebhook(t, `${r.url}/rotate`);
    // No body: the defaults (the previous secret signs for 24 hours).
    const rotated = await t.call('POST', `/api/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(200);
    const second = rotated.body.secret as string;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect(rotated.body.secret_last4).toBe(second.slice(-4));
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect((await t.call('GET', `/api/v1/webhooks/${id}`)).text).not.toContain(second);

    await trigger(t);
    await eventually(async () => r.requests.length >= 1, 10_000);
    const both = r.requests[0]!;
    expect(v1Count(both.headers['x-service-signature'])).toBe(2);
    expect(verifyServiceSignature(both.body, both.headers['x-service-signature'] as string, first)).toBe(true);
    expect(verifyServiceSignature(both.body, both.headers['x-service-signature'] as string, second)).toBe(true);

    const third = (await t.call('POST', `/api/v1/webhooks/${id}/rotate-secret`, { body: { expire_previous_in_hours: 0 } })).body;
    expect(third.previous_secret_expires_at).toBeNull();
    await trigger(t);
    await eventually(async () => r.requests.length >= 2, 10_000);
    const one = r.requests[1]!;
    expect(v1Count(one.headers['x-service-signature'])).toBe(1);
    expect(verifyServiceSignature(one.body, one.headers['x-service-signature'] as string, third.secret)).toBe(true);
    expect(verifyServiceSignature(one.body, one.headers['x-service-signature'] as string, second)).toBe(false);

    expect((await t.call('POST', `/api/v1/webhooks/${id}/rotate-secret`, { body: { expire_previous_in_hours: 25 } })).status).toBe(422);
    const audit = await t.call('GET', '/api/v1/audit-log?action=webhook.secret_rotated');
    expect(audit.status, audit.text).toBe(200);
    expect(audit.body.data.length).toBeGreaterThanOrEqual(2);
    expect(audit.text).not.toContain(second);
    expect(audit.text).not.toContain(first);
  });

  it('does not follow a redirect: a 302 is a failed attempt', async () => {
    const r = await receiver((req, _n, res) => {
      if (req.path === '/moved') return status(200)(req, _n, res);
      res.writeHead(302, { location: '/moved' });
      res.end();
    });
    const { id } = await createWebhook(t, `${r.url}/redirecting`);
    await trigger(t);
    const log = await deliveryWhen(t, id, (d) => d.attempts.length >= 1);
    expect(log.attempts[0]).toMatchObject({ succeeded: false, response_status: 302 });
    expect(log.attempts[0].error).toMatch(/redirect/);
    expect(r.requests.every((q) => q.path === '/redirecting')).toBe(true);
  });

  it('marks a delivery failed once every attempt has failed', async () => {
    const r = await receiver(status(503));
    const { id } = await createWebhook(t, `${r.url}/down`);
    await trigger(t);
    const log = await deliveryWhen(t, id, (d) => d.status === 'failed');
    expect(log).toMatchObject({ attempt_count: 4, next_attempt_at: null, response_status: 503 });
    expect(r.requests).toHaveLength(4);
    // The default 3-day limit is far off: the webhook stays enabled, failing since the first attempt.
    const webhook = (await t.call('GET', `/api/v1/webhooks/${id}`)).body;
    expect(webhook).toMatchObject({ enabled: true, disabled_reason: null });
    expect(webhook.failing_since).not.toBeNull();
  });
});

describe('timeouts and disabling', () => {
  let t2: TestServer;
  beforeAll(async () => {
    t2 = await startTestServer({ allowPrivateTargets: true, webhookTimeoutMs: 300, webhookDisableAfterMs: 1, webhookRetryDelaysMs: [200, 200, 200], rateLimitPerMinute: 100_000 });
  });
  afterAll(() => t2?.close());

  it('fails an attempt that takes longer than the timeout', async () => {
    const r = await receiver((_req, _n, res) => void setTimeout(() => res.end('late'), 1_500));
    const { id } = await createWebhook(t2, `${r.url}/slow`);
    await trigger(t2);
    const log = await deliveryWhen(t2, id, (d) => d.attempts.length >= 1);
    expect(log.attempts[0]).toMatchObject({ succeeded: false, response_status: null });
    expect(log.attempts[0].error).toMatch(/timed out after 300 ms/);
    expect(log.attempts[0].duration_ms).toBeLessThan(1_400);
    await t2.call('DELETE', `/api/v1/webhooks/${id}`);
  });

  it('disables a webhook whose deliveries keep failing, with an event; enabling it again clears the reason', async () => {
    const r = await receiver(status(500));
    const { id } = await createWebhook(t2, `${r.url}/failing`);
    await trigger(t2);
    let webhook: any;
    await eventually(async () => {
      webhook = (await t2.call('GET', `/api/v1/webhooks/${id}`)).body;
      return webhook.enabled === false;
    }, 10_000);
    expect(webhook.disabled_reason).toMatch(/^every delivery failed since \S+; last error: the endpoint answered 500/);
    expect(webhook.failing_since).not.toBeNull();
    const events = await t2.call('GET', '/api/v1/events?type=webhook.disabled');
    expect(events.status, events.text).toBe(200);
    expect(events.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toContain(id);
    // The delivery ends without further requests once the webhook is disabled.
    const log = await deliveryWhen(t2, id, (d) => d.status === 'failed');
    expect(log.error).toBe('webhook disabled');
    expect(r.requests.length).toBeLessThan(4);

    const enabled = await t2.call('PATCH', `/api/v1/webhooks/${id}`, { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  });
});

describe('the address check at delivery time', () => {
  let t3: TestServer;
  let dns: DnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
    t3 = await startTestServer({ rateLimitPerMinute: 100_000, webhookDnsServers: [dns.server] });
  });
  afterAll(async () => {
    await t3?.close();
    await dns?.close();
  });

  it('refuses a name that resolves to a private address when the delivery is made (DNS rebinding)', async () => {
    // A public address at save time. Not 203.0.113.10: TEST-NET-3 is in the refused ranges
    // (platform/net/address-policy.ts), so the save-time check rightly refuses it.
    dns.set('hooks.rebind.test', ['93.184.215.14']);
    const saved = await t3.call('POST', '/api/v1/webhooks', { body: { url: 'https://hooks.rebind.test/x', events: ['api_key.created'] } });
    expect(saved.status, saved.text).toBe(201);
    dns.set('hooks.rebind.test', ['127.0.0.1']);
    await trigger(t3);
    const log = await deliveryWhen(t3, saved.body.id, (d) => d.attempts.length >= 1);
    expect(log.attempts[0]).toMatchObject({ succeeded: false, response_status: null });
    expect(log.attempts[0].error).toContain('127.0.0.1');
    expect(log.attempts[0].error).toMatch(/private/);
    expect(dns.queries).toContain('A hooks.rebind.test');
  });

  it('refuses a literal private address and plain http without connecting', async () => {
    const r = await receiver();
    // Saved through the database: the API refuses such URLs at save time.
    const { id } = await createWebhook(t3, 'https://93.184.215.14/hook');
    await t3.server.database.db.updateTable('webhooks').set({ url: `${r.url}/literal` }).where('id', '=', id).execute();
    const res = await t3.call('POST', `/api/v1/webhooks/${id}/test`);
    expect(res.body).toMatchObject({ status: 'failed', response_status: null });
    expect(res.body.error).toMatch(/https/);
    await t3.server.database.db.updateTable('webhooks').set({ url: `https://127.0.0.1:${r.port}/literal` }).where('id', '=', id).execute();
    const literal = await t3.call('POST', `/api/v1/webhooks/${id}/test`);
    expect(literal.body.error).toContain('127.0.0.1');
    expect(r.requests).toHaveLength(0);
  });
});

describe.skipIf(!postgres)('deliveries by `aegis worker` processes (PostgreSQL)', () => {
  let t4: TestServer;
  const workers: ChildProcess[] = [];

  function startWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
    const settings = {
      AEGIS_FROM_SOURCE: '1',
      AEGIS_JOB_LEASE_MS: '2000',
      AEGIS_ALLOW_PRIVATE_TARGETS: 'true',
      AEGIS_WEBHOOK_RETRY_DELAYS_MS: '200,200,200',
      AEGIS_WORKER_CONCURRENCY: '16',
      AEGIS_LOG_LEVEL: 'warn',
    };
    return spawnWorker(t4.database, { ...settings, ...env }, (child) => workers.push(child));
  }

  async function stopWorkers(): Promise<void> {
    await Promise.all(
      workers.splice(0).map(async (w) => {
        if (w.exitCode !== null || w.signalCode !== null) return;
        const exited = new Promise((done) => w.once('exit', done));
        w.kill('SIGTERM');
        await exited;
      }),
    );
  }

  beforeAll(async () => {
    // This server runs no worker of its own: only the processes below deliver.
    process.env.AEGIS_WORKER = 'false';
    try {
      t4 = await startTestServer({ allowPrivateTargets: true, webhookRetryDelaysMs: [200, 200, 200], rateLimitPerMinute: 100_000 });
    } finally {
      delete process.env.AEGIS_WORKER;
    }
  }, 60_000);
  afterAll(async () => {
    await stopWorkers();
    await t4?.close();
  });
  afterEach(async () => {
    await stopWorkers();
    const list = await t4.call('GET', '/api/v1/webhooks?limit=200');
    for (const w of list.body.data as { id: string }[]) await t4.call('DELETE', `/api/v1/webhooks/${w.id}`);
  });

  it('two workers deliver each of 30 events exactly once', async () => {
    // A slow receiver, a backlog and few deliveries at once per worker: the backlog outlasts both
    // workers' start-up, so they compete for the same queue throughout.
    const r = await receiver((_req, _n, res) => void setTimeout(() => res.end('ok'), 400));
    const { id } = await createWebhook(t4, `${r.url}/pair`);
    for (let i = 0; i < 30; i++) await trigger(t4, `pair ${i}`);
    const pair = await Promise.all([startWorker({ AEGIS_WORKER_CONCURRENCY: '3' }), startWorker({ AEGIS_WORKER_CONCURRENCY: '3' })]);
    await eventually(async () => new Set(r.requests.map((q) => q.headers['x-service-event-id'])).size >= 30, 30_000, 50);
    // Time for a duplicate to show up, were there one.
    await new Promise((done) => setTimeout(done, 1_500));
    const ids = r.requests.map((q) => q.headers['x-service-event-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const db = t4.server.database.db;
    const attempts = await db
      .selectFrom('webhook_delivery_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_delivery_attempts.delivery_id')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('webhook_deliveries.webhook_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Number(attempts.n)).toBe(30);
    // Both took part (the lease owner is `<host>:<pid>:…`).
    const owners = await db.selectFrom('jobs').select('lease_owner').where('kind', '=', 'webhook.deliver').execute();
    const pids = new Set(owners.map((o) => o.lease_owner?.split(':')[1]));
    expect([...pids].sort()).toEqual(pair.map((w) => String(w.pid)).sort());
    const succeeded = await t4.call('GET', `/api/v1/webhooks/${id}/deliveries?status=succeeded&limit=100`);
    expect(succeeded.body.data).toHaveLength(30);
  }, 90_000);

  it('delivers an event later when the receiver was down and the worker was killed meanwhile', async () => {
    const port = await closedPort();
    const { id } = await createWebhook(t4, `http://127.0.0.1:${port}/later`);
    // Retries a few seconds apart: enough to kill the worker and bring the receiver up in between.
    const slow = { AEGIS_WEBHOOK_RETRY_DELAYS_MS: '3000,3000,3000,3000' };
    const first = await startWorker(slow);
    await trigger(t4);
    const db = t4.server.database.db;
    await eventually(async () => {
      const d = await db.selectFrom('webhook_deliveries').select('attempts').where('webhook_id', '=', id).executeTakeFirst();
      return (d?.attempts ?? 0) >= 1;
    }, 15_000, 50);
    const failed = await detail(t4, id, (await onlyDelivery(t4, id)).id);
    expect(failed.status).toBe('pending');
    expect(failed.attempts[0].error).toMatch(/ECONNREFUSED|connect/);
    const dead = new Promise((done) => first.once('exit', done));
    first.kill('SIGKILL');
    await dead;

    const r = await receiver(undefined, port);
    await startWorker(slow);
    await eventually(async () => r.requests.length >= 1, 30_000, 50);
    expect(r.requests[0]!.headers['x-service-event-type']).toBe('api_key.created');
    const done = await deliveryWhen(t4, id, (d) => d.status === 'succeeded', 10_000);
    expect(done.attempts.at(-1)).toMatchObject({ succeeded: true, response_status: 200 });
  }, 90_000);
});
