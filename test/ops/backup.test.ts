// `aegis backup` and `aegis restore` as an operator runs them, on the embedded database: a backup
// of a running `aegis serve` (taken inside it, through the data dir's control socket), the data
// wiped, restored, served again, and the webhook's sealed signing secret still signing deliveries.
// And every refusal: a wrong key, a running server, a damaged file, a newer schema, PostgreSQL.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { generateKey } from '../../api/accounts/keys/key-material.ts';
import { verifyServiceSignature } from '../../api/webhooks/signature.ts';
import { askDataDir, controlSocketPaths, DataDirBusyError, holdDataDir } from '../../platform/control-socket.ts';
import { BACKUP_MAGIC, keyFingerprint, parseBackup } from '../../platform/db/backup.ts';
import { runAegis } from '../support/cli.ts';
import { cloneDatabase } from '../support/database-template.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { request } from '../support/server.ts';

const AEGIS = resolve('bin/aegis.mjs');
const children: ChildProcess[] = [];
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  for (const cleanup of cleanups) await cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A data directory for the embedded database: the run's migrated template when it is embedded, else empty (the server migrates it). */
async function embeddedDataDir(): Promise<string> {
  const template = inject('databaseTemplate');
  const dataDir = template.kind === 'embedded' ? (await cloneDatabase(template)).dataDir : mkdtempSync(join(tmpdir(), 'aegis-backup-'));
  dirs.push(dataDir);
  return dataDir;
}

/** Starts `aegis serve` on the embedded database in `dataDir`; resolves once it prints the API URL. */
function serve(dataDir: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [AEGIS, 'serve', '--host', '127.0.0.1', '--port', '0', '--shield-port', '0', '--data-dir', dataDir], {
    env: { ...process.env, AEGIS_FROM_SOURCE: '1', AEGIS_LOG_LEVEL: 'warn', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolvePromise, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /API\s+(http:\/\/\S+)\/api\/v1/.exec(output);
      if (match?.[1]) resolvePromise({ child, url: match[1] });
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`aegis serve exited with ${code}: ${output}`)));
  });
}

const stop = (child: ChildProcess) =>
  new Promise<void>((done) => {
    child.removeAllListeners('exit');
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function receiver(): Promise<{ url: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.end('ok');
    });
  });
  const listening = await listenOnLoopback(server);
  cleanups.push(listening.close);
  return { url: listening.url, requests };
}

