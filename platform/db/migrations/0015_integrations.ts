import { sql, type Kysely } from 'kysely';

// Connections to external providers (spec 5.5; docs/integrations.md): source control (GitHub,
// GitLab) and ticket trackers (Jira Cloud, GitHub Issues, Linear). One row per connection, shared
// by the organisation; tokens sealed with the server key (platform/crypto/secret-box.ts), never in clear.
// Tickets link a finding to one issue in a tracker (one per finding: creation is idempotent by
// finding); pull-request checks remember the check run and the summary comment Aegis posted on a
// pull request, so later pushes update them in place.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('source_control', 'ticket_tracker')`))
    .addColumn('provider', 'text', (c) => c.notNull())
    // `oauth`: tokens from the provider's authorization flow; `token`: a token the admin pasted.
    .addColumn('auth_type', 'text', (c) => c.notNull().check(sql`auth_type in ('oauth', 'token')`))
    // `pending` until the OAuth callback completes; `error` when the provider refuses the token.
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'active', 'error')`))
    .addColumn('error', 'text')
    .addColumn('account', 'text')
    .addColumn('account_id', 'text')
    .addColumn('scopes', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    // The provider API this connection talks to (a Jira site, a self-managed GitLab).
    .addColumn('api_base_url', 'text')
    // Provider specifics that are not secret (Jira cloud id and site URL, the e-mail of an API token).
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    // What the organisation chose for this connection (pull-request checks: scan types, failing severity).
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('access_token_sealed', 'text')
    .addColumn('refresh_token_sealed', 'text')
    .addColumn('token_expires_at', 'timestamptz')
    // Verifies the provider's webhooks for this connection (trackers' status changes, pull requests).
    .addColumn('webhook_secret_sealed', 'text')
    .addColumn('connected_by', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('integrations_org_idx').on('integrations').columns(['org_id', 'id']).execute();
  // An OAuth connect flow (api/accounts/sign-in/flows.ts) completes the pending connection it names.
  await db.schema.alterTable('auth_flows').addColumn('integration_id', 'text', (c) => c.references('integrations.id').onDelete('cascade')).execute();

  await db.schema
    .createTable('vulnerability_tickets')
    .addColumn('vulnerability_id', 'text', (c) => c.primaryKey().references('vulnerabilities.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // A disconnected integration leaves its links (the tickets still exist at the tracker).
    .addColumn('integration_id', 'text', (c) => c.references('integrations.id').onDelete('set null'))
    .addColumn('provider', 'text', (c) => c.notNull())
    // `creating` while the job talks to the tracker; `open` / `closed` mirror the tracker's state.
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('creating', 'open', 'closed', 'failed')`))
    .addColumn('external_id', 'text')
    .addColumn('key', 'text')
    .addColumn('url', 'text')
    .addColumn('request', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('vulnerability_tickets_external_idx').on('vulnerability_tickets').columns(['provider', 'external_id']).execute();

  await db.schema
    .createTable('pull_request_checks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('integration_id', 'text', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    // `owner/name` on GitHub, the project path on GitLab.
    .addColumn('repository', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('base_sha', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'scanning', 'completed', 'failed')`))
    .addColumn('conclusion', 'text')
    .addColumn('check_id', 'text')
    .addColumn('comment_id', 'text')
    .addColumn('summary', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('pull_request_checks_pr_idx').on('pull_request_checks').columns(['integration_id', 'repository', 'number']).unique().execute();

  // A config repository may clone through a source-control connection; disconnecting leaves the
  // repository, whose next fetch then fails until another source of credentials is set.
  await db.schema.alterTable('config_repos').addColumn('connection_id', 'text', (c) => c.references('integrations.id').onDelete('set null')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('config_repos').dropColumn('connection_id').execute();
  await db.schema.dropTable('pull_request_checks').execute();
  await db.schema.dropTable('vulnerability_tickets').execute();
  await db.schema.alterTable('auth_flows').dropColumn('integration_id').execute();
  await db.schema.dropTable('integrations').execute();
}
