import { sql, type Kysely } from 'kysely';

// The Shield gateway as an edge (issue 41: docs/shield-gateway.md, "TLS", "Domain proof"):
//   - `shield_sites.tls`: the site's TLS settings (mode acme|custom|off, HTTP→HTTPS redirect, HSTS,
//     minimum version). Sites that existed before keep serving plain HTTP only (`off`): an upgrade
//     does not start certificate orders nobody asked for.
//   - `shield_sites.verification_token` and `domain_verified_*`: the proof that the organisation
//     controls the site's domain (a DNS TXT record, an HTTP token served by the origin, or a
//     successful ACME validation), re-checked like organisation domains.
//   - `shield_certificates`: the certificate a site is served with, uploaded or obtained by ACME;
//     the private key sealed with the server key (bound to the row), so every gateway node serves the
//     same certificate and no response ever carries the key.
//   - `shield_certificate_orders`: where obtaining (or renewing) a site's ACME certificate stands,
//     with its failures and the time of the next attempt (backoff).
//   - `acme_accounts`: one ACME account per directory URL, its key sealed.
//   - `acme_challenges`: what the gateways answer while an order is validated: HTTP-01 tokens
//     (GET /.well-known/acme-challenge/<token>) and TLS-ALPN-01 certificates (ALPN acme-tls/1).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('shield_sites')
    .addColumn('tls', 'jsonb', (c) => c.notNull().defaultTo(sql`'{"mode":"off","redirect_http":false,"hsts":null,"min_version":"1.2"}'::jsonb`))
    // 128 random bits per site, without an extension (PGlite has no pgcrypto); existing sites get theirs here.
    .addColumn('verification_token', 'text', (c) => c.notNull().defaultTo(sql`md5(random()::text || clock_timestamp()::text)`))
    .addColumn('domain_verified_at', 'timestamptz')
    .addColumn('domain_verified_by', 'text')
    .addColumn('domain_checked_at', 'timestamptz')
    .addColumn('domain_check_error', 'text')
    .execute();
  // Domains served by more than one organisation are decided by proof: find them fast.
  await db.schema.createIndex('shield_sites_domain_idx').on('shield_sites').column('domain').execute();

  await db.schema
    .createTable('shield_certificates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('site_id', 'text', (c) => c.notNull().unique().references('shield_sites.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('certificate_pem', 'text', (c) => c.notNull())
    .addColumn('private_key_sealed', 'text', (c) => c.notNull())
    .addColumn('names', 'jsonb', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('not_before', 'timestamptz', (c) => c.notNull())
    .addColumn('not_after', 'timestamptz', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('shield_certificate_orders')
    .addColumn('site_id', 'text', (c) => c.primaryKey().references('shield_sites.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('next_attempt_at', 'timestamptz')
    // The job working on the order while it is `pending`: one whose job died is taken up again.
    .addColumn('job_id', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('acme_accounts')
    .addColumn('directory_url', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text')
    .addColumn('account_url', 'text')
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('acme_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('key_authorization', 'text', (c) => c.notNull())
    .addColumn('certificate_pem', 'text')
    .addColumn('private_key_sealed', 'text')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('acme_challenges_lookup_idx').on('acme_challenges').columns(['type', 'domain']).execute();
  await db.schema.createIndex('acme_challenges_token_idx').on('acme_challenges').columns(['token']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('acme_challenges').execute();
  await db.schema.dropTable('acme_accounts').execute();
  await db.schema.dropTable('shield_certificate_orders').execute();
  await db.schema.dropTable('shield_certificates').execute();
  await db.schema.dropIndex('shield_sites_domain_idx').execute();
  await db.schema
    .alterTable('shield_sites')
    .dropColumn('tls')
    .dropColumn('verification_token')
    .dropColumn('domain_verified_at')
    .dropColumn('domain_verified_by')
    .dropColumn('domain_checked_at')
    .dropColumn('domain_check_error')
    .execute();
}
