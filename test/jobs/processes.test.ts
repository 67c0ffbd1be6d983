// Real `aegis worker` processes sharing one PostgreSQL queue (skipped on the embedded database,
// which one process owns). The test-only kind `test.sleep` stands in for a long scan
// (AEGIS_TEST_JOB_KINDS=1; platform/jobs/test-kinds.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { openDatabase } from '../../platform/db/database.ts';
import { enqueueMany, getJob } from '../../platform/jobs/queue.ts';
import type { JobRow } from '../../platform/jobs/types.ts';
import { ensureOrganization } from '../../api/accounts/keys/bootstrap.ts';
import { insertSchedule } from '../../api/schedules/store.ts';
import { AEGIS, PROCESS_TEST_TIMEOUT_MS, startAegis } from '../support/aegis-process.ts';
import { cloneDatabase, type TestDatabase } from '../support/database-template.ts';
import { until } from './support.ts';

const postgres = inject('databaseTemplate').kind === 'postgres';

interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  output: () => string;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

/** An `aegis worker`, once it has printed its start-up banner. */
async function startWorker(databaseUrl: string, env: Record<string, string>, args: string[] = []): Promise<WorkerProcess> {
  const running = await startAegis(['worker', ...args], { DATABASE_URL: databaseUrl, AEGIS_TEST_JOB_KINDS: '1', AEGIS_LOG_LEVEL: 'info', ...env }, /Aegis worker /, {
    spawned: (child) => children.push(child),
  });
  return { child: running.child, pid: running.child.pid!, output: running.output };
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolvePromise) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolvePromise();
    child.removeAllListeners('exit');
    child.once('exit', () => resolvePromise());
    child.kill('SIGTERM');
  });

/** pid of the process holding a job: worker ids are host:pid:random. */
const pidOf = (job: JobRow) => Number(job.lease_owner?.split(':')[1]);

