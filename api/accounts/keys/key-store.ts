// API keys in the database. Only the digest of a key is stored; the value exists in memory just
// long enough to be returned once.
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { ApiKeyRow, Database } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import type { Scope } from '../auth/scopes.ts';
import { generateKey, hashKey, keyEnvironment, keyPrefix, last4 } from './key-material.ts';
import { dataSpaceOf, ensureSandbox, environmentOf, organizationOf } from '../../../platform/db/environments.ts';

export const ROTATION_GRACE_MS = 7 * 24 * 60 * 60 * 1000;
export const KEY_STATUSES = ['active', 'rotating', 'revoked'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

export interface IssuedKey {
  row: ApiKeyRow;
  value: string;
}

export interface NewKey {
  /** The data space the key works in (its organisation's live one, or the sandbox). */
  orgId: string;
  name: string;
  scopes: readonly Scope[];
  createdBy: string | null;
  /** The person whose role caps the key: the maker, or the person behind the key that made it; null for an operator's key. */
  ownerUserId?: string | null;
  /** A value chosen by the operator (bootstrap); generated when absent. */
  value?: string;
}

/** A key lives in the data space of its environment: a test key's rows are the sandbox's. */
export async function insertKey(db: Db, key: NewKey): Promise<IssuedKey> {
  // An operator's chosen value (bootstrap) says its environment by its prefix.
  const environment = key.value ? keyEnvironment(keyPrefix(key.value)) : environmentOf(key.orgId);
  const orgId = dataSpaceOf(organizationOf(key.orgId), environment);
  if (environment === 'test') await ensureSandbox(db, organizationOf(orgId));
  const value = key.value ?? generateKey(environment);
  const row = await db
    .insertInto('api_keys')
    .values({
      id: newId('key'),
      org_id: orgId,
      name: key.name,
      prefix: keyPrefix(value),
      key_hash: hashKey(value),
      last4: last4(value),
      scopes: JSON.stringify([...new Set(key.scopes)]),
      created_by: key.createdBy,
      owner_user_id: key.ownerUserId ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, value };
}

export function keyStatus(row: ApiKeyRow, now = Date.now()): KeyStatus {
  if (row.revoked_at || (row.expires_at && row.expires_at.getTime() <= now)) return 'revoked';
  return row.replaced_by ? 'rotating' : 'active';
}

/** Usable right now: not revoked, not past its expiry. */
export const usable = (eb: ExpressionBuilder<Database, 'api_keys'>): Expression<SqlBool> =>
  eb.and([eb('api_keys.revoked_at', 'is', null), eb.or([eb('api_keys.expires_at', 'is', null), eb('api_keys.expires_at', '>', sql<Date>`now()`)])]);

function statusCondition(eb: ExpressionBuilder<Database, 'api_keys'>, status: KeyStatus): Expression<SqlBool> {
  switch (status) {
    case 'active':
      return eb.and([usable(eb), eb('replaced_by', 'is', null)]);
    case 'rotating':
      return eb.and([usable(eb), eb('replaced_by', 'is not', null)]);
    case 'revoked':
      return eb.not(usable(eb));
  }
}

export interface KeyListQuery {
  orgId: string;
  after: string | null;
  limit: number;
  statuses?: KeyStatus[] | undefined;
}

export async function listKeys(db: Db, q: KeyListQuery): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  const statuses = q.statuses;
  if (statuses) query = query.where((eb) => eb.or(statuses.map((s) => statusCondition(eb, s))));
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

export async function findKey(db: Db, orgId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export interface KeyLookup {
  id: string;
  name: string;
  /** The key's data space. */
  org_id: string;
  /** Its organisation (the same id for a live key). */
  org_live_id: string;
  org_slug: string;
  org_name: string;
  org_plan: string;
  org_created_at: Date;
  scopes: string[];
  expires_at: Date | null;
  replaced_by: string | null;
  owner_user_id: string | null;
  /** The owner's role in the key's organisation now; null when the key has no owner, or its owner is no longer a member. */
  owner_role: string | null;
}

/** The usable key with this digest, with its organisation and its owner's current role there. */
export async function findUsableKeyByHash(db: Db, hash: string): Promise<KeyLookup | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('organizations as space', 'space.id', 'api_keys.org_id')
    .innerJoin('organizations', (join) => join.on('organizations.id', '=', sql<string>`coalesce(space.live_org_id, space.id)`))
    .leftJoin('memberships as owner', (join) => join.onRef('owner.user_id', '=', 'api_keys.owner_user_id').onRef('owner.org_id', '=', 'organizations.id'))
    .select([
      'api_keys.id',
      'api_keys.name',
      'api_keys.org_id',
      'organizations.id as org_live_id',
      'organizations.slug as org_slug',
      'organizations.name as org_name',
      'organizations.plan as org_plan',
      'organizations.created_at as org_created_at',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.replaced_by',
      'api_keys.owner_user_id',
      'owner.role as owner_role',
    ])
    .where('api_keys.key_hash', '=', hash)
    .where(usable)
    .executeTakeFirst();
}

/**
 * Issues the successor of a usable key and gives the old one a 7-day grace period (or less, if it
 * already expires sooner). Returns undefined when the key cannot be rotated (missing, revoked, or
 * already rotated).
 */
export async function rotateKey(db: Db, orgId: string, id: string, actor: string): Promise<{ old: ApiKeyRow; next: IssuedKey } | undefined> {
  const old = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where(usable)
    .where('replaced_by', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!old) return undefined;
  // The successor is the same credential renewed: it keeps the person whose role caps it.
  const next = await insertKey(db, { orgId, name: old.name, scopes: old.scopes as Scope[], createdBy: actor, ownerUserId: old.owner_user_id });
  const graceEnd = new Date(Date.now() + ROTATION_GRACE_MS);
  const expiresAt = old.expires_at && old.expires_at < graceEnd ? old.expires_at : graceEnd;
  const updated = await db
    .updateTable('api_keys')
    .set({ replaced_by: next.row.id, expires_at: expiresAt })
    .where('id', '=', old.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { old: updated, next };
}

/** Revokes at once; revoking an already revoked key changes nothing (`changed: false`). */
export async function revokeKey(db: Db, orgId: string, id: string): Promise<{ row: ApiKeyRow; changed: boolean } | undefined> {
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (revoked) return { row: revoked, changed: true };
  const existing = await findKey(db, orgId, id);
  return existing && { row: existing, changed: false };
}

export async function recordKeyUse(db: Db, uses: ReadonlyMap<string, Date>): Promise<void> {
  for (const [id, at] of uses) {
    await db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }
}

export async function countKeys(db: Db): Promise<number> {
  const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
