// Turns a bearer value into a principal without touching the database on every request: results
// (including "no such key") are cached for a few seconds. This process drops an entry the moment it
// revokes or rotates a key; other processes see the change when the entry expires, so the cache
// lifetime bounds how long a revoked key can live elsewhere (the issue allows 5 s), and how long a
// key keeps powers its owner just lost: a key is capped by its owner's current role, and stops
// working when its owner leaves the organisation.
import { LRUCache } from 'lru-cache';
import type { AuthChanges } from '../auth/auth-changes.ts';
import type { Db } from '../../../platform/db/database.ts';
import { asPlan } from '../people/plans.ts';
import { findUsableKeyByHash, recordKeyUse } from './key-store.ts';
import { hashKey, isWellFormedKey } from './key-material.ts';
import { environmentOf } from '../../../platform/db/environments.ts';
import type { KeyPrincipal } from '../auth/principal.ts';
import { isRole, ROLE_SCOPES } from '../auth/roles.ts';
import { capScopes, type Scope } from '../auth/scopes.ts';

export interface AuthenticatorOptions {
  cacheTtlMs?: number;
  usageFlushMs?: number;
  /** Membership and role changes on any process: a key's cap follows its owner's role at once. */
  changes?: AuthChanges;
}

const MISSING = Symbol('missing');

export class Authenticator {
  private readonly cache: LRUCache<string, KeyPrincipal | typeof MISSING>;
  private readonly uses = new Map<string, Date>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    options: AuthenticatorOptions = {},
  ) {
    this.cache = new LRUCache({ max: 50_000, ttl: options.cacheTtlMs ?? 3_000 });
    options.changes?.onChange(() => this.cache.clear());
    this.flushTimer = setInterval(() => void this.flushUsage(), options.usageFlushMs ?? 10_000);
    this.flushTimer.unref();
  }

  async authenticate(value: string): Promise<KeyPrincipal | null> {
    if (!isWellFormedKey(value)) return null;
    const hash = hashKey(value);
    let principal = this.cache.get(hash);
    if (principal === undefined) {
      principal = (await this.load(hash)) ?? MISSING;
      this.cache.set(hash, principal);
    }
    if (principal === MISSING) return null;
    if (principal.expiresAt !== null && Date.now() >= principal.expiresAt) return null;
    this.uses.set(principal.keyId, new Date());
    return principal;
  }

  /** Forget a key at once (after revocation or rotation in this process). */
  invalidate(keyHash: string): void {
    this.cache.delete(keyHash);
  }

  async flushUsage(): Promise<void> {
    if (this.uses.size === 0) return;
    const batch = new Map(this.uses);
    this.uses.clear();
    try {
      await recordKeyUse(this.db, batch);
    } catch {
      // last-used times are best effort; the next flush carries newer ones
    }
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushUsage();
  }

  private async load(hash: string): Promise<KeyPrincipal | undefined> {
    const row = await findUsableKeyByHash(this.db, hash);
    if (!row) return undefined;
    let scopes = row.scopes as Scope[];
    if (row.owner_user_id !== null) {
      if (row.owner_role === null || !isRole(row.owner_role)) return undefined;
      scopes = capScopes(scopes, ROLE_SCOPES[row.owner_role]);
    }
    return {
      kind: 'api_key',
      keyId: row.id,
      keyName: row.name,
      orgId: row.org_id,
      environment: environmentOf(row.org_id),
      organization: { id: row.org_live_id, slug: row.org_slug, name: row.org_name, plan: asPlan(row.org_plan), created_at: row.org_created_at.toISOString() },
      scopes: new Set(scopes),
      actor: { type: 'api_key', id: row.id },
      expiresAt: row.expires_at ? row.expires_at.getTime() : null,
      rotating: row.replaced_by !== null,
      ownerUserId: row.owner_user_id,
    };
  }
}