let database: TestDatabase;
let handle: DatabaseHandle;
beforeAll(async () => {
  if (!postgres) return;
  database = await cloneDatabase(inject('databaseTemplate'));
  handle = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
});
afterAll(async () => {
  await Promise.all(children.map(stop));
  await handle?.close();
  if (database) rmSync(database.dataDir, { recursive: true, force: true });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!postgres)('aegis worker processes on one PostgreSQL database', () => {
  it('a worker killed mid-job: another worker takes its jobs over after the lease and completes each exactly once', async () => {
    const url = database.databaseUrl!;
    const env = { AEGIS_JOB_LEASE_MS: '2000', AEGIS_SCHEDULER: 'false' };
    // The survivor also serves its metrics (any free port, printed at start).
    const [a, b] = await Promise.all([startWorker(url, env, ['--concurrency', '3']), startWorker(url, { ...env, AEGIS_METRICS_PORT: '0' }, ['--concurrency', '3'])]);
    const dir = mkdtempSync(join(tmpdir(), 'aegis-jobs-'));
    dirs.push(dir);
    const record = join(dir, 'completions');

    const db = handle.db;
    const jobs = await enqueueMany(db, Array.from({ length: 6 }, () => ({ kind: 'test.sleep', payload: { ms: 3_000, record }, maxAttempts: 3 })));
    const running = await until(async () => {
      const rows = await Promise.all(jobs.map((j) => getJob(db, j.id)));
      return rows.every((r) => r?.state === 'running') ? (rows as JobRow[]) : undefined;
    }, 60_000);
    // Both workers took a share (three places each).
    expect(new Set(running.map(pidOf))).toEqual(new Set([a.pid, b.pid]));
    const victims = running.filter((r) => pidOf(r) === a.pid).map((r) => r.id);
    expect(victims).toHaveLength(3);

    a.child.kill('SIGKILL');
    const done = await until(async () => {
      const rows = await Promise.all(jobs.map((j) => getJob(db, j.id)));
      return rows.every((r) => r?.state === 'completed') ? (rows as JobRow[]) : undefined;
    }, 90_000);

    for (const job of done) {
      expect(job.result).toMatchObject({ pid: b.pid });
      expect(job.attempts).toBe(victims.includes(job.id) ? 2 : 1);
      if (victims.includes(job.id)) expect(job.last_error).toContain(`lease expired: worker ${running.find((r) => r.id === job.id)!.lease_owner}`);
    }
    // The handler's own record of finishing: once per job, all by the survivor.
    const lines = readFileSync(record, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(new Set(lines.map((l) => l.split(' ')[0]))).toEqual(new Set(jobs.map((j) => j.id)));
    expect(lines.every((l) => l.endsWith(` ${b.pid}`))).toBe(true);
    // Its job runs are counted on its own metrics port: the six it completed.
    const metricsUrl = /metrics\s+(http:\S+\/metrics)/.exec(b.output())?.[1];
    expect(metricsUrl).toBeDefined();
    const scrape = await (await fetch(metricsUrl!)).text();
    expect(scrape).toMatch(/^aegis_jobs_finished_total\{kind="test\.sleep",result="completed"\} 6$/m);
    await stop(b.child);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('two scheduler processes turn an every-minute schedule into exactly one scan job per minute', async () => {
    const url = database.databaseUrl!;
    // A tick every 25 ms in both processes, so that they contend for every due schedule.
    const env = { AEGIS_SCHEDULER_TICK_MS: '25' };
    const workers = await Promise.all([startWorker(url, env, ['--kinds', 'test.sleep']), startWorker(url, env, ['--kinds', 'test.sleep'])]);
    const db = handle.db;
    const orgId = await ensureOrganization(db, 'scheduled');
    const schedules = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        insertSchedule(db, orgId, { name: `every minute ${i}`, scan_type: 'sast', target: 'https://git.example.com/shop.git', cron: '* * * * *', timezone: 'UTC', enabled: true, config: {}, labels: {}, next_run_at: null }),
      ),
    );
    const ids = schedules.map((s) => s.id);
    // Six minutes of due times, played quickly: each round makes every schedule due for the next one.
    const MINUTE = 60_000;
    // After each run a schedule's real next run is the coming minute; the rounds take seconds, so
    // they start well before it, or that minute would fire once more mid-test.
    if (Date.now() % MINUTE > MINUTE - 20_000) await new Promise((r) => setTimeout(r, MINUTE - (Date.now() % MINUTE) + 500));
    const base = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      await db.updateTable('scan_schedules').set({ next_run_at: new Date(base + round * MINUTE) }).where('id', 'in', ids).execute();
      await until(async () => {
        const due = await db.selectFrom('scan_schedules').select('id').where('id', 'in', ids).where('next_run_at', '<=', new Date()).execute();
        return due.length === 0 || undefined;
      }, 10_000);
    }
    // Whatever the scan jobs carry (the scans module makes them), each run's job has the
    // schedule's dedupe key: schedule:<id>:<due time>.
    const jobs = await db.selectFrom('jobs').select(['kind', 'dedupe_key']).where('org_id', '=', orgId).execute();
    expect(jobs).toHaveLength(ids.length * rounds);
    expect(new Set(jobs.map((j) => j.kind))).toEqual(new Set(['scan']));
    for (const id of ids) {
      const keys = jobs.map((j) => j.dedupe_key).filter((k) => k?.startsWith(`schedule:${id}:`)).sort();
      expect(keys).toEqual(Array.from({ length: rounds }, (_, round) => `schedule:${id}:${new Date(base + round * MINUTE).toISOString()}`));
    }
    const fired = workers.map((w) => w.output().split('\n').filter((l) => l.includes('scheduler: schedule fired')).length);
    expect(fired[0]! + fired[1]!).toBe(ids.length * rounds);
    await Promise.all(workers.map((w) => stop(w.child)));
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe('aegis worker', () => {
  it('refuses to start without DATABASE_URL (the embedded database belongs to aegis serve)', async () => {
    const child = spawn(process.execPath, [AEGIS, 'worker'], { env: { ...process.env, DATABASE_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(2);
    expect(stderr).toContain('set DATABASE_URL');
  }, PROCESS_TEST_TIMEOUT_MS);
});
