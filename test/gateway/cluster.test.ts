// `aegis shield --workers 2`: one gateway port served by two worker processes (node:cluster) on
// PostgreSQL. A rule written through the API reaches both workers; a rate limit is one budget across
// them, held by the primary without Redis and in Redis with it; a killed worker is replaced; SIGTERM
// stops the lot. Which worker answered is read from the primary's aggregated metrics
// (aegis_shield_worker_decisions{worker}), so the production responses carry nothing for the test.
import { execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrigin, type Origin } from '../support/origin.ts';
import { eventually } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { runAegis } from '../support/cli.ts';
import { freePort } from '../support/loopback.ts';
import { AEGIS, PROCESS_TEST_TIMEOUT_MS, startAegis } from '../support/aegis-process.ts';
const onPostgres = Boolean(process.env.DATABASE_URL);

interface Cluster {
  child: ChildProcess;
  url: string;
  port: number;
  metricsUrl: string;
  /** Worker pids by slot, as announced at start and on every restart. */
  pids: Map<number, number>;
  output: () => string;
  exited: Promise<number | null>;
}


/** The bundle in dist/ itself, as test/support/cli.ts runBuiltAegis runs it. */
const BUILT = ['--input-type=module', '-e', `const { main } = await import(${JSON.stringify(pathToFileURL(resolve('dist/aegis.js')).href)}); process.exitCode = await main(process.argv.slice(1));`, '--'];

