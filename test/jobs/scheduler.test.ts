// The scheduler on a real database: due schedules become one scan job per due time, missed runs
// collapse into one, next_run_at moves past now, and concurrent schedulers never double a run.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../platform/db/database.ts';
import { enqueue } from '../../platform/jobs/queue.ts';
import { Scheduler, SCAN_JOB_KIND, scheduleDedupeKey } from '../../platform/jobs/scheduler.ts';
import { ensureOrganization } from '../../api/accounts/keys/bootstrap.ts';
import { insertSchedule, type ScheduleFields } from '../../api/schedules/store.ts';
import { captureLog, onPostgres, openJobsDatabase, type JobsDatabase } from './support.ts';

let t: JobsDatabase;
let db: Db;
let orgId: string;
beforeAll(async () => {
  t = await openJobsDatabase();
  db = t.db;
  orgId = await ensureOrganization(db, 'scheduler-tests');
});
afterAll(() => t.close());

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

async function schedule(fields: Partial<ScheduleFields> & { next_run_at: Date | null }) {
  return insertSchedule(db, orgId, {
    name: 'nightly',
    scan_type: 'dast',
    target: 'https://app.example.com',
    cron: '* * * * *',
    timezone: 'UTC',
    enabled: true,
    config: { depth: 2 },
    labels: {},
    ...fields,
  });
}

const jobsOf = (scheduleId: string) =>
  db.selectFrom('jobs').selectAll().where('kind', '=', SCAN_JOB_KIND).where(sql<boolean>`payload->>'schedule_id' = ${scheduleId}`).orderBy('id').execute();

const scheduler = (on: Db = db) => new Scheduler({ db: on, log: captureLog().log });

describe('scheduler', () => {
  it('missed runs after downtime collapse into one scan job; next_run_at moves to the first cron time after now', async () => {
    const missedSince = new Date(Date.now() - 3 * 24 * HOUR);
    const hourly = await schedule({ name: 'hourly', cron: '0 * * * *', next_run_at: missedSince });
    await scheduler().tick();

    const jobs = await jobsOf(hourly.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      org_id: orgId,
      kind: 'scan',
      state: 'queued',
      dedupe_key: scheduleDedupeKey(hourly.id, missedSince),
      payload: { schedule_id: hourly.id, schedule_name: 'hourly', scan_type: 'dast', target: 'https://app.example.com', config: { depth: 2 }, scheduled_for: missedSince.toISOString() },
    });
    const after = await db.selectFrom('scan_schedules').select(['next_run_at', 'updated_at']).where('id', '=', hourly.id).executeTakeFirstOrThrow();
    const nextHour = new Date(Math.floor(Date.now() / HOUR) * HOUR + HOUR);
    expect(after.next_run_at).toEqual(nextHour);
    // Computed state, not an edit by the user.
    expect(after.updated_at).toEqual(hourly.updated_at);

    await scheduler().tick();
    expect(await jobsOf(hourly.id)).toHaveLength(1);
  });

  it('leaves disabled schedules and schedules not yet due alone', async () => {
    const disabled = await schedule({ enabled: false, next_run_at: new Date(Date.now() - MINUTE) });
    const future = await schedule({ next_run_at: new Date(Date.now() + HOUR) });
    await scheduler().tick();
    expect(await jobsOf(disabled.id)).toEqual([]);
    expect(await jobsOf(future.id)).toEqual([]);
  });

  it('never makes a second job for a due time that already has one', async () => {
    const due = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 5 * MINUTE);
    const every = await schedule({ next_run_at: due });
    await scheduler().tick();
    // Someone puts next_run_at back to the same due time: the dedupe key still holds.
    await db.updateTable('scan_schedules').set({ next_run_at: due }).where('id', '=', every.id).execute();
    expect(await scheduler().tick()).toBe(0);
    expect(await jobsOf(every.id)).toHaveLength(1);
  });

  it('a tick handles more due schedules than one batch', async () => {
    const due = new Date(Date.now() - MINUTE);
    const many = await Promise.all(Array.from({ length: 7 }, () => schedule({ next_run_at: due })));
    const small = new Scheduler({ db, log: captureLog().log, batchSize: 3 });
    expect(await small.tick()).toBe(7);
    for (const s of many) expect(await jobsOf(s.id)).toHaveLength(1);
  });

  it('two schedulers ticking at the same time produce exactly one job per schedule per due time', async () => {
    // Each round sets next_run_at itself; the cron (29 February only) just keeps the time a tick
    // moves it to out of reach, so a round that crosses a minute boundary on a slow machine cannot
    // make that next time due too.
    const schedules = await Promise.all(Array.from({ length: 10 }, () => schedule({ cron: '0 0 29 2 *', next_run_at: null })));
    const ids = schedules.map((s) => s.id);
    // Separate connection pools on PostgreSQL: truly concurrent transactions.
    const other = onPostgres() ? (await t.openAnother()).db : db;
    const [a, b] = [scheduler(db), scheduler(other)];
    const base = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
    for (let round = 0; round < 8; round++) {
      // Each round plays one due time, a minute after the last.
      await db.updateTable('scan_schedules').set({ next_run_at: new Date(base + round * MINUTE) }).where('id', 'in', ids).execute();
      await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    }
    for (const id of ids) {
      const jobs = await jobsOf(id);
      expect(jobs.map((j) => j.payload.scheduled_for)).toEqual(Array.from({ length: 8 }, (_, round) => new Date(base + round * MINUTE).toISOString()));
    }
  });

  it('a custom runner starts each run in the scheduler transaction; one that throws skips only its own run', async () => {
    const due = new Date(Date.now() - MINUTE);
    const good = await schedule({ name: 'good', next_run_at: due });
    const broken = await schedule({ name: 'broken', next_run_at: due });
    const captured = captureLog();
    const custom = new Scheduler({
      db,
      log: captured.log,
      async runner(trx, due, _dueAt, dedupeKey) {
        const { created } = await enqueue(trx, { kind: `custom.${due.name}`, dedupeKey });
        if (due.name === 'broken') throw new Error('cannot start this one');
        return created;
      },
    });
    expect(await custom.tick()).toBe(1);
    expect(await db.selectFrom('jobs').select('kind').where('dedupe_key', '=', scheduleDedupeKey(good.id, due)).executeTakeFirst()).toEqual({ kind: 'custom.good' });
    // Rolled back to the run's savepoint; the schedule still moves on.
    expect(await db.selectFrom('jobs').select('id').where('dedupe_key', '=', scheduleDedupeKey(broken.id, due)).executeTakeFirst()).toBeUndefined();
    const rows = await db.selectFrom('scan_schedules').select('next_run_at').where('id', 'in', [good.id, broken.id]).execute();
    for (const row of rows) expect(row.next_run_at!.getTime()).toBeGreaterThan(Date.now());
    expect(captured.lines.find((l) => l.msg === 'scheduler: starting the run failed; it is skipped')).toMatchObject({ schedule_id: broken.id });
  });

  it('start() ticks on its own until stopped', async () => {
    const due = await schedule({ next_run_at: new Date(Date.now() - MINUTE) });
    const running = new Scheduler({ db, log: captureLog().log, tickMs: 20 }).start();
    try {
      await expect.poll(async () => (await jobsOf(due.id)).length, { timeout: 5_000 }).toBe(1);
    } finally {
      await running.stop();
    }
  });
});
