import { sql, type Kysely } from 'kysely';

// The durable job queue (platform/jobs): one row per job, claimed with FOR UPDATE SKIP LOCKED so that any
// number of worker processes share it. Finished jobs stay as rows (dead ones for inspection and
// manual retry); partial indexes keep the claim and lease paths small however many accumulate.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Null for jobs that belong to no organisation (maintenance, tests); a deleted organisation takes its jobs along.
    .addColumn('org_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('state', 'text', (c) =>
      c.notNull().defaultTo('queued').check(sql`state in ('queued', 'running', 'completed', 'failed', 'canceled', 'dead')`),
    )
    // Higher runs first among jobs that are due.
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    // Times the job was started (claimed); with lease_owner it fences completions (platform/jobs/claim.ts).
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(5).check(sql`max_attempts >= 1`))
    .addColumn('run_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0).check(sql`progress >= 0 and progress <= 1`))
    .addColumn('result', 'jsonb')
    .addColumn('cancel_requested', 'boolean', (c) => c.notNull().defaultTo(false))
    // Unique when set: the scheduler's `schedule:<id>:<due time>` makes a run exactly-once.
    .addColumn('dedupe_key', 'text', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();

  // Claiming: due queued jobs of a kind in priority order.
  await db.schema
    .createIndex('jobs_claim_idx')
    .on('jobs')
    .columns(['kind', 'priority desc', 'run_at', 'id'])
    .where(sql.ref('state'), '=', 'queued')
    .execute();
  // Running jobs: counted per kind for global caps, and swept for expired leases (they are few, so
  // the sweep reads them all). lease_expires_at stays out of every index, so the heartbeat that
  // renews it twice a second can update rows in place (HOT) without touching an index.
  await db.schema.createIndex('jobs_running_idx').on('jobs').column('kind').where(sql.ref('state'), '=', 'running').execute();
  // Dead jobs listed for inspection, newest first.
  await db.schema.createIndex('jobs_dead_idx').on('jobs').columns(['kind', 'id']).where(sql.ref('state'), '=', 'dead').execute();
  await db.schema.createIndex('jobs_org_idx').on('jobs').columns(['org_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('jobs').execute();
}
