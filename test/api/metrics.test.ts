// Observability end to end: the Prometheus endpoint on its own port (off by default, token-guarded
// when a token is set), series moving with API, gateway and job traffic; and OpenTelemetry spans
// arriving at a local OTLP/HTTP receiver.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, getJob } from '../../platform/jobs/queue.ts';
import { registerJobKind } from '../../platform/jobs/registry.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { eventually, viaGateway } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

registerJobKind<{ fail?: boolean }, string>('test.metrics', {
  async run(job) {
    if (job.payload.fail) throw new Error('failing on purpose');
    return 'ok';
  },
});

const TOKEN = 'metrics-test-token';

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('Prometheus metrics', () => {
  let t: TestServer;
  let origin: Origin;
  let metricsUrl: string;
  const scrape = async () => {
    const res = await fetch(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };

  beforeAll(async () => {
    origin = await startOrigin();
    t = await startTestServer({
      rateLimitPerMinute: 100_000,
      shieldEnabled: true,
      shieldPort: 0,
      trustedProxies: ['127.0.0.1', '::1'],
      metricsPort: 0,
      metricsHost: '127.0.0.1',
      metricsToken: TOKEN,
    });
    metricsUrl = t.server.metricsServer!.url;
  });
  afterAll(async () => {
    await t?.close();
    await origin?.close();
  });

  it('is served on its own port only, with the token', async () => {
    expect(t.server.metricsServer!.port).not.toBe(new URL(t.url).port);
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${metricsUrl}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${metricsUrl}/other`)).status).toBe(404);
    // The API port does not serve it, with or without a key.
    expect((await t.call('GET', '/metrics')).status).toBe(404);
    expect((await t.call('GET', '/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } })).status).not.toBe(200);
    const text = await scrape();
    expect(text).toContain('# TYPE aegis_http_requests_total counter');
    expect(text).toContain('aegis_process_cpu_user_seconds_total');
  });

  it('counts API requests by route pattern and status', async () => {
    const route = '/api/v1/shield/sites/:id';
    const before = sample(await scrape(), 'aegis_http_requests_total', { route, method: 'GET', status: '404' }) ?? 0;
    for (let i = 0; i < 3; i++) expect((await t.call('GET', `/api/v1/shield/sites/site_doesnotexist${i}`)).status).toBe(404);
    const text = await scrape();
    expect(sample(text, 'aegis_http_requests_total', { route, method: 'GET', status: '404' })).toBe(before + 3);
    expect(sample(text, 'aegis_http_request_duration_seconds_count', { route, method: 'GET', status: '404' })).toBe(before + 3);
    // Raw URLs never become labels.
    expect(text).not.toContain('site_doesnotexist');
  });

  it('counts gateway decisions by site, action and rule kind, and upstream latency', async () => {
    const host = 'metrics.gateway.test';
    const created = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', managed_rules: { enabled: false } } });
    expect(created.status, created.text).toBe(201);
    const site = created.body.id as string;
    const rule = await t.call('POST', `/api/v1/shield/sites/${site}/ip-access`, { body: { type: 'ip', value: '198.51.100.7', action: 'deny' } });
    expect(rule.status, rule.text).toBe(201);
    await t.server.gateway!.registry.refresh();
    expect(sample(await scrape(), 'aegis_shield_decisions_total', { site })).toBeUndefined();

    const gateway = t.server.gateway!.url;
    expect((await viaGateway(gateway, '/hello', { host, from: '192.0.2.1' })).status).toBe(200);
    expect((await viaGateway(gateway, '/hello', { host, from: '192.0.2.2' })).status).toBe(200);
    expect((await viaGateway(gateway, '/hello', { host, from: '198.51.100.7' })).status).toBe(403);
    const text = await scrape();
    expect(sample(text, 'aegis_shield_decisions_total', { site, action: 'allow', rule_kind: 'none' })).toBe(2);
    expect(sample(text, 'aegis_shield_decisions_total', { site, action: 'block', rule_kind: 'ip_access' })).toBe(1);
    expect(sample(text, 'aegis_shield_upstream_duration_seconds_count', { site, outcome: 'ok' })).toBe(2);
  });

  it('reports config repositories by the status of their last sync', async () => {
    const total = (text: string) => text.split('\n').filter((l) => l.startsWith('aegis_config_repos{')).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    const before = await scrape();
    expect(before).toContain('# TYPE aegis_config_repos gauge');
    const errors = sample(before, 'aegis_config_repos', { status: 'error' }) ?? 0;
    // A host that cannot resolve (RFC 6761 .invalid): the sync runs and ends in error.
    const created = await t.call('POST', '/api/v1/config-repos', { body: { name: 'metrics-config', url: 'https://git.metrics.invalid/config.git', poll_interval_seconds: 3600 } });
    expect(created.status).toBe(201);
    expect(total(await scrape())).toBe(total(before) + 1);
    await eventually(async () => sample(await scrape(), 'aegis_config_repos', { status: 'error' }) === errors + 1, 20_000);
  });

  it('counts job runs by kind and result, and reports the queue', async () => {
    const db = t.server.database.db;
    const before = await scrape();
    expect(sample(before, 'aegis_jobs_finished_total', { kind: 'test.metrics', result: 'completed' })).toBeUndefined();
    const ok = await enqueue(db, { kind: 'test.metrics', payload: {} });
    const bad = await enqueue(db, { kind: 'test.metrics', payload: { fail: true }, maxAttempts: 1 });
    await eventually(async () => (await getJob(db, ok.job.id))?.state === 'completed' && (await getJob(db, bad.job.id))?.state === 'dead', 10_000);
    await eventually(async () => sample(await scrape(), 'aegis_jobs_finished_total', { kind: 'test.metrics', result: 'failed' }) === 1, 5_000);
    const text = await scrape();
    expect(sample(text, 'aegis_jobs_finished_total', { kind: 'test.metrics', result: 'completed' })).toBe(1);
    expect(sample(text, 'aegis_job_duration_seconds_count', { kind: 'test.metrics', result: 'completed' })).toBe(1);
    expect(text).toContain('# TYPE aegis_jobs_queued gauge');
    expect(text).toContain('# TYPE aegis_jobs_oldest_queued_age_seconds gauge');
    expect(sample(text, 'aegis_scheduler_lag_seconds')).toBeGreaterThanOrEqual(0);

    // A job that cannot run yet shows in the queue depth of its kind.
    await enqueue(db, { kind: 'test.metrics.later', runAt: new Date(Date.now() + 3_600_000) });
    expect(sample(await scrape(), 'aegis_jobs_queued', { kind: 'test.metrics.later' })).toBe(1);
    if (t.server.database.kind === 'postgres') expect(sample(text, 'aegis_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
  });
});

describe('defaults', () => {
  it('serves no metrics unless a metrics port is set', async () => {
    const t = await startTestServer();
    try {
      expect(t.server.metricsServer).toBeUndefined();
      expect(t.server.observability.metrics).toBeUndefined();
      expect(t.server.observability.tracing).toBeUndefined();
      expect((await t.call('GET', '/metrics')).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});

describe('OpenTelemetry traces', () => {
  let receiver: Server;
  const posts: { path: string; contentType: string; body: string }[] = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posts.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('exports a span per API request and per job run over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    let t: TestServer;
    let jobId = '';
    try {
      t = await startTestServer();
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    }
    try {
      expect(t.server.observability.tracing).toBeDefined();
      expect(t.server.observability.metrics).toBeUndefined();
      expect((await t.call('GET', '/api/v1/shield/sites/site_nothere')).status).toBe(404);
      const { job } = await enqueue(t.server.database.db, { kind: 'test.metrics', payload: {} });
      jobId = job.id;
      await eventually(async () => (await getJob(t.server.database.db, job.id))?.state === 'completed', 10_000);
      await eventually(async () => {
        await t.server.observability.tracing!.flush();
        const all = posts.map((p) => p.body).join('\n');
        return all.includes('GET /api/v1/shield/sites/:id') && all.includes(job.id);
      }, 10_000, 100);
    } finally {
      await t.close();
    }
    expect(posts[0]!.path).toBe('/v1/traces');
    expect(posts[0]!.contentType).toContain('application/json');
    const spans = posts.flatMap((p) => (JSON.parse(p.body) as { resourceSpans: { scopeSpans: { spans: { name: string; attributes: { key: string; value: Record<string, unknown> }[] }[] }[] }[] }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const api = spans.find((s) => s.name === 'GET /api/v1/shield/sites/:id')!;
    expect(api).toBeDefined();
    const attr = (s: typeof api, key: string) => Object.values(s.attributes.find((a) => a.key === key)?.value ?? {})[0];
    expect(attr(api, 'http.route')).toBe('/api/v1/shield/sites/:id');
    expect(Number(attr(api, 'http.response.status_code'))).toBe(404);
    const run = spans.find((s) => s.name === 'job test.metrics' && attr(s, 'aegis.job.id') === jobId)!;
    expect(attr(run, 'aegis.job.outcome')).toBe('completed');
  });
});
