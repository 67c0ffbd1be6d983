// The `aegis` command as users run it, in child processes.
import { execFile, type ChildProcess } from 'node:child_process';
import { rmSync, statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { generateKey } from '../../api/accounts/keys/key-material.ts';
import { cloneDatabase } from '../support/database-template.ts';
import { AEGIS, PROCESS_TEST_TIMEOUT_MS, startAegis } from '../support/aegis-process.ts';
import { freePort } from '../support/loopback.ts';
import { request, startTestServer } from '../support/server.ts';

const run = promisify(execFile);
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts `aegis serve` and resolves with its output once it prints the API URL. */
async function serve(env: NodeJS.ProcessEnv, args: string[]): Promise<{ child: ChildProcess; output: string; url: string }> {
  const running = await startAegis(['serve', '--host', '127.0.0.1', '--shield-port', '0', ...args], { AEGIS_LOG_LEVEL: 'warn', ...env }, /API\s+(http:\/\/\S+)\/api\/v1/, {
    spawned: (child) => children.push(child),
  });
  return { child: running.child, output: running.output(), url: running.match[1] ?? '' };
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolvePromise) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolvePromise();
    child.once('exit', () => resolvePromise());
    child.kill('SIGTERM');
  });

describe('aegis serve', () => {
  it('first start on an empty database writes a bootstrap key file (0600) and prints its path, not the key', async () => {
    const db = await cloneDatabase(inject('databaseTemplate'));
    dirs.push(db.dataDir);
    const port = String(await freePort());
    const { child, output, url } = await serve({ DATABASE_URL: db.databaseUrl ?? '', AEGIS_BOOTSTRAP_API_KEY: '' }, ['--port', port, '--data-dir', db.dataDir]);
    const keyFile = join(db.dataDir, 'bootstrap-key');
    expect(output).toContain(keyFile);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(output).not.toContain(key);
    expect(url).toBe(`http://localhost:${port}`);
    const me = await request<{ api_key: { scopes: string[] } }>(url, 'GET', '/api/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.body.api_key.scopes).toEqual(['admin']);
    await stop(child);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('with AEGIS_BOOTSTRAP_API_KEY, that key is an admin of organisation default; keys create works while stopped', async () => {
    const db = await cloneDatabase(inject('databaseTemplate'));
    dirs.push(db.dataDir);
    const key = generateKey();
    const env = { DATABASE_URL: db.databaseUrl ?? '', AEGIS_BOOTSTRAP_API_KEY: key, PORT: '0' };
    const first = await serve(env, ['--data-dir', db.dataDir]);
    const me = await request<{ organization: { slug: string } }>(first.url, 'GET', '/api/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.body.organization.slug).toBe('default');
    await stop(first.child);

    const created = await run(process.execPath, [AEGIS, 'keys', 'create', '--org', 'acme', '--scopes', 'shield:read,scans:read', '--name', 'ops', '--data-dir', db.dataDir], {
      env: { ...process.env, ...env },
    });
    const newKey = created.stdout.trim();
    expect(newKey).toMatch(/^svc_live_/);
    expect(created.stderr).not.toContain(newKey);

    const bad = await run(process.execPath, [AEGIS, 'keys', 'create', '--org', 'acme', '--scopes', 'root', '--data-dir', db.dataDir], { env: { ...process.env, ...env } }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown: root') });

    const second = await serve(env, ['--data-dir', db.dataDir]);
    const acme = await request<{ organization: { slug: string }; api_key: { scopes: string[] } }>(second.url, 'GET', '/api/v1/me', { key: newKey });
    expect(acme.body.organization.slug).toBe('acme');
    expect(acme.body.api_key.scopes).toEqual(['shield:read', 'scans:read']);
    await stop(second.child);
    // Two server starts and two CLI runs, each a process of its own, one after the other.
  }, 2 * PROCESS_TEST_TIMEOUT_MS);
});

describe('several server processes on one PostgreSQL database', () => {
  const template = inject('databaseTemplate');
  it.skipIf(template.kind !== 'postgres')('a key revoked through one process stops working on the other within 5 s', async () => {
    const a = await startTestServer();
    const b = await startTestServer({ bootstrapApiKey: a.adminKey }, a.database);
    try {
      const created = await a.call('POST', '/api/v1/api-keys', { body: { name: 'shared', scopes: ['scans:read'] } });
      const key = created.body.key as string;
      expect((await b.call('GET', '/api/v1/me', { key })).status).toBe(200); // now cached in b
      await a.call('DELETE', `/api/v1/api-keys/${created.body.id}`);
      expect((await a.call('GET', '/api/v1/me', { key })).status).toBe(401);
      const started = Date.now();
      await expect.poll(async () => (await b.call('GET', '/api/v1/me', { key })).status, { timeout: 5000, interval: 100 }).toBe(401);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await b.close();
      await a.close();
    }
  });

  const redisUrl = process.env.REDIS_URL;
  it.skipIf(template.kind !== 'postgres' || !redisUrl)('with REDIS_URL, two processes share one rate-limit budget per key', async () => {
    const a = await startTestServer({ redisUrl, rateLimitPerMinute: 10 });
    const b = await startTestServer({ redisUrl, rateLimitPerMinute: 10, bootstrapApiKey: a.adminKey }, a.database);
    try {
      const created = await a.call('POST', '/api/v1/api-keys', { body: { name: 'shared budget', scopes: ['scans:read'] } });
      const key = created.body.key as string;
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        statuses.push((await a.call('GET', '/api/v1/me', { key })).status);
        statuses.push((await b.call('GET', '/api/v1/me', { key })).status);
      }
      expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
      expect(statuses.slice(10)).toEqual([429, 429]);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
