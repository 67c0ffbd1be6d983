// Outbound webhooks in the database. The signing secret is stored sealed (platform/crypto/secret-box.ts),
// with the webhook's id as the sealing context, plus its last four characters for recognition; the
// clear value exists only in the create response.
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { WebhookRow } from '../../platform/db/schema.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { newId } from '../../platform/ids.ts';
import { jsonColumns } from '../../platform/resources/json-columns.ts';
import { labelsContain } from '../../platform/resources/labels.ts';
import { iso, isoOrNull } from '../../platform/resources/timestamps.ts';
import type { WEBHOOK_EVENTS } from '../../schemas/index.ts';
import { livemodeOf } from '../../platform/db/environments.ts';

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const SECRET_PREFIX = 'whsec_';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 40 base62 characters: about 238 bits, as for API keys. */
const SECRET_LENGTH = 40;

export function generateWebhookSecret(): string {
  let random = '';
  for (let i = 0; i < SECRET_LENGTH; i++) random += ALPHABET[randomInt(ALPHABET.length)];
  return SECRET_PREFIX + random;
}

export interface WebhookFields {
  url: string;
  events: WebhookEvent[];
  description: string;
  enabled: boolean;
  labels: Record<string, string>;
}

export interface WebhookListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  labels?: Record<string, string> | undefined;
  enabled?: boolean | undefined;
}

/** The resource as every response but the create response shows it: no secret. */
export function toWebhook(row: WebhookRow) {
  return {
    id: row.id,
    livemode: livemodeOf(row.org_id),
    url: row.url,
    events: row.events as WebhookEvent[],
    description: row.description,
    enabled: row.enabled,
    secret_last4: row.secret_last4,
    labels: row.labels,
    disabled_reason: row.disabled_reason,
    failing_since: isoOrNull(row.failing_since),
    previous_secret_expires_at: isoOrNull(row.previous_secret_expires_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export async function listWebhooks(db: Db, q: WebhookListQuery): Promise<WebhookRow[]> {
  let query = db.selectFrom('webhooks').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.labels) query = query.where(labelsContain('labels', q.labels));
  if (q.enabled !== undefined) query = query.where('enabled', '=', q.enabled);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findWebhook(db: Db, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** Creates the webhook with a fresh secret; returns the row and the secret in clear, once. */
export async function insertWebhook(db: Db, box: SecretBox, orgId: string, fields: WebhookFields): Promise<{ row: WebhookRow; secret: string }> {
  const id = newId('whk');
  const secret = generateWebhookSecret();
  const row = await db
    .insertInto('webhooks')
    .values({
      id,
      org_id: orgId,
      ...jsonColumns(fields, ['events', 'labels']),
      secret_sealed: box.seal(secret, id),
      secret_last4: secret.slice(-4),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, secret };
}

/** The signing secret of a stored webhook (for deliveries). */
export function openWebhookSecret(box: SecretBox, row: Pick<WebhookRow, 'id' | 'secret_sealed'>): string {
  return box.open(row.secret_sealed, row.id);
}

export async function updateWebhook(db: Db, orgId: string, id: string, changes: Partial<WebhookFields>): Promise<WebhookRow | undefined> {
  return db
    .updateTable('webhooks')
    // Enabling again (after Aegis disabled it) starts the failure clock afresh.
    .set({ ...jsonColumns(changes, ['events', 'labels']), ...(changes.enabled === true ? { disabled_reason: null, failing_since: null } : {}), updated_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteWebhook(db: Db, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return db.deleteFrom('webhooks').where('org_id', '=', orgId).where('id', '=', id).returningAll().executeTakeFirst();
}
