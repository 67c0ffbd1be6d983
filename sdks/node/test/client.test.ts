// The Node SDK against a real Aegis server: CRUD of every managed kind, pagination, retries after
// 429 and after a dropped connection (same Idempotency-Key), typed errors, uploads, the live stream.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { Aegis, APIConnectionError, NotFoundError, RateLimitError, ValidationError, type ShieldDecision, type ShieldSite } from '../src/index.ts';

const execFileAsync = promisify(execFile);

let server: TestServer;
let aegis: Aegis;

beforeAll(async () => {
  server = await startTestServer({
    rateLimitWindowMs: 1000,
    rateLimitPerMinute: 10_000,
    analyticsRateLimitPerMinute: 2,
    shieldEnabled: true,
    shieldPort: 0,
    trustedProxies: ['127.0.0.1', '::1'],
    allowLocalSources: true,
    allowPrivateTargets: true,
  });
  aegis = new Aegis({ apiKey: server.adminKey, baseUrl: server.url });
});

afterAll(async () => {
  await server?.close();
});

let domainCounter = 0;
const newDomain = () => `sdk-node-${process.pid}-${++domainCounter}.example.com`;
const newSite = (): Promise<ShieldSite> => aegis.shieldSites.create({ domain: newDomain(), origin_url: 'http://127.0.0.1:9', mode: 'block' });