/** Every file under `dir` with its size and modification time: equal snapshots, untouched directory. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      const stat = statSync(path);
      return `${path} ${stat.size} ${stat.mtimeMs}`;
    })
    .sort();
}

describe('aegis backup and restore (embedded database)', () => {
  it('backs up a running server; after a wipe the restore brings back its objects and the sealed webhook secret still signs', async () => {
    const dataDir = await embeddedDataDir();
    const key = randomBytes(32).toString('base64');
    const adminKey = generateKey();
    // DATABASE_URL empty: the embedded database even when the suite runs on PostgreSQL.
    const env = { DATABASE_URL: '', AEGIS_SECRET_KEY: key, AEGIS_BOOTSTRAP_API_KEY: adminKey, AEGIS_ALLOW_PRIVATE_TARGETS: 'true' };
    const hooks = await receiver();

    const first = await serve(dataDir, env);
    const site = await request<{ id: string }>(first.url, 'POST', '/api/v1/shield/sites', {
      key: adminKey,
      body: { domain: 'shop.example.com', origin_url: 'https://origin.example.net', mode: 'block' },
    });
    expect(site.status, site.text).toBe(201);
    const created = await request<{ id: string; secret: string }>(first.url, 'POST', '/api/v1/webhooks', {
      key: adminKey,
      body: { url: `${hooks.url}/hook`, events: ['api_key.created'], description: 'before the backup' },
    });
    expect(created.status, created.text).toBe(201);
    const { id: webhookId, secret } = created.body;

    // Taken inside the running server, through its control socket.
    const file = join(dataDir, '..', `${randomBytes(4).toString('hex')}.backup`);
    dirs.push(file);
    const backup = await runAegis(['backup', '--out', file, '--data-dir', dataDir], env);
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain('taken from the running aegis serve');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const bytes = readFileSync(file);
    const { header } = parseBackup(bytes, file);
    expect(header.key_fingerprint).toBe(keyFingerprint(Buffer.from(key, 'base64')));
    // The key is not in the backup, in any form the server accepts.
    expect(bytes.includes(Buffer.from(key, 'base64'))).toBe(false);
    expect(bytes.includes(Buffer.from(key))).toBe(false);

    // While the server runs, a restore is refused and changes nothing.
    const whileRunning = await runAegis(['restore', file, '--data-dir', dataDir, '--force'], env);
    expect(whileRunning.code).toBe(1);
    expect(whileRunning.stderr).toContain(`is in use by aegis serve (pid ${first.child.pid}`);
    expect(whileRunning.stderr).toContain('Nothing was changed.');
    // So are the commands that open the database themselves (cli/open-database.ts).
    for (const args of [['keys', 'create', '--org', 'default', '--scopes', 'shield:read'], ['migrate']]) {
      const beside = await runAegis([...args, '--data-dir', dataDir], env);
      expect(beside.code, args.join(' ')).toBe(1);
      expect(beside.stderr).toContain(`is in use by aegis serve (pid ${first.child.pid}`);
    }
    await stop(first.child);

    // A wrong key is refused before anything is touched, even with --force.
    const before = snapshot(join(dataDir, 'pgdata'));
    const otherKey = randomBytes(32).toString('base64');
    const wrongKey = await runAegis(['restore', file, '--data-dir', dataDir, '--force'], { ...env, AEGIS_SECRET_KEY: otherKey });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain(`this backup was sealed with key ${header.key_fingerprint}; set AEGIS_SECRET_KEY to that key`);
    expect(wrongKey.stderr).toContain(`is ${keyFingerprint(Buffer.from(otherKey, 'base64'))}`);
    expect(snapshot(join(dataDir, 'pgdata'))).toEqual(before);

    // An existing database is replaced only with --force.
    const noForce = await runAegis(['restore', file, '--data-dir', dataDir], env);
    expect(noForce.code).toBe(1);
    expect(noForce.stderr).toContain('already holds a database; pass --force');
    expect(snapshot(join(dataDir, 'pgdata'))).toEqual(before);

    // Wipe the database, restore, serve again.
    rmSync(join(dataDir, 'pgdata'), { recursive: true, force: true });
    const restored = await runAegis(['restore', file, '--data-dir', dataDir], env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`restored ${file} into ${join(dataDir, 'pgdata')}`);
    expect(readdirSync(dataDir).filter((name) => name.startsWith('.pgdata'))).toEqual([]);

    const second = await serve(dataDir, env);
    try {
      const gotSite = await request<{ domain: string }>(second.url, 'GET', `/api/v1/shield/sites/${site.body.id}`, { key: adminKey });
      expect(gotSite.status).toBe(200);
      expect(gotSite.body.domain).toBe('shop.example.com');
      const gotHook = await request<{ description: string; secret_last4: string }>(second.url, 'GET', `/api/v1/webhooks/${webhookId}`, { key: adminKey });
      expect(gotHook.status).toBe(200);
      expect(gotHook.body).toMatchObject({ description: 'before the backup', secret_last4: secret.slice(-4) });

      // The restored server opens the sealed secret and signs with it: the receiver checks the
      // signature with the secret it was given at creation.
      const ping = await request<{ status: string }>(second.url, 'POST', `/api/v1/webhooks/${webhookId}/test`, { key: adminKey });
      expect(ping.status, ping.text).toBe(200);
      expect(ping.body.status).toBe('succeeded');
      const delivered = hooks.requests.at(-1)!;
      expect(JSON.parse(delivered.body)).toMatchObject({ type: 'ping' });
      expect(verifyServiceSignature(delivered.body, String(delivered.headers['x-service-signature']), secret)).toBe(true);
    } finally {
      await stop(second.child);
    }
    // Three server starts and a handful of CLI runs, each a process of its own.
  }, 240_000);

  it('refuses a damaged file, a file that is no backup, and a backup of a newer schema', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aegis-restore-'));
    dirs.push(dataDir);
    const key = randomBytes(32);
    const env = { DATABASE_URL: '', AEGIS_SECRET_KEY: key.toString('base64') };
    // A well-formed backup, made here (no database needed to exercise the header checks).
    const payload = randomBytes(4096);
    const { createHash } = await import('node:crypto');
    const encode = (header: Record<string, unknown>, body: Buffer) => Buffer.concat([Buffer.from(`${BACKUP_MAGIC}\n${JSON.stringify(header)}\n`), body]);
    const header = {
      format: 1,
      database: 'embedded',
      aegis_version: '99.0.0',
      created_at: new Date().toISOString(),
      last_migration: '9999_from_the_future',
      postgres_version: '17.5',
      key_fingerprint: keyFingerprint(key),
      payload: { encoding: 'pgdata-tar+gzip', bytes: payload.length, sha256: createHash('sha256').update(payload).digest('hex') },
    };
    const whole = encode(header, payload);

    const truncated = join(dataDir, 'truncated.backup');
    writeFileSync(truncated, whole.subarray(0, whole.length - 100));
    const altered = join(dataDir, 'altered.backup');
    const flipped = Buffer.from(whole);
    flipped[flipped.length - 10]! ^= 0xff;
    writeFileSync(altered, flipped);
    for (const path of [truncated, altered]) {
      const result = await runAegis(['restore', path, '--data-dir', dataDir], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`aegis restore: ${path} is damaged`);
      expect(result.stderr).toContain('(truncated or altered)');
    }

    const notBackup = join(dataDir, 'notes.txt');
    writeFileSync(notBackup, 'hello\n');
    const refusedText = await runAegis(['restore', notBackup, '--data-dir', dataDir], env);
    expect(refusedText.code).toBe(1);
    expect(refusedText.stderr).toContain('is not an Aegis backup');

    const future = join(dataDir, 'future.backup');
    writeFileSync(future, whole);
    const refusedFuture = await runAegis(['restore', future, '--data-dir', dataDir], env);
    expect(refusedFuture.code).toBe(1);
    expect(refusedFuture.stderr).toContain('migrated to 9999_from_the_future, which this Aegis does not know');
    expect(readdirSync(dataDir).sort()).toEqual(['altered.backup', 'future.backup', 'notes.txt', 'truncated.backup']);
  });

  it('with DATABASE_URL, backup and restore refuse and point at pg_dump', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aegis-backup-pg-'));
    dirs.push(dataDir);
    const env = { DATABASE_URL: 'postgres://aegis@db.invalid/aegis' };
    const backup = await runAegis(['backup', '--out', join(dataDir, 'x.backup'), '--data-dir', dataDir], env);
    expect(backup.code).toBe(1);
    expect(backup.stderr).toContain('Use pg_dump');
    expect(backup.stderr).toContain('docs/operations.md, "Backup and restore"');
    const restore = await runAegis(['restore', join(dataDir, 'x.backup'), '--data-dir', dataDir], env);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain('Use pg_restore');
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe('the data directory\'s control socket', () => {
  it('is private, held by one process at a time, falls back under the temporary directory for a long path, and a killed holder\'s socket is taken over', async () => {
    const base = mkdtempSync(join(tmpdir(), 'aegis-socket-'));
    dirs.push(base);
    const long = join(base, 'a-data-directory-whose-path-is-too-long-for-a-unix-socket'.repeat(2));
    mkdirSync(long, { recursive: true });
    for (const dataDir of [base, long]) {
      const [first] = controlSocketPaths(dataDir);
      expect(first!.startsWith(dataDir === base ? base : tmpdir())).toBe(true);
      const held = await holdDataDir(dataDir, 'restore', 'test');
      expect(held.path).toBe(first);
      expect(statSync(held.path).mode & 0o777).toBe(0o600);
      const second = await holdDataDir(dataDir, 'backup', 'test').catch((err: unknown) => err);
      expect(second).toBeInstanceOf(DataDirBusyError);
      expect((second as DataDirBusyError).holder).toMatchObject({ role: 'restore', pid: process.pid });
      // The holder answers; a restore takes no backups.
      const asked = await askDataDir(dataDir, 'backup');
      expect(asked?.reply).toMatchObject({ ok: false, holder: { role: 'restore' } });
      await held.release();
      expect(existsSync(held.path)).toBe(false);
      expect(await askDataDir(dataDir, 'backup')).toBeUndefined();
    }

    // A holder killed with SIGKILL leaves its socket file behind; nobody answers on it any more.
    const script = `const { holdDataDir } = await import(${JSON.stringify(resolve('platform/control-socket.ts'))}); await holdDataDir(${JSON.stringify(base)}, 'serve', 'test'); process.stdout.write('held\\n'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((ready) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('held') && ready()));
    expect((await holdDataDir(base, 'backup', 'test').catch((err: unknown) => err)) as DataDirBusyError).toMatchObject({ holder: { role: 'serve', pid: child.pid } });
    await new Promise<void>((done) => {
      child.once('exit', () => done());
      child.kill('SIGKILL');
    });
    expect(existsSync(controlSocketPaths(base)[0]!)).toBe(true);
    const taken = await holdDataDir(base, 'backup', 'test');
    expect(taken.holder.pid).toBe(process.pid);
    await taken.release();
  });
});
