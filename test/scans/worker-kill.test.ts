// A scan whose worker dies mid-scan (PostgreSQL only: `aegis worker` processes share the server's
// queue). The API runs no worker of its own here; two `aegis worker` processes do. The one running
// the scan is killed with SIGKILL; after its lease the other takes the job over and completes the
// scan, and the findings are recorded exactly once.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../jobs/support.ts';
import { spawnWorker } from '../support/worker-process.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const postgres = inject('databaseTemplate').kind === 'postgres';

let t: TestServer;
let repo: string;
const workers: ChildProcess[] = [];

function startWorker(): Promise<ChildProcess> {
  return spawnWorker(t.database, { AEGIS_JOB_LEASE_MS: '2000', AEGIS_ALLOW_LOCAL_SOURCES: 'true', AEGIS_LOG_LEVEL: 'warn' }, (child) => workers.push(child));
}

beforeAll(async () => {
  if (!postgres) return;
  // This file's server runs no worker: only the two processes below take jobs.
  process.env.AEGIS_WORKER = 'false';
  t = await startTestServer({ allowLocalSources: true, rateLimitPerMinute: 100_000 });
  repo = await mkdtemp(join(tmpdir(), 'aegis-kill-repo-'));
  // Enough code that a SAST scan runs for seconds; one injection per file.
  const filler = Array.from({ length: 400 }, (_, i) => `app.get('/r${i}', (req, res) => { const n = Number(req.query.n) + ${i}; res.json({ n }); });`).join('\n');
  const injection = `app.get('/q', (req, res) => { db.query('select * from t where a = ' + req.query.a); res.send('ok'); });`;
  await Promise.all(Array.from({ length: 1500 }, (_, i) => writeFile(join(repo, `m${i}.js`), `${filler}\n${injection}\n`)));
  execFileSync('git', ['-C', repo, 'init', '-q']);
  execFileSync('git', ['-C', repo, 'add', '-A']);
  execFileSync('git', ['-C', repo, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'big']);
}, 120_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGTERM');
  await t?.close();
  if (repo) await rm(repo, { recursive: true, force: true });
  delete process.env.AEGIS_WORKER;
});

describe.skipIf(!postgres)('a worker killed in the middle of a scan', () => {
  it('another worker retries the scan after the lease and completes it; findings are recorded once', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const started = await t.call('POST', '/api/v1/sast/scans', { body: { target: `file://${repo}` } });
    expect(started.status, started.text).toBe(202);
    const db = t.server.database.db;
    const scan = await db.selectFrom('scans').select('job_id').where('id', '=', started.body.id).executeTakeFirstOrThrow();
    const owner = await until(async () => {
      const job = await db.selectFrom('jobs').select(['state', 'lease_owner']).where('id', '=', scan.job_id!).executeTakeFirstOrThrow();
      const status = (await t.call('GET', `/api/v1/scans/${started.body.id}`)).body.status;
      return job.state === 'running' && status === 'running' ? job.lease_owner : undefined;
    }, 30_000);
    const victim = [a, b].find((w) => owner?.split(':')[1] === String(w.pid))!;
    const survivor = victim === a ? b : a;
    victim.kill('SIGKILL');

    const finished = await until(async () => {
      const res = await t.call('GET', `/api/v1/scans/${started.body.id}`);
      return ['completed', 'failed', 'canceled'].includes(res.body.status) ? res.body : undefined;
    }, 180_000, 100);
    expect(finished.status, finished.error ?? '').toBe('completed');
    const job = await db.selectFrom('jobs').selectAll().where('id', '=', scan.job_id!).executeTakeFirstOrThrow();
    expect(job.state).toBe('completed');
    expect(job.attempts).toBe(2);
    expect(job.lease_owner?.split(':')[1]).toBe(String(survivor.pid));
    // Recorded once: one vulnerability per fingerprint, each linked to the scan once.
    const links = await db.selectFrom('scan_findings').select((eb) => eb.fn.countAll<string>().as('n')).where('scan_id', '=', started.body.id).executeTakeFirstOrThrow();
    const vulns = await db.selectFrom('vulnerabilities').select((eb) => eb.fn.countAll<string>().as('n')).where('first_scan_id', '=', started.body.id).executeTakeFirstOrThrow();
    expect(Number(links.n)).toBe(finished.summary.total);
    expect(Number(vulns.n)).toBe(finished.summary.total);
    expect(finished.summary.total).toBe(1500);
  }, 300_000);
});
