import { sql, type Kysely } from 'kysely';

// People: users sign in (magic link, Google, SSO) and hold sessions; organisations have members
// with roles, pending invites, a plan and optionally an SSO connection. Every token (magic links,
// invites) is stored only as a SHA-256 digest.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table organizations add constraint organizations_plan_check check (plan in ('trial', 'pro', 'enterprise'))`.execute(db);
  await sql`alter table organizations alter column plan set default 'trial'`.execute(db);
  // The self-hosted bootstrap organisation keeps everything it could do before plans existed.
  await sql`update organizations set plan = 'enterprise' where slug = 'default'`.execute(db);

  await db.schema.alterTable('users').addColumn('last_login_at', 'timestamptz').execute();
  await sql`alter table memberships add constraint memberships_role_check check (role in ('owner', 'admin', 'member', 'viewer'))`.execute(db);
  await db.schema.createIndex('memberships_user_idx').on('memberships').column('user_id').execute();

  await db.schema
    .createTable('login_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('login_tokens_email_idx').on('login_tokens').columns(['email', 'created_at']).execute();
  await db.schema.createIndex('login_tokens_ip_idx').on('login_tokens').columns(['ip', 'created_at']).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('method', 'text', (c) => c.notNull())
    // The organisation whose identity provider authenticated this session (SSO), else null.
    .addColumn('sso_org_id', 'text', (c) => c.references('organizations.id').onDelete('set null'))
    .addColumn('user_agent', 'text')
    .addColumn('browser', 'text')
    .addColumn('ip', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').columns(['user_id', 'id']).execute();

  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member', 'viewer')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by_type', 'text', (c) => c.notNull())
    .addColumn('invited_by_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('invites_org_idx').on('invites').columns(['org_id', 'id']).execute();
  await db.schema.createIndex('invites_email_idx').on('invites').column('email').execute();

  await db.schema
    .createTable('sso_connections')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('protocol', 'text', (c) => c.notNull().check(sql`protocol in ('oidc', 'saml')`))
    .addColumn('oidc_issuer', 'text')
    .addColumn('oidc_client_id', 'text')
    .addColumn('oidc_client_secret', 'text') // sealed (platform/crypto/secret-box.ts)
    .addColumn('saml_metadata_url', 'text')
    .addColumn('saml_metadata_xml', 'text')
    .addColumn('saml_idp_entity_id', 'text')
    .addColumn('saml_idp_sso_url', 'text')
    .addColumn('saml_idp_certs', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('enforced', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('jit_domains', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('jit_role', 'text', (c) => c.notNull().defaultTo('member'))
    .addColumn('tested_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // One row per sign-in started at an identity provider (Google, an organisation's OIDC or SAML
  // IdP): the `state` the browser carries back, with what the callback needs to check the answer.
  await db.schema
    .createTable('auth_flows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('state_hash', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('code_verifier', 'text')
    .addColumn('nonce', 'text')
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();

  // SAML assertion ids seen, kept until the assertion itself expires: a replay is refused.
  await db.schema
    .createTable('saml_assertions')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('assertion_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('saml_assertions_pk', ['org_id', 'assertion_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['saml_assertions', 'auth_flows', 'sso_connections', 'invites', 'sessions', 'login_tokens']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.dropIndex('memberships_user_idx').execute();
  await sql`alter table memberships drop constraint memberships_role_check`.execute(db);
  await db.schema.alterTable('users').dropColumn('last_login_at').execute();
  await sql`alter table organizations alter column plan set default 'pro'`.execute(db);
  await sql`alter table organizations drop constraint organizations_plan_check`.execute(db);
}
