// Polls config repositories: each one due (next_poll_at passed) gets a sync job with the trigger
// `poll`, which fetches the branch and either syncs a new commit or checks live state for drift.
// This catches pushes whose webhook was lost and hand-made changes. Runs where the scheduler runs;
// with several schedulers, a due repository is locked by one of them (SKIP LOCKED) and the dedupe
// key `config-repo:<id>:poll:<due>` makes a second job for the same due time impossible.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { Ticker } from '../../platform/jobs/ticker.ts';
import type { JobLogger } from '../../platform/jobs/types.ts';
import { nextPollAt, requestSync } from './store.ts';

export interface PollerOptions {
  db: Db;
  log: JobLogger;
  tickMs?: number;
  batchSize?: number;
}

export class ConfigRepoPoller {
  private readonly ticker: Ticker;
  private readonly db: Db;
  private readonly batchSize: number;

  constructor(options: PollerOptions) {
    this.db = options.db;
    this.batchSize = options.batchSize ?? 100;
    const log = options.log.child({ component: 'config-repo-poller' });
    this.ticker = new Ticker(() => this.tick(), options.tickMs ?? 1_000, (err) => log.error({ err }, 'config-repo poller: tick failed'));
  }

  start(): this {
    this.ticker.start();
    return this;
  }

  stop(): Promise<void> {
    return this.ticker.stop();
  }

  /** Queues a poll of every due repository; returns how many jobs it created. */
  async tick(): Promise<number> {
    const anyDue = await this.db.selectFrom('config_repos').select('id').where('next_poll_at', '<=', sql<Date>`now()`).limit(1).executeTakeFirst();
    if (!anyDue) return 0;
    const created = await this.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom('config_repos')
        .select(['id', 'org_id', 'next_poll_at', 'poll_interval_seconds'])
        .where('next_poll_at', '<=', sql<Date>`now()`)
        .orderBy('next_poll_at')
        .limit(this.batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      let jobs = 0;
      for (const repo of due) {
        const queued = await requestSync(trx, repo, { trigger: 'poll', withRecord: false, dedupeKey: `config-repo:${repo.id}:poll:${repo.next_poll_at.toISOString()}` });
        if (queued.created) jobs++;
        // Pushed on now; the sync itself moves it again when it ends.
        await trx.updateTable('config_repos').set({ next_poll_at: nextPollAt(repo.poll_interval_seconds) }).where('id', '=', repo.id).execute();
      }
      return jobs;
    });
    if (created > 0) announceEnqueued(this.db);
    return created;
  }
}
