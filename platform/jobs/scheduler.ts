// Turns enabled scan schedules into `scan` jobs at their cron times. Every tick, in one
// transaction: lock the due schedules (FOR UPDATE SKIP LOCKED), enqueue one job each with the dedupe
// key `schedule:<id>:<due time>`, and move next_run_at to the first cron time after now.
//
// Exactly once with any number of schedulers: a due schedule is locked by one of them; the others
// skip it, and once it commits they see next_run_at in the future (PostgreSQL re-checks a locked
// row's WHERE against its newest version). The dedupe key makes a second job for the same due time
// impossible even so. Missed runs collapse: after downtime a schedule fires once, for the due time it
// missed first, and next_run_at jumps past now instead of walking through every missed time.
//
// What a due schedule does is a ScheduleRunner: by default it enqueues a `scan` job carrying the
// schedule; the scans module passes its own (startJobs' startScheduledScan) to create its scan
// record and job instead, in the same transaction and with the same dedupe key.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { ScanScheduleRow } from '../db/schema.ts';
import { nextRunAt } from '../../schemas/checks/schedule.ts';
import { enqueue } from './queue.ts';
import { announceEnqueued } from './signals.ts';
import { Ticker } from './ticker.ts';
import type { JobLogger } from './types.ts';

export const SCAN_JOB_KIND = 'scan';

/** Payload of a scan job made by the scheduler. */
export interface ScheduledScanPayload {
  [key: string]: unknown;
  schedule_id: string;
  schedule_name: string;
  scan_type: string;
  target: string;
  config: Record<string, unknown>;
  /** The due time this run is for (ISO 8601). */
  scheduled_for: string;
}

export const scheduleDedupeKey = (scheduleId: string, dueAt: Date) => `schedule:${scheduleId}:${dueAt.toISOString()}`;

/**
 * Starts the run of `schedule` due at `dueAt`, inside the scheduler's transaction (use `trx` only).
 * Pass `dedupeKey` on to the queue: it is what makes the run happen once whoever fires it. Returns
 * whether it created the run (false: the key was used already, or the schedule has nothing to run).
 * Throwing skips this run, not the others.
 */
export type ScheduleRunner = (trx: Db, schedule: ScanScheduleRow, dueAt: Date, dedupeKey: string) => Promise<boolean>;

/** The default runner: a `scan` job whose payload is the schedule (ScheduledScanPayload). */
export const enqueueScheduledScan: ScheduleRunner = async (trx, schedule, dueAt, dedupeKey) => {
  const payload: ScheduledScanPayload = {
    schedule_id: schedule.id,
    schedule_name: schedule.name,
    scan_type: schedule.scan_type,
    target: schedule.target,
    config: schedule.config,
    scheduled_for: dueAt.toISOString(),
  };
  const { created } = await enqueue(trx, { kind: SCAN_JOB_KIND, orgId: schedule.org_id, payload, maxAttempts: 3, dedupeKey });
  return created;
};

export interface SchedulerOptions {
  db: Db;
  log: JobLogger;
  /** Time between ticks (default 1 000 ms). Cron has minute resolution; a second bounds the lateness. */
  tickMs?: number | undefined;
  /** Schedules one transaction handles at most; a tick repeats while it fills them. */
  batchSize?: number | undefined;
  /** What a due schedule does (default enqueueScheduledScan). */
  runner?: ScheduleRunner | undefined;
}

export class Scheduler {
  private readonly db: Db;
  private readonly log: JobLogger;
  private readonly tickMs: number;
  private readonly batchSize: number;
  private readonly runner: ScheduleRunner;
  private ticker: Ticker | undefined;

  constructor(options: SchedulerOptions) {
    this.db = options.db;
    this.log = options.log.child({ component: 'scheduler' });
    this.tickMs = Math.max(10, options.tickMs ?? 1_000);
    this.batchSize = options.batchSize ?? 100;
    this.runner = options.runner ?? enqueueScheduledScan;
  }

  start(): this {
    this.ticker = new Ticker(() => this.tick(), this.tickMs, (err) => this.log.error({ err }, 'scheduler: tick failed')).start();
    return this;
  }

  async stop(): Promise<void> {
    await this.ticker?.stop();
  }

  /** Enqueues every due schedule's run; returns how many jobs it created. */
  async tick(): Promise<number> {
    let created = 0;
    for (;;) {
      // Cheap look first: most ticks find nothing due and need no transaction.
      const anyDue = await this.db
        .selectFrom('scan_schedules')
        .select('id')
        .where('enabled', '=', true)
        .where('next_run_at', '<=', sql<Date>`now()`)
        .limit(1)
        .executeTakeFirst();
      if (!anyDue) break;
      const { handled, jobs } = await this.db.transaction().execute((trx) => this.fire(trx));
      created += jobs;
      if (jobs > 0) announceEnqueued(this.db);
      // A full batch may leave more due schedules; a short one means the rest are locked by another scheduler.
      if (handled < this.batchSize) break;
    }
    return created;
  }

  private async fire(trx: Db): Promise<{ handled: number; jobs: number }> {
    const due = await trx
      .selectFrom('scan_schedules')
      .selectAll()
      .select(sql<Date>`now()`.as('db_now'))
      .where('enabled', '=', true)
      .where('next_run_at', '<=', sql<Date>`now()`)
      .orderBy('next_run_at')
      .limit(this.batchSize)
      .forUpdate()
      .skipLocked()
      .execute();
    let jobs = 0;
    for (const { db_now: now, ...schedule } of due) {
      const dueAt = schedule.next_run_at!;
      let next: Date | null;
      try {
        // Strictly after the database's now: whatever was missed collapses into this one run.
        next = nextRunAt({ cron: schedule.cron, timezone: schedule.timezone }, now);
      } catch (err) {
        // Validated when saved, so only a time-zone database change gets here. Firing it every tick
        // would be worse than stopping: it stays enabled with no next run until someone edits it.
        this.log.error({ err, schedule_id: schedule.id }, 'scheduler: cannot compute the next run; schedule paused');
        next = null;
      }
      // A savepoint per run: one that fails is skipped (and logged) without undoing the others.
      let created = false;
      await sql`savepoint schedule_run`.execute(trx);
      try {
        created = await this.runner(trx, schedule, dueAt, scheduleDedupeKey(schedule.id, dueAt));
        await sql`release savepoint schedule_run`.execute(trx);
      } catch (err) {
        await sql`rollback to savepoint schedule_run`.execute(trx);
        this.log.error({ err, schedule_id: schedule.id, scheduled_for: dueAt.toISOString() }, 'scheduler: starting the run failed; it is skipped');
      }
      if (created) jobs += 1;
      // next_run_at is computed state, not an edit: updated_at stays as the user left it.
      await trx.updateTable('scan_schedules').set({ next_run_at: next }).where('id', '=', schedule.id).execute();
      this.log.info({ schedule_id: schedule.id, scheduled_for: dueAt.toISOString(), next_run_at: next?.toISOString() ?? null, created }, 'scheduler: schedule fired');
    }
    return { handled: due.length, jobs };
  }
}
