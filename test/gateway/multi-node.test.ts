// Several gateway nodes (`aegis shield` processes) beside one API, on one PostgreSQL server and one
// Redis: configuration written through the API reaches every node, a rate-limit budget is shared
// across nodes rather than multiplied by them, and a standing deny earned on one node holds on all.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrigin, type Origin } from '../support/origin.ts';
import { eventually, viaGateway } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const AEGIS = resolve('bin/aegis.mjs');
const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

/** Starts `aegis shield` and resolves with its URL once it says it is listening. */
function startNode(env: NodeJS.ProcessEnv, dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [AEGIS, 'shield', '--host', '127.0.0.1', '--shield-port', '0', '--data-dir', dataDir], {
    env: { ...process.env, AEGIS_LOG_LEVEL: 'warn', AEGIS_TRUSTED_PROXIES: '127.0.0.1,::1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolvePromise, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolvePromise({ child, url: match[1] });
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`aegis shield exited with ${code}: ${output}`)));
  });
}

describe.skipIf(!shared)('two gateway nodes on one PostgreSQL and one Redis', () => {
  let t: TestServer;
  let origin: Origin;
  const nodes: { child: ChildProcess; url: string }[] = [];

  beforeAll(async () => {
    origin = await startOrigin();
    // The API process runs no gateway of its own here: both nodes are `aegis shield`.
    t = await startTestServer({ rateLimitPerMinute: 100_000, redisUrl: process.env.REDIS_URL });
    const env = { DATABASE_URL: t.database.databaseUrl, REDIS_URL: process.env.REDIS_URL };
    nodes.push(...(await Promise.all([startNode(env, t.database.dataDir), startNode(env, t.database.dataDir)])));
  });
  afterAll(async () => {
    for (const node of nodes) node.child.kill('SIGTERM');
    await t?.close();
    await origin?.close();
  });

  it('shares one rate-limit budget and its escalation across nodes', async () => {
    const site = (await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'multi.test', origin_url: origin.url, mode: 'block' } })).body;
    const rule = await t.call('POST', `/api/v1/shield/sites/${site.id}/rate-limits`, {
      body: { identity: 'ip', url_pattern: '/*', method: 'ANY', budget: 10, window_seconds: 60, action: 'block', escalate_to_deny_minutes: 5 },
    });
    expect(rule.status).toBe(201);
    // Each node picks up the site and its rule on its own, from the database: proven once a
    // warm-up client (one per node) is limited there. That takes eleven requests after the pickup;
    // on a loaded CI machine (both suites side by side) a request can take a second, so the bound
    // is generous: it only decides how long a broken node is waited for.
    for (const [i, node] of nodes.entries()) {
      await eventually(async () => [429, 403].includes((await viaGateway(node.url, '/warmup', { host: 'multi.test', from: `198.51.100.${90 + i}` })).status), 30_000);
    }

    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await viaGateway(nodes[i % 2]!.url, `/item/${i}`, { host: 'multi.test', from: '203.0.113.7' })).status);
    // Ten requests alternating between nodes: ten within one budget of ten; the eleventh, on
    // either node, is over it.
    expect(statuses).toEqual(Array(10).fill(200));
    const over = await viaGateway(nodes[0]!.url, '/item/10', { host: 'multi.test', from: '203.0.113.7' });
    expect(over.status).toBe(429);
    // The escalation is stored once and seen by the other node too.
    const other = await viaGateway(nodes[1]!.url, '/elsewhere', { host: 'multi.test', from: '203.0.113.7' });
    expect(other.status).toBe(403);
    // Another client is untouched.
    expect((await viaGateway(nodes[1]!.url, '/item/0', { host: 'multi.test', from: '203.0.113.8' })).status).toBe(200);
  }, 90_000);

  it('applies a rule written through the API on every node', async () => {
    const site = (await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'rules.multi.test', origin_url: origin.url, mode: 'block' } })).body;
    for (const node of nodes) await eventually(async () => (await viaGateway(node.url, '/', { host: 'rules.multi.test', from: '198.51.100.20' })).status === 200);
    await t.call('POST', `/api/v1/shield/sites/${site.id}/ip-access`, { body: { type: 'cidr', value: '198.51.100.0/24', action: 'deny' } });
    for (const node of nodes) await eventually(async () => (await viaGateway(node.url, '/', { host: 'rules.multi.test', from: '198.51.100.20' })).status === 403, 2_000);
  });
});
