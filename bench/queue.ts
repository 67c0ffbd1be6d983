// Job queue throughput: jobs/s enqueued (one per statement, one at a time and 16 in flight; and in
// batches of 1 000) and jobs/s completed by K in-process workers running a no-op handler. On
// PostgreSQL (a scratch database on BENCH_DATABASE_URL, DATABASE_URL or the local server) and on
// the embedded database.
//   node bin/run-ts.mjs bench/queue.ts     BENCH_JOBS=10000 BENCH_WORKERS=4 BENCH_CONCURRENCY=16
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openDatabase, type DatabaseHandle, type Db } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { enqueue, enqueueMany } from '../platform/jobs/queue.ts';
import type { JobHandlers } from '../platform/jobs/types.ts';
import { Worker } from '../platform/jobs/worker.ts';
import { onEachDatabase } from './support/scratch-database.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 10_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const IN_FLIGHT = 16;

const log = pino({ level: 'warn' });

const rate = (count: number, ms: number) => `${Math.round((count / ms) * 1000).toLocaleString('en-US')} jobs/s`.padStart(14);
const line = (label: string, count: number, ms: number) => console.log(`  ${label.padEnd(44)} ${rate(count, ms)}  (${count} in ${(ms / 1000).toFixed(2)} s)`);

async function timed(fn: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function countDone(db: Db, kind: string): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('kind', '=', kind)
    .where('state', '=', 'completed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function run(label: string, databaseUrl: string | undefined): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-queue-'));
  const main = await openDatabase({ databaseUrl, dataDir });
  // Each worker gets its own pool on PostgreSQL, as separate `aegis worker` processes would.
  const pools: DatabaseHandle[] = [];
  try {
    await migrateToLatest(main.db);
    const db = main.db;
    console.log(`${label}: ${JOBS} no-op jobs per phase`);

    line('enqueue, one statement each, 1 in flight', JOBS, await timed(async () => {
      for (let i = 0; i < JOBS; i++) await enqueue(db, { kind: 'bench.single', payload: { i } });
    }));

    let next = 0;
    line(`enqueue, one statement each, ${IN_FLIGHT} in flight`, JOBS, await timed(async () => {
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
        while (next < JOBS) await enqueue(db, { kind: 'bench.parallel', payload: { i: next++ } });
      }));
    }));

    line('enqueue, batches of 1 000', JOBS, await timed(async () => {
      await enqueueMany(db, Array.from({ length: JOBS }, (_, i) => ({ kind: 'bench.noop', payload: { i } })));
    }));

    const handlers: JobHandlers = { 'bench.noop': { concurrency: CONCURRENCY, run: async () => null } };
    for (let i = 0; i < WORKERS; i++) pools.push(databaseUrl ? await openDatabase({ databaseUrl, dataDir, poolSize: 4 }) : main);
    const workers: Worker[] = [];
    const ms = await timed(async () => {
      for (const pool of pools) workers.push(new Worker({ db: pool.db, log, handlers, concurrency: CONCURRENCY }).start());
      while ((await countDone(db, 'bench.noop')) < JOBS) await new Promise((resolve) => setTimeout(resolve, 50));
    });
    await Promise.all(workers.map((w) => w.stop()));
    line(`complete, ${WORKERS} workers × ${CONCURRENCY} at once`, JOBS, ms);
  } finally {
    for (const pool of pools) if (pool !== main) await pool.close();
    await main.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await onEachDatabase(run);
