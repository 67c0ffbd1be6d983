// Queues scheduled discoveries: every active cloud connection whose latest run was created more
// than its interval ago (settings.discovery.interval_hours, default 24), or that never ran, gets a
// run with the trigger `schedule`. Runs where the job scheduler runs; with several processes the
// dedupe key `attack_surface.discover:<integration>:<due time>` (the due time follows from the
// latest run, which every process reads alike) makes the second one's job — and so its run — not
// happen. A connection with a run still queued or running is skipped.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { Ticker } from '../../platform/jobs/ticker.ts';
import type { JobLogger } from '../../platform/jobs/types.ts';
import { DEFAULT_INTERVAL_HOURS } from './account.ts';
import { DISCOVER_JOB, queueRun } from './store.ts';

export interface DiscoverySchedulerOptions {
  db: Db;
  log: JobLogger;
  /** How often to look for due connections (default 30 s). */
  tickMs?: number;
  /** Connections looked at per tick (default 200). */
  batchSize?: number;
}

const HOUR_MS = 3_600_000;

export class DiscoveryScheduler {
  private readonly ticker: Ticker;
  private readonly db: Db;
  private readonly batchSize: number;

  constructor(options: DiscoverySchedulerOptions) {
    this.db = options.db;
    this.batchSize = options.batchSize ?? 200;
    const log = options.log.child({ component: 'discovery-scheduler' });
    this.ticker = new Ticker(() => this.tick(), options.tickMs ?? 30_000, (err) => log.error({ err }, 'discovery scheduler: tick failed'));
  }

  start(): this {
    this.ticker.start();
    return this;
  }

  stop(): Promise<void> {
    return this.ticker.stop();
  }

  /** Queues a discovery of every due connection; returns how many runs it created. */
  async tick(now: Date = new Date()): Promise<number> {
    const candidates = await this.db
      .selectFrom('integrations as i')
      .leftJoinLateral(
        (eb) => eb.selectFrom('attack_surface_runs as r').select(['r.id as run_id', 'r.created_at as run_created_at', 'r.status as run_status']).whereRef('r.integration_id', '=', 'i.id').orderBy('r.created_at', 'desc').orderBy('r.id', 'desc').limit(1).as('latest'),
        (join) => join.onTrue(),
      )
      .select(['i.id', 'i.org_id', 'i.settings', 'latest.run_id', 'latest.run_created_at', 'latest.run_status'])
      .where('i.kind', '=', 'cloud')
      .where('i.status', '=', 'active')
      .where((eb) =>
        eb.or([
          eb('latest.run_id', 'is', null),
          eb(
            'latest.run_created_at',
            '<=',
            sql<Date>`${now}::timestamptz - make_interval(hours => coalesce((i.settings -> 'discovery' ->> 'interval_hours')::int, ${sql.lit(DEFAULT_INTERVAL_HOURS)}))`,
          ),
        ]),
      )
      .orderBy('i.id')
      .limit(this.batchSize)
      .execute();
    let created = 0;
    for (const c of candidates) {
      if (c.run_status === 'queued' || c.run_status === 'running') continue;
      const interval = (c.settings.discovery?.interval_hours ?? DEFAULT_INTERVAL_HOURS) * HOUR_MS;
      const slot = c.run_created_at ? new Date(c.run_created_at.getTime() + interval).toISOString() : 'first';
      const run = await this.db.transaction().execute((trx) => queueRun(trx, { id: c.id, org_id: c.org_id }, 'schedule', `${DISCOVER_JOB}:${c.id}:${slot}`));
      if (run) created++;
    }
    if (created > 0) announceEnqueued(this.db);
    return created;
  }
}
