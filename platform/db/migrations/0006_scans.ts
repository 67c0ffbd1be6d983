import { sql, type Kysely } from 'kysely';

// Scans and what they find. A scan is one run of one scanner over one target; a vulnerability is a
// finding identified across scans by (organisation, scan type, target, fingerprint), so a problem
// seen again is the same row with a later last_seen_at. scan_findings records which
// vulnerabilities each scan saw: the `scan_id` filter, diffs and "fixed" all read it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('scans')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('scan_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // What is scanned, normalised (repository URL without credentials, or `archive:<sha256>`):
    // scans of the same target are compared with each other.
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('source', 'jsonb', (c) => c.notNull())
    .addColumn('config', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('schedule_id', 'text')
    .addColumn('job_id', 'text')
    .addColumn('triggered_by', 'text')
    .addColumn('progress', 'real', (c) => c.notNull().defaultTo(0))
    .addColumn('summary', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('coverage', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('scans_org_idx').on('scans').columns(['org_id', 'id']).execute();
  // An uploaded archive waits here for the worker that runs its scan (which may be another host);
  // deleted when the scan finishes.
  await db.schema
    .createTable('scan_archives')
    .addColumn('scan_id', 'text', (c) => c.primaryKey().references('scans.id').onDelete('cascade'))
    .addColumn('content', 'bytea', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('scans_target_idx').on('scans').columns(['org_id', 'scan_type', 'target', 'id']).execute();

  await db.schema
    .createTable('vulnerabilities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('scan_type', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('rule_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('cwe', 'text')
    .addColumn('location', 'jsonb', (c) => c.notNull())
    .addColumn('evidence', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) => c.notNull())
    // Why a resolved finding is resolved: `fixed` (a later scan no longer saw it) or `manual`.
    .addColumn('resolution', 'text')
    .addColumn('false_positive', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('notes', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('first_scan_id', 'text', (c) => c.notNull())
    .addColumn('last_scan_id', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('fixed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('vulnerabilities_identity', ['org_id', 'scan_type', 'target', 'fingerprint'])
    .execute();
  await db.schema.createIndex('vulnerabilities_org_idx').on('vulnerabilities').columns(['org_id', 'id']).execute();

  await db.schema
    .createTable('scan_findings')
    .addColumn('scan_id', 'text', (c) => c.notNull().references('scans.id').onDelete('cascade'))
    .addColumn('vulnerability_id', 'text', (c) => c.notNull().references('vulnerabilities.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('scan_findings_pk', ['scan_id', 'vulnerability_id'])
    .execute();
  // OSV advisories for SCA, shared by every organisation (`aegis advisories import`). Each record is
  // findable by every package it affects, under the scanner's normalised package key.
  await db.schema
    .createTable('advisories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('modified', 'timestamptz', (c) => c.notNull())
    .addColumn('record', 'jsonb', (c) => c.notNull())
    .addColumn('imported_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('advisory_packages')
    .addColumn('package_key', 'text', (c) => c.notNull())
    .addColumn('advisory_id', 'text', (c) => c.notNull().references('advisories.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('advisory_packages_pk', ['package_key', 'advisory_id'])
    .execute();
  await db.schema.createIndex('advisory_packages_advisory_idx').on('advisory_packages').column('advisory_id').execute();

  await db.schema.createIndex('scan_findings_vulnerability_idx').on('scan_findings').column('vulnerability_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('advisory_packages').execute();
  await db.schema.dropTable('advisories').execute();
  await db.schema.dropTable('scan_findings').execute();
  await db.schema.dropTable('vulnerabilities').execute();
  await db.schema.dropTable('scan_archives').execute();
  await db.schema.dropTable('scans').execute();
}