describe('CRUD of every managed kind', () => {
  it('Shield sites', async () => {
    const domain = newDomain();
    const site = await aegis.shieldSites.create({ domain, origin_url: 'http://127.0.0.1:9', mode: 'log' });
    expect(site.domain).toBe(domain);
    expect((await aegis.shieldSites.get(site.id)).id).toBe(site.id);
    const listed = await collect(aegis.shieldSites.list({ domain }));
    expect(listed.map((s) => s.id)).toContain(site.id);
    expect((await aegis.shieldSites.update(site.id, { mode: 'block' })).mode).toBe('block');
    await aegis.shieldSites.delete(site.id);
    await expect(aegis.shieldSites.get(site.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('IP access rules', async () => {
    const site = await newSite();
    const rule = await aegis.ipAccessRules.create(site.id, { type: 'ip', value: '203.0.113.7', action: 'deny' });
    expect((await aegis.ipAccessRules.get(site.id, rule.id)).value).toBe('203.0.113.7');
    expect((await aegis.ipAccessRules.list(site.id)).data.map((r) => r.id)).toEqual([rule.id]);
    expect((await aegis.ipAccessRules.update(site.id, rule.id, { action: 'challenge' })).action).toBe('challenge');
    await aegis.ipAccessRules.delete(site.id, rule.id);
    await expect(aegis.ipAccessRules.get(site.id, rule.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('virtual patches', async () => {
    const site = await newSite();
    const patch = await aegis.virtualPatches.create(site.id, { url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: 'union\\s+select', action: 'block' });
    expect((await aegis.virtualPatches.get(site.id, patch.id)).url_pattern).toBe('/search');
    expect((await aegis.virtualPatches.list(site.id)).data.map((p) => p.id)).toContain(patch.id);
    expect((await aegis.virtualPatches.update(site.id, patch.id, { labels: { team: 'sdk' } })).labels).toEqual({ team: 'sdk' });
    await aegis.virtualPatches.delete(site.id, patch.id);
    await expect(aegis.virtualPatches.get(site.id, patch.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('rate-limit rules', async () => {
    const site = await newSite();
    const rule = await aegis.rateLimitRules.create(site.id, { identity: 'ip', url_pattern: '/login', method: 'POST', budget: 10, window_seconds: 60, action: 'block' });
    expect((await aegis.rateLimitRules.get(site.id, rule.id)).budget).toBe(10);
    expect((await aegis.rateLimitRules.list(site.id)).data.map((r) => r.id)).toContain(rule.id);
    expect((await aegis.rateLimitRules.update(site.id, rule.id, { budget: 20 })).budget).toBe(20);
    await aegis.rateLimitRules.delete(site.id, rule.id);
    await expect(aegis.rateLimitRules.get(site.id, rule.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('scan schedules', async () => {
    const schedule = await aegis.scanSchedules.create({ name: `nightly-${process.pid}`, scan_type: 'secrets', target: 'https://github.com/example/repo.git', cron: '0 3 * * *' });
    expect((await aegis.scanSchedules.get(schedule.id)).cron).toBe('0 3 * * *');
    expect((await collect(aegis.scanSchedules.list())).map((s) => s.id)).toContain(schedule.id);
    expect((await aegis.scanSchedules.update(schedule.id, { enabled: false })).enabled).toBe(false);
    await aegis.scanSchedules.delete(schedule.id);
    await expect(aegis.scanSchedules.get(schedule.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('webhooks', async () => {
    const hook = await aegis.webhooks.create({ url: 'https://hooks.example.com/aegis', events: ['vulnerability.created'] });
    expect(typeof hook.secret).toBe('string');
    expect((await aegis.webhooks.get(hook.id)).url).toBe('https://hooks.example.com/aegis');
    expect((await collect(aegis.webhooks.list())).map((w) => w.id)).toContain(hook.id);
    expect((await aegis.webhooks.update(hook.id, { description: 'from the SDK' })).description).toBe('from the SDK');
    await aegis.webhooks.delete(hook.id);
    await expect(aegis.webhooks.get(hook.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('OpenAPI schema upload, get and delete', async () => {
    const site = await newSite();
    const yaml = ['openapi: 3.0.3', 'info: { title: Shop, version: "1" }', 'paths:', '  /items:', '    get:', '      responses:', '        "200": { description: ok }', ''].join('\n');
    const uploaded = await aegis.shieldSchema.upload(site.id, yaml, { contentType: 'application/yaml' });
    expect(uploaded).toBeTruthy();
    const fetched = await aegis.shieldSchema.get(site.id);
    expect(JSON.stringify(fetched)).toContain('/items');
    // A JSON document as text goes as application/json.
    await aegis.shieldSchema.upload(site.id, JSON.stringify({ openapi: '3.0.3', info: { title: 'Shop', version: '2' }, paths: { '/orders': { get: { responses: { '200': { description: 'ok' } } } } } }));
    expect(JSON.stringify(await aegis.shieldSchema.get(site.id))).toContain('/orders');
    await aegis.shieldSchema.delete(site.id);
    await expect(aegis.shieldSchema.get(site.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('pagination', () => {
  it('iterates every item across pages, and pages by hand', async () => {
    const site = await newSite();
    const rows = Array.from({ length: 25 }, (_, i) => `ip,198.51.100.${i + 1},deny,row ${i}`);
    const imported = await aegis.ipAccessRules.import(site.id, `type,value,action,note\n${rows.join('\n')}\n`);
    expect(imported).toBeTruthy();

    const all = await collect(aegis.ipAccessRules.list(site.id, { limit: 10 }));
    expect(all).toHaveLength(25);
    expect(new Set(all.map((r) => r.id)).size).toBe(25);

    const first = await aegis.ipAccessRules.list(site.id, { limit: 10 });
    expect(first.data).toHaveLength(10);
    expect(first.hasNextPage()).toBe(true);
    const second = await first.nextPage();
    expect(second.data).toHaveLength(10);
    const third = await second.nextPage();
    expect(third.data).toHaveLength(5);
    expect(third.hasNextPage()).toBe(false);
    expect([...first.data, ...second.data, ...third.data].map((r) => r.id)).toEqual(all.map((r) => r.id));

    let pages = 0;
    for await (const page of aegis.ipAccessRules.list(site.id, { limit: 10 }).pages()) pages += page.data.length > 0 ? 1 : 0;
    expect(pages).toBe(3);
  });
});

describe('retries', () => {
  it('a 429 is retried after Retry-After; without retries it is a RateLimitError', async () => {
    const site = await newSite();
    const noRetry = new Aegis({ apiKey: server.adminKey, baseUrl: server.url, maxRetries: 0 });
    await new Promise((r) => setTimeout(r, 1100)); // a fresh one-second budget
    await noRetry.shieldAnalytics.get(site.id);
    await noRetry.shieldAnalytics.get(site.id);
    const error = await noRetry.shieldAnalytics.get(site.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((error as RateLimitError).requestId).toBeTruthy();

    await new Promise((r) => setTimeout(r, 1100));
    const retrying = new Aegis({ apiKey: server.adminKey, baseUrl: server.url, maxRetries: 2 });
    const started = Date.now();
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await retrying.shieldAnalytics.get(site.id));
    expect(results).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThan(300); // the third one waited for the next window
  });

  it('the same idempotency key creates once', async () => {
    const domain = newDomain();
    const key = `sdk-node-${Date.now()}`;
    const a = await aegis.shieldSites.create({ domain, origin_url: 'http://127.0.0.1:9', mode: 'log' }, { idempotencyKey: key });
    const b = await aegis.shieldSites.create({ domain, origin_url: 'http://127.0.0.1:9', mode: 'log' }, { idempotencyKey: key });
    expect(b.id).toBe(a.id);
    expect((await collect(aegis.shieldSites.list({ domain }))).map((s) => s.id)).toEqual([a.id]);
  });

  it('a retry after a dropped connection reuses the idempotency key and creates once', async () => {
    const target = new URL(server.url);
    const keys: string[] = [];
    let connections = 0;
    let dropAll = false;
    const sockets = new Set<Socket>();
    // A TCP proxy that closes its first connection (or all, once dropAll is set) as soon as a request arrives.
    const proxy: Server = createServer((client: Socket) => {
      const n = ++connections;
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => undefined);
      client.once('data', (chunk: Buffer) => {
        client.pause(); // nothing may flow before the pipe is in place
        const key = /idempotency-key: *([^\r\n]+)/i.exec(chunk.toString('latin1'))?.[1];
        if (key) keys.push(key);
        if (n === 1 || dropAll) {
          client.destroy();
          return;
        }
        const upstream = connect(Number(target.port), target.hostname, () => {
          upstream.write(chunk);
          client.pipe(upstream).pipe(client);
        });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const port = (proxy.address() as { port: number }).port;
      const viaProxy = new Aegis({ apiKey: server.adminKey, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 2 });
      const domain = newDomain();
      const site = await viaProxy.shieldSites.create({ domain, origin_url: 'http://127.0.0.1:9', mode: 'log' });
      expect(keys.length).toBeGreaterThanOrEqual(2);
      expect(new Set(keys).size).toBe(1);
      expect((await collect(aegis.shieldSites.list({ domain }))).map((s) => s.id)).toEqual([site.id]);

      const noRetry = new Aegis({ apiKey: server.adminKey, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
      dropAll = true;
      for (const socket of sockets) socket.destroy();
      await expect(noRetry.shieldSites.list()).rejects.toBeInstanceOf(APIConnectionError);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });
});

describe('errors', () => {
  it('404 not_found and 422 validation_failed with details.fields; request ids pass through', async () => {
    const missing = await aegis.shieldSites.get('site_missing', { requestId: 'req-sdk-node-1' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', requestId: 'req-sdk-node-1' });

    const invalid = await aegis.shieldSites.create({ domain: '', origin_url: 'not a url', mode: 'block' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ status: 422, code: 'validation_failed' });
    expect((invalid as ValidationError).details).toHaveProperty('fields');
  });

  it('a CSV import with a bad row surfaces details.rows', async () => {
    const site = await newSite();
    const error = await aegis.ipAccessRules.import(site.id, 'type,value,action,note\nip,203.0.113.1,deny,\nip,not-an-ip,deny,\n').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const rows = (error as ValidationError).details as { rows: { line: number; column: string; reason: string }[] };
    expect(rows.rows).toEqual([expect.objectContaining({ line: 3 })]);
    expect((await aegis.ipAccessRules.list(site.id)).data).toHaveLength(0);
  });
});

describe('live stream', () => {
  it('receives a decision, then closes', async () => {
    const site = await newSite();
    const gateway = server.server.gateway!.url.replace('//localhost:', '//127.0.0.1:');
    const stream = aegis.shieldLive.stream(site.id, { action: 'block' });
    const first = (async (): Promise<ShieldDecision | undefined> => {
      for await (const decision of stream) return decision;
      return undefined;
    })();
    await aegis.ipAccessRules.create(site.id, { type: 'ip', value: '192.0.2.44', action: 'deny' });
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = await gatewayGet(gateway, site.domain, '192.0.2.44');
      if (status === 403) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(403);
    const decision = await Promise.race([first, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
    stream.close();
    expect(decision).toMatchObject({ site_id: site.id, action: 'block', client_ip: '192.0.2.44' });
    expect(stream.lastEventId).toBe(decision!.id);

    // Resuming after that decision (Last-Event-ID) delivers the next one, not it again.
    await aegis.ipAccessRules.create(site.id, { type: 'ip', value: '192.0.2.45', action: 'deny' });
    let second = 0;
    for (let i = 0; i < 50 && second !== 403; i++) {
      second = await gatewayGet(gateway, site.domain, '192.0.2.45');
      if (second !== 403) await new Promise((r) => setTimeout(r, 200));
    }
    expect(second).toBe(403);
    const resumed = aegis.shieldLive.stream(site.id, { action: 'block', lastEventId: decision!.id });
    const next = await Promise.race([
      (async () => {
        for await (const d of resumed) return d;
        return undefined;
      })(),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000)),
    ]);
    resumed.close();
    expect(next).toMatchObject({ client_ip: '192.0.2.45' });
  });
});

describe('quickstart example', () => {
  it('creates a site and a rule, scans a local repository and prints its findings', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'aegis-sdk-node-quickstart-'));
    try {
      const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.email=sdk@example.com', '-c', 'user.name=SDK', ...args], { stdio: 'pipe' });
      git('init', '-q');
      writeFileSync(join(repo, 'config.js'), 'export const awsKey = "AKIAIOSFODNN7EXAMPLQ";\n');
      git('add', '.');
      git('commit', '-qm', 'init');
      const root = fileURLToPath(new URL('../../..', import.meta.url));
      const { stdout } = await execFileAsync(process.execPath, [join(root, 'bin/run-ts.mjs'), join(root, 'sdks/node/examples/quickstart.ts'), repo], {
        env: { ...process.env, AEGIS_API_URL: server.url, AEGIS_API_KEY: server.adminKey },
        timeout: 120_000,
      });
      expect(stdout).toMatch(/Shield site site_/);
      expect(stdout).toMatch(/IP rule .*deny 203\.0\.113\.7/);
      expect(stdout).toMatch(/Scan scan_\S+ completed/);
      expect(stdout).toMatch(/AWS access key.*config\.js:1/);
      expect(stdout).toMatch(/[1-9]\d* finding\(s\)/);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  }, 150_000);
});

/** GET / through the Shield gateway as `host`, from `ip`; answers the status. */
function gatewayGet(gateway: string, host: string, ip: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gateway}/`, { headers: { host, 'x-forwarded-for': ip }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}
