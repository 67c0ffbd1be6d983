// Provider connections in the database. Tokens are sealed with the server key, each with the
// connection's id and its purpose as the sealing context (a sealed access token copied into another
// row, or into the refresh column, does not open); the resource never shows them.
import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { IntegrationRow, IntegrationSettings, IntegrationStatus } from '../../../platform/db/schema.ts';
import { recordEvents } from '../../../platform/events/event-store.ts';
import { newId } from '../../../platform/ids.ts';
import { livemodeOf } from '../../../platform/db/environments.ts';
import { iso, isoOrNull } from '../../../platform/resources/timestamps.ts';
import type { AccountInfo, IntegrationKind, IntegrationProvider, ProviderName, TokenSet } from '../providers/types.ts';

type TokenPurpose = 'access' | 'refresh' | 'webhook';
const context = (id: string, purpose: TokenPurpose): string => `integration:${id}:${purpose}`;

export function toIntegration(row: IntegrationRow) {
  return {
    id: row.id,
    object: 'integration' as const,
    livemode: livemodeOf(row.org_id),
    kind: row.kind,
    provider: row.provider as IntegrationProvider,
    auth_type: row.auth_type,
    status: row.status,
    error: row.error,
    account: row.account,
    account_id: row.account_id,
    scopes: row.scopes,
    api_base_url: row.api_base_url,
    metadata: row.metadata,
    token_expires_at: isoOrNull(row.token_expires_at),
    connected_by: row.connected_by,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export type IntegrationResource = ReturnType<typeof toIntegration>;

export async function findIntegration(db: Db, orgId: string, id: string): Promise<IntegrationRow | undefined> {
  return db.selectFrom('integrations').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function listIntegrations(db: Db, q: { orgId: string; after: string | null; limit: number; provider?: string | undefined; kind?: string | undefined }): Promise<IntegrationRow[]> {
  let query = db.selectFrom('integrations').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '>', q.after);
  if (q.provider) query = query.where('provider', '=', q.provider);
  if (q.kind) query = query.where('kind', '=', q.kind as IntegrationKind);
  return query.orderBy('id').limit(q.limit + 1).execute();
}

/** A connection waiting for its OAuth callback. */
export async function createPendingIntegration(db: Db, input: { orgId: string; kind: IntegrationKind; provider: ProviderName; connectedBy: string; apiBaseUrl: string | null; settings: IntegrationSettings }): Promise<IntegrationRow> {
  return db
    .insertInto('integrations')
    .values({
      id: newId('int'),
      org_id: input.orgId,
      kind: input.kind,
      provider: input.provider,
      auth_type: 'oauth',
      status: 'pending',
      api_base_url: input.apiBaseUrl,
      settings: JSON.stringify(input.settings),
      connected_by: input.connectedBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface Activation {
  tokens: TokenSet;
  account: AccountInfo;
  apiBaseUrl: string | null;
  metadata: Record<string, unknown>;
  webhookSecret: string;
}

function sealedTokens(box: SecretBox, id: string, tokens: TokenSet) {
  return {
    access_token_sealed: box.seal(tokens.accessToken, context(id, 'access')),
    refresh_token_sealed: tokens.refreshToken ? box.seal(tokens.refreshToken, context(id, 'refresh')) : null,
    token_expires_at: tokens.expiresAt,
  };
}

/** Stores the tokens and account of a connection and makes it active (an OAuth callback, or a pasted token's new row). */
export async function activateIntegration(trx: Db, box: SecretBox, row: Pick<IntegrationRow, 'id'>, a: Activation): Promise<IntegrationRow> {
  return trx
    .updateTable('integrations')
    .set({
      ...sealedTokens(box, row.id, a.tokens),
      status: 'active',
      error: null,
      account: a.account.name,
      account_id: a.account.id,
      scopes: JSON.stringify(a.account.scopes ?? a.tokens.scopes),
      api_base_url: a.account.apiBaseUrl ?? a.apiBaseUrl,
      metadata: JSON.stringify({ ...a.metadata, ...a.account.metadata }),
      webhook_secret_sealed: box.seal(a.webhookSecret, context(row.id, 'webhook')),
      updated_at: new Date(),
    })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function createTokenIntegration(trx: Db, box: SecretBox, input: { orgId: string; kind: IntegrationKind; provider: ProviderName; connectedBy: string; settings: IntegrationSettings } & Activation): Promise<IntegrationRow> {
  const id = newId('int');
  await trx
    .insertInto('integrations')
    .values({ id, org_id: input.orgId, kind: input.kind, provider: input.provider, auth_type: 'token', status: 'pending', connected_by: input.connectedBy, settings: JSON.stringify(input.settings) })
    .execute();
  return activateIntegration(trx, box, { id }, input);
}

export async function updateIntegrationSettings(trx: Db, orgId: string, id: string, settings: IntegrationSettings): Promise<IntegrationRow | undefined> {
  return trx
    .updateTable('integrations')
    // Top-level keys given replace the stored ones; others stay.
    .set({ settings: sql<string>`settings || ${JSON.stringify(settings)}::jsonb`, updated_at: new Date() })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function rotateWebhookSecret(trx: Db, box: SecretBox, orgId: string, id: string, secret: string): Promise<IntegrationRow | undefined> {
  return trx
    .updateTable('integrations')
    .set({ webhook_secret_sealed: box.seal(secret, context(id, 'webhook')), updated_at: new Date() })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('status', '<>', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Tokens from a refresh; the old refresh token is kept when the provider did not rotate it. */
export async function storeRefreshedTokens(trx: Db, box: SecretBox, row: IntegrationRow, tokens: TokenSet): Promise<IntegrationRow> {
  const sealed = sealedTokens(box, row.id, tokens);
  return trx
    .updateTable('integrations')
    .set({ ...sealed, refresh_token_sealed: sealed.refresh_token_sealed ?? row.refresh_token_sealed, updated_at: new Date() })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function openAccessToken(box: SecretBox, row: IntegrationRow): string | null {
  return row.access_token_sealed ? box.open(row.access_token_sealed, context(row.id, 'access')) : null;
}

export function openRefreshToken(box: SecretBox, row: IntegrationRow): string | null {
  return row.refresh_token_sealed ? box.open(row.refresh_token_sealed, context(row.id, 'refresh')) : null;
}

/** The secret that verifies this connection's inbound webhooks (set at activation). */
export function openWebhookSecret(box: SecretBox, row: IntegrationRow): string | null {
  return row.webhook_secret_sealed ? box.open(row.webhook_secret_sealed, context(row.id, 'webhook')) : null;
}

/**
 * Sets the connection's status; going to `error` (or back to `active`) records the event in the
 * same transaction. A connection already in that status records nothing again.
 */
export async function setIntegrationStatus(db: Db, row: IntegrationRow, status: IntegrationStatus, error: string | null): Promise<IntegrationRow> {
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('integrations')
      .set({ status, error, updated_at: new Date() })
      .where('id', '=', row.id)
      .where((eb) => eb.or([eb('status', '<>', status), eb('error', 'is distinct from', error)]))
      .returningAll()
      .executeTakeFirst();
    if (!updated) return row;
    if (status === 'error' && row.status !== 'error') {
      await recordEvents(trx, [{ orgId: row.org_id, type: 'integration.error', object: toIntegration(updated), previous: { status: row.status, error: row.error } }]);
    }
    return updated;
  });
}
