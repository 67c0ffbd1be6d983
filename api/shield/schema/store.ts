// Shield schema enforcement in the database: the uploaded OpenAPI document of a site
// (`shield_schemas`) and its enforcement settings (`shield_schema_configs`). The two are separate so
// that strictness and labels can be set before or without a document; a site without a settings
// row is enforced at the default strictness.
import { sql } from 'kysely';
import { SCHEMA_STRICTNESS } from '../../../schemas/index.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { ShieldSchemaConfigRow, ShieldSchemaRow, ShieldSiteRow } from '../../../platform/db/schema.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';
import { iso } from '../../../platform/resources/timestamps.ts';
import type { SchemaOperation } from '../../../schemas/openapi/document.ts';

export type Strictness = (typeof SCHEMA_STRICTNESS)[number];

export const DEFAULT_STRICTNESS: Strictness = 'standard';

/** SCHEMA_STRICTNESS lists the levels from most to least permissive; this tells a lowering from a raising. */
export const strictnessRank = (value: Strictness): number => SCHEMA_STRICTNESS.indexOf(value);

export interface SchemaDocumentFields {
  document: string;
  openapiVersion: string;
  hash: string;
  operations: SchemaOperation[];
}

export interface SchemaConfigChanges {
  strictness?: Strictness | undefined;
  labels?: Record<string, string> | undefined;
}

/** Strictness and labels in force for a site: its settings row, or the defaults. */
export function effectiveConfig(config: ShieldSchemaConfigRow | undefined): { strictness: Strictness; labels: Record<string, string> } {
  return { strictness: (config?.strictness as Strictness | undefined) ?? DEFAULT_STRICTNESS, labels: config?.labels ?? {} };
}

export function toSchemaConfig(site: Pick<ShieldSiteRow, 'id' | 'org_id' | 'created_at'>, config: ShieldSchemaConfigRow | undefined) {
  // Without a settings row nothing has been changed since the site was created.
  return { livemode: livemodeOf(site.org_id), site_id: site.id, ...effectiveConfig(config), updated_at: iso(config?.updated_at ?? site.created_at) };
}

export function toShieldSchema(row: ShieldSchemaRow, config: ShieldSchemaConfigRow | undefined) {
  // Strictness and labels are part of the resource, so changing them changes it too.
  const updatedAt = config && config.updated_at > row.updated_at ? config.updated_at : row.updated_at;
  return {
    livemode: livemodeOf(row.org_id),
    site_id: row.site_id,
    openapi_version: row.openapi_version,
    hash: row.hash,
    operations: row.operations,
    ...effectiveConfig(config),
    document: row.document,
    created_at: iso(row.created_at),
    updated_at: iso(updatedAt),
  };
}

export async function findSchema(db: Db, siteId: string): Promise<ShieldSchemaRow | undefined> {
  return db.selectFrom('shield_schemas').selectAll().where('site_id', '=', siteId).executeTakeFirst();
}

/** The stored hash only, for audit entries, without reading a document of up to 5 MiB. */
export async function findSchemaHash(db: Db, siteId: string): Promise<string | null> {
  const row = await db.selectFrom('shield_schemas').select('hash').where('site_id', '=', siteId).executeTakeFirst();
  return row?.hash ?? null;
}

/** Stores the site's document, replacing the previous one (created_at stays that of the first). */
export async function upsertSchema(db: Db, orgId: string, siteId: string, fields: SchemaDocumentFields): Promise<ShieldSchemaRow> {
  const values = {
    document: fields.document,
    openapi_version: fields.openapiVersion,
    hash: fields.hash,
    operations: JSON.stringify(fields.operations),
  };
  return db
    .insertInto('shield_schemas')
    .values({ site_id: siteId, org_id: orgId, ...values })
    .onConflict((oc) => oc.column('site_id').doUpdateSet({ ...values, updated_at: sql<Date>`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteSchema(db: Db, siteId: string): Promise<ShieldSchemaRow | undefined> {
  return db.deleteFrom('shield_schemas').where('site_id', '=', siteId).returningAll().executeTakeFirst();
}

export async function findSchemaConfig(db: Db, siteId: string): Promise<ShieldSchemaConfigRow | undefined> {
  return db.selectFrom('shield_schema_configs').selectAll().where('site_id', '=', siteId).executeTakeFirst();
}

/**
 * Locks the site's settings for the rest of the transaction, so that concurrent changes are
 * serialised and each audit entry names the strictness it really replaced. The lock is taken on
 * the site row because the settings row may not exist yet.
 */
export async function lockSchemaConfig(db: Db, siteId: string): Promise<void> {
  await db.selectFrom('shield_sites').select('id').where('id', '=', siteId).forUpdate().execute();
}

/** Creates the settings row or changes the given fields of it; fields not given keep their value. */
export async function upsertSchemaConfig(db: Db, orgId: string, siteId: string, changes: SchemaConfigChanges): Promise<ShieldSchemaConfigRow> {
  const { strictness, labels } = changes;
  return db
    .insertInto('shield_schema_configs')
    .values({ site_id: siteId, org_id: orgId, ...(strictness ? { strictness } : {}), labels: JSON.stringify(labels ?? {}) })
    .onConflict((oc) =>
      oc.column('site_id').doUpdateSet({
        ...(strictness ? { strictness } : {}),
        ...(labels ? { labels: JSON.stringify(labels) } : {}),
        updated_at: sql<Date>`now()`,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}
