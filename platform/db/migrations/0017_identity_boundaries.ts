import { sql, type Kysely } from 'kysely';

// Trust boundaries between organisations (docs/security.md):
//   - `organization_domains`: e-mail domains an organisation proved it controls (a DNS TXT record
//     `_aegis-verify.<domain>` holding the token). Only a verified domain admits people by SSO just
//     in time or finds the organisation's SSO from an address. Re-checked periodically.
//   - `api_keys.owner_user_id`: the person whose role caps a key at creation and at every use (a
//     key made by a key inherits its maker's person; operator-made keys have none).
//   - `auth_flows.identity` / `completed_at`: a SAML response is verified when the identity
//     provider posts it, but the session starts only in the browser that began the sign-in (the
//     flow cookie, which a cross-site POST does not carry), so no page can post someone else's
//     assertion into a visitor's browser.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organization_domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'timestamptz')
    .addColumn('checked_at', 'timestamptz')
    .addColumn('check_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('organization_domains_org_domain_idx').on('organization_domains').columns(['org_id', 'domain']).unique().execute();
  // One organisation at a time holds a domain verified.
  await sql`create unique index organization_domains_verified_idx on organization_domains (domain) where verified_at is not null`.execute(db);

  await db.schema.alterTable('api_keys').addColumn('owner_user_id', 'text').execute();
  // Existing keys: the person who made them, or the person behind the key that made them.
  await sql`update api_keys set owner_user_id = created_by where created_by like 'usr\_%'`.execute(db);
  for (let depth = 0; depth < 8; depth++) {
    await sql`update api_keys k set owner_user_id = p.owner_user_id from api_keys p where k.created_by = p.id and k.owner_user_id is null and p.owner_user_id is not null`.execute(db);
  }

  await db.schema.alterTable('auth_flows').addColumn('identity', 'jsonb').addColumn('completed_at', 'timestamptz').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('auth_flows').dropColumn('identity').dropColumn('completed_at').execute();
  await db.schema.alterTable('api_keys').dropColumn('owner_user_id').execute();
  await db.schema.dropTable('organization_domains').execute();
}