async function startCluster(env: NodeJS.ProcessEnv, dataDir: string, command: string[] = [AEGIS]): Promise<Cluster> {
  const metricsPort = await freePort();
  const pids = new Map<number, number>();
  const running = await startAegis(
    ['shield', '--workers', '2', '--host', '127.0.0.1', '--shield-port', '0', '--data-dir', dataDir],
    { AEGIS_FROM_SOURCE: '1', AEGIS_LOG_LEVEL: 'warn', AEGIS_TRUSTED_PROXIES: '127.0.0.1,::1', AEGIS_METRICS_PORT: String(metricsPort), REDIS_URL: '', ...env },
    /listening on (http:\/\/\S+) \(2 workers, pids (\d+):(\d+) (\d+):(\d+)/,
    {
      command,
      // Workers restarted later announce their new pids.
      onOutput: (output) => {
        for (const m of output.matchAll(/Shield worker (\d+) restarted \(pid (\d+)\)/g)) pids.set(Number(m[1]), Number(m[2]));
      },
    },
  );
  const started = running.match;
  pids.set(Number(started[2]), Number(started[3])).set(Number(started[4]), Number(started[5]));
  const url = started[1]!.replace('localhost', '127.0.0.1');
  return { child: running.child, url, port: Number(new URL(url).port), metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, pids, output: running.output, exited: running.exited };
}

/** One request on a connection of its own (Connection: close), so the cluster hands each to a worker in turn. */
function fresh(port: number, path: string, host: string, from: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false, headers: { host, 'x-forwarded-for': from } }, (res) => {
      res.resume();
      res.on('end', () => resolvePromise(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Decisions per worker slot, from the primary's aggregated metrics. */
async function decisionsByWorker(cluster: Cluster): Promise<Map<string, number>> {
  const text = await (await fetch(cluster.metricsUrl)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^aegis_shield_worker_decisions\{worker="(\d+)"\} (\d+)/gm)) counts.set(m[1]!, Number(m[2]));
  return counts;
}

/** Sends `count` requests one after the other, each on a new connection; returns the statuses and how many each worker decided. */
async function burst(cluster: Cluster, count: number, path: string, host: string, from: string) {
  const before = await decisionsByWorker(cluster);
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push(await fresh(cluster.port, `${path}${i}`, host, from));
  const after = await decisionsByWorker(cluster);
  const served = [...after].map(([slot, n]) => n - (before.get(slot) ?? 0));
  return { statuses, served };
}

/** A test that counts a window's budget should not straddle two windows: wait out the last seconds of a minute. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
}

async function stop(cluster: Cluster | undefined): Promise<void> {
  if (!cluster || cluster.child.exitCode !== null) return;
  cluster.child.kill('SIGTERM');
  await cluster.exited;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!onPostgres)('aegis shield --workers 2', () => {
  let t: TestServer;
  let origin: Origin;
  let ipc: Cluster;

  beforeAll(async () => {
    origin = await startOrigin();
    t = await startTestServer({ rateLimitPerMinute: 100_000 });
    ipc = await startCluster({ DATABASE_URL: t.database.databaseUrl }, t.database.dataDir);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await stop(ipc);
    await t?.close();
    await origin?.close();
  });

  /** A site created through the API, once both workers route it. */
  async function site(cluster: Cluster, domain: string): Promise<string> {
    const created = await t.call('POST', '/api/v1/shield/sites', { body: { domain, origin_url: origin.url, mode: 'block' } });
    expect(created.status).toBe(201);
    await eventually(async () => (await burst(cluster, 4, '/ready/', domain, '192.0.2.200')).statuses.every((s) => s === 200), 10_000);
    return created.body.id as string;
  }

  it('answers on both workers and enforces a rule created after start on both', async () => {
    const domain = 'rules.cluster.test';
    const id = await site(ipc, domain);
    const open = await burst(ipc, 10, '/a/', domain, '198.51.100.20');
    expect(open.statuses).toEqual(Array(10).fill(200));
    expect(open.served).toHaveLength(2);
    expect(open.served.every((n) => n > 0)).toBe(true);

    expect((await t.call('POST', `/api/v1/shield/sites/${id}/ip-access`, { body: { type: 'cidr', value: '198.51.100.0/24', action: 'deny' } })).status).toBe(201);
    await eventually(async () => (await burst(ipc, 4, '/b/', domain, '198.51.100.20')).statuses.every((s) => s === 403), 5_000);
    const denied = await burst(ipc, 10, '/c/', domain, '198.51.100.20');
    expect(denied.statuses).toEqual(Array(10).fill(403));
    // Both workers answered part of the ten, each with the new rule.
    expect(denied.served.every((n) => n > 0)).toBe(true);
    expect(denied.served.reduce((a, b) => a + b, 0)).toBe(10);
    // Other clients still pass.
    expect((await burst(ipc, 4, '/d/', domain, '203.0.113.50')).statuses).toEqual(Array(4).fill(200));
  });

  /** A 20/minute limit spends exactly 20 across both workers. */
  async function exactBudget(cluster: Cluster, domain: string): Promise<void> {
    const id = await site(cluster, domain);
    const rule = await t.call('POST', `/api/v1/shield/sites/${id}/rate-limits`, { body: { identity: 'ip', url_pattern: '/*', method: 'ANY', budget: 20, window_seconds: 60, action: 'block' } });
    expect(rule.status).toBe(201);
    // Both workers have the rule once a warm-up client, over its budget, is refused four times in a
    // row (the connections alternate between the workers).
    let warmup = 0;
    await eventually(async () => {
      const from = `198.51.100.${100 + (warmup++ % 100)}`;
      const { statuses } = await burst(cluster, 26, '/warm/', domain, from);
      return statuses.slice(-4).every((s) => s === 429);
    }, 15_000);

    await awayFromMinuteEdge();
    const { statuses, served } = await burst(cluster, 30, '/item/', domain, '203.0.113.7');
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(200));
    expect(statuses.slice(20)).toEqual(Array(10).fill(429));
    expect(served.every((n) => n > 0)).toBe(true);
    // Another client has its own budget.
    expect(await fresh(cluster.port, '/item/x', domain, '203.0.113.8')).toBe(200);
  }

  it('holds a 20/minute budget at exactly 20 across the workers without Redis (the primary counts)', async () => {
    expect(ipc.output()).toContain('rate limits held by this process');
    await exactBudget(ipc, 'ipc.cluster.test');
  });

  it.skipIf(!process.env.REDIS_URL)('holds a 20/minute budget at exactly 20 across the workers with Redis', async () => {
    const redis = await startCluster({ DATABASE_URL: t.database.databaseUrl, REDIS_URL: process.env.REDIS_URL }, t.database.dataDir);
    try {
      expect(redis.output()).toContain('rate limits in Redis');
      // The site id (a fresh UUID) is in every Redis key, so reruns never share counters.
      await exactBudget(redis, `redis-${Date.now()}.cluster.test`);
    } finally {
      await stop(redis);
    }
  }, PROCESS_TEST_TIMEOUT_MS);

  it('replaces a killed worker, and stops every worker on SIGTERM', async () => {
    const domain = 'restart.cluster.test';
    await site(ipc, domain);
    const victim = ipc.pids.get(1)!;
    const survivor = ipc.pids.get(2)!;
    process.kill(victim, 'SIGKILL');
    // The replacement is a new process starting up: wait for its announcement, however long that takes.
    await eventually(async () => ipc.pids.get(1) !== victim, 120_000);
    const replacement = ipc.pids.get(1)!;
    expect(alive(replacement)).toBe(true);
    const text = await (await fetch(ipc.metricsUrl)).text();
    expect(text).toMatch(/^aegis_shield_workers 2$/m);
    expect(text).toMatch(/^aegis_shield_worker_restarts 1$/m);
    // The new worker serves (and has loaded the sites itself).
    const after = await burst(ipc, 10, '/after/', domain, '203.0.113.60');
    expect(after.statuses).toEqual(Array(10).fill(200));
    expect(after.served.every((n) => n > 0)).toBe(true);

    ipc.child.kill('SIGTERM');
    expect(await ipc.exited).toBe(0);
    expect(alive(replacement)).toBe(false);
    expect(alive(survivor)).toBe(false);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('runs its workers from the dist/ bundle when started from it', async () => {
    const built = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(process.execPath, ['build/bundle.mjs', '--if-stale'], { timeout: 120_000 }, (error, _stdout, stderr) => done({ code: error ? 1 : 0, stderr })),
    );
    expect(built.code, built.stderr).toBe(0);
    const cluster = await startCluster({ DATABASE_URL: t.database.databaseUrl }, t.database.dataDir, BUILT);
    try {
      for (const pid of cluster.pids.values()) expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('dist/shield-worker.js');
      const domain = 'built.cluster.test';
      await t.call('POST', '/api/v1/shield/sites', { body: { domain, origin_url: origin.url, mode: 'block' } });
      await eventually(async () => (await burst(cluster, 4, '/built/', domain, '192.0.2.201')).statuses.every((s) => s === 200), 10_000);
    } finally {
      await stop(cluster);
    }
  }, 2 * PROCESS_TEST_TIMEOUT_MS);
});

describe('worker counts', () => {
  it('refuses a bad --workers, and serve --shield-workers above 1 on the embedded database', async () => {
    const [zero, servedZero, embedded] = await Promise.all([
      runAegis(['shield', '--workers', '0'], { DATABASE_URL: 'postgres://127.0.0.1:9/none' }),
      runAegis(['serve', '--shield-workers', 'x'], { DATABASE_URL: '' }),
      runAegis(['serve', '--shield-workers', '2', '--port', '0', '--shield-port', '0'], { DATABASE_URL: '' }),
    ]);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain('aegis shield: --workers must be an integer from 1 to 1024, got "0"');
    expect(servedZero.code).toBe(1);
    expect(servedZero.stderr).toContain('aegis serve: --shield-workers must be an integer from 1 to 1024, got "x"');
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toContain('--shield-workers above 1 needs PostgreSQL (DATABASE_URL)');
  }, PROCESS_TEST_TIMEOUT_MS);
});
