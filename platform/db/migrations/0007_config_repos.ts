import { sql, type Kysely } from 'kysely';

// Config repositories (continuous GitOps): a git repository the platform follows by itself, the
// record of each sync, and the source-control deliveries already acted on (idempotency by delivery
// id). Secrets — the webhook secret, the sync key, credentials in the URL — are stored sealed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('config_repos')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // Without credentials, for display; the URL with them (if it had any) is in url_sealed.
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('url_sealed', 'text')
    // host/path of the repository, lower-cased, without scheme, user, port or .git: what push
    // deliveries are matched on (their clone, HTML and SSH URLs all reduce to it).
    .addColumn('repo_key', 'text', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    // The ownership source id the reconciler labels objects with; unique per organisation so that two
    // repositories never prune each other's objects.
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('auto_sync', 'boolean', (c) => c.notNull())
    .addColumn('prune', 'boolean', (c) => c.notNull())
    .addColumn('self_heal', 'boolean', (c) => c.notNull())
    .addColumn('deny_weakening', 'boolean', (c) => c.notNull())
    .addColumn('max_changes', 'integer', (c) => c.notNull())
    .addColumn('max_change_percent', 'integer', (c) => c.notNull())
    .addColumn('poll_interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('credentials_ref', 'text')
    .addColumn('webhook_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('webhook_secret_last4', 'text', (c) => c.notNull())
    // The API key syncs act with (shown in the key list; revoking it stops the syncs).
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('api_key_sealed', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('unknown'))
    .addColumn('status_message', 'text')
    .addColumn('last_synced_commit', 'text')
    .addColumn('last_synced_at', 'timestamptz')
    .addColumn('last_checked_at', 'timestamptz')
    .addColumn('next_poll_at', 'timestamptz', (c) => c.notNull())
    // The job running a sync of this repository (one at a time); free when that job has ended.
    .addColumn('sync_job_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('config_repos_org_name_key', ['org_id', 'name'])
    .addUniqueConstraint('config_repos_org_source_key', ['org_id', 'source'])
    .execute();
  await db.schema.createIndex('config_repos_org_idx').on('config_repos').columns(['org_id', 'id']).execute();
  await db.schema.createIndex('config_repos_repo_key_idx').on('config_repos').column('repo_key').execute();
  await db.schema.createIndex('config_repos_poll_idx').on('config_repos').column('next_poll_at').execute();

  await db.schema
    .createTable('config_repo_syncs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('repo_id', 'text', (c) => c.notNull().references('config_repos.id').onDelete('cascade'))
    .addColumn('job_id', 'text')
    .addColumn('trigger', 'text', (c) => c.notNull().check(sql`trigger in ('push', 'poll', 'manual', 'drift')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'completed')`))
    .addColumn('result', 'text', (c) => c.check(sql`result in ('applied', 'unchanged', 'planned', 'refused', 'failed')`))
    .addColumn('failure_stage', 'text')
    .addColumn('forced', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('delivery_id', 'text')
    .addColumn('commit_sha', 'text')
    .addColumn('summary', 'jsonb')
    .addColumn('changes', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('config_repo_syncs_repo_idx').on('config_repo_syncs').columns(['repo_id', 'id']).execute();

  await db.schema
    .createTable('source_control_deliveries')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sync_ids', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('source_control_deliveries_pkey', ['provider', 'delivery_id'])
    .execute();
  await db.schema.createIndex('source_control_deliveries_received_idx').on('source_control_deliveries').column('received_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('source_control_deliveries').execute();
  await db.schema.dropTable('config_repo_syncs').execute();
  await db.schema.dropTable('config_repos').execute();
}
