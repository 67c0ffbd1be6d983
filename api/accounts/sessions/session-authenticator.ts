// Turns a session cookie into a principal. The JWT is checked first (a forged or expired cookie
// costs no query); the session row, with the user's role and the organisation, is then cached per
// session until anything about authorisation changes anywhere (api/accounts/auth/auth-changes.ts), so a
// revoked session stops working at once on every process while a busy one costs no query per
// request. Last-seen times are written back in batches, which also slides the row's expiry.
import { LRUCache } from 'lru-cache';
import type { AuthChanges } from '../auth/auth-changes.ts';
import type { SessionPrincipal } from '../auth/principal.ts';
import { isRole, ROLE_SCOPES } from '../auth/roles.ts';
import type { Db } from '../../../platform/db/database.ts';
import { asPlan } from '../people/plans.ts';
import { dataSpaceOf } from '../../../platform/db/environments.ts';
import { membershipsOf, type MembershipView } from '../people/org-store.ts';
import { findSessionContext, recordSessionUse, type SessionContextRow } from './session-store.ts';
import { SESSION_REFRESH_AFTER_MS, type SessionTokens } from './session-token.ts';
import { boundOrganization, sessionRefusal, type Refusal } from '../auth/session-scope.ts';

export interface SessionCheck {
  principal: SessionPrincipal;
  /** Why this session may not work in its organisation (it enforces SSO, or the session is bound to another): session-scope.ts. */
  refusal: Refusal | null;
  /** The cookie should be re-issued (sliding expiry). */
  reissue: boolean;
}

const MISSING = Symbol('missing');

/** What a live session authorises, built once per cache fill (not per request). */
interface SessionGrant {
  principal: SessionPrincipal;
  refusal: Refusal | null;
}

function grantOf(row: SessionContextRow): SessionGrant | undefined {
  if (!isRole(row.role)) return undefined;
  const proof = { method: row.method, ssoOrgId: row.sso_org_id };
  const boundOrgId = boundOrganization(proof);
  return {
    principal: {
      kind: 'session',
      sessionId: row.session_id,
      user: { id: row.user_id, email: row.email, name: row.user_name },
      role: row.role,
      orgId: dataSpaceOf(row.org_id, row.environment),
      environment: row.environment,
      organization: { id: row.org_id, slug: row.org_slug, name: row.org_name, plan: asPlan(row.org_plan), created_at: row.org_created_at.toISOString() },
      scopes: new Set(ROLE_SCOPES[row.role]),
      actor: { type: 'user', id: row.user_id },
      boundOrgId,
    },
    refusal: sessionRefusal(proof, { id: row.org_id, ssoEnforced: row.sso_enforced === true }),
  };
}

export class SessionAuthenticator {
  private readonly cache: LRUCache<string, SessionGrant | typeof MISSING>;
  private readonly membershipCache: LRUCache<string, MembershipView[]>;
  private readonly uses = new Map<string, Date>();
  private readonly flushTimer: NodeJS.Timeout;
  /** Bumped on every change: a lookup that started before one must not fill the cache after it. */
  private generation = 0;

  constructor(
    private readonly db: Db,
    readonly tokens: SessionTokens,
    private readonly changes: AuthChanges,
    options: { cacheTtlMs?: number; usageFlushMs?: number } = {},
  ) {
    this.cache = new LRUCache({ max: 50_000, ttl: options.cacheTtlMs ?? 60_000 });
    this.membershipCache = new LRUCache({ max: 10_000, ttl: options.cacheTtlMs ?? 60_000 });
    changes.onChange(() => {
      this.generation += 1;
      this.cache.clear();
      this.membershipCache.clear();
    });
    this.flushTimer = setInterval(() => void this.flushUsage(), options.usageFlushMs ?? 10_000);
    this.flushTimer.unref();
  }

  async authenticate(cookie: string): Promise<SessionCheck | null> {
    const claims = await this.tokens.verify(cookie);
    if (!claims) return null;
    const grant = await this.grant(claims.sessionId, claims.userId);
    if (!grant) return null;
    const now = Date.now();
    this.uses.set(claims.sessionId, new Date(now));
    return { ...grant, reissue: now - claims.issuedAt >= SESSION_REFRESH_AFTER_MS };
  }

  /**
   * The user's memberships (for GET /me), cached like sessions: every membership change is
   * announced. A cached list is returned as it is, not wrapped in a promise (GET /me is hot).
   */
  memberships(userId: string): MembershipView[] | Promise<MembershipView[]> {
    const cacheable = this.changes.reliable;
    const cached = cacheable ? this.membershipCache.get(userId) : undefined;
    if (cached) return cached;
    const generation = this.generation;
    return membershipsOf(this.db, userId).then((rows) => {
      if (cacheable && generation === this.generation) this.membershipCache.set(userId, rows);
      return rows;
    });
  }

  async flushUsage(): Promise<void> {
    if (this.uses.size === 0) return;
    const batch = new Map(this.uses);
    this.uses.clear();
    try {
      await recordSessionUse(this.db, batch);
    } catch {
      // last-seen times are best effort; the next flush carries newer ones
    }
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushUsage();
  }

  private async grant(sessionId: string, userId: string): Promise<SessionGrant | undefined> {
    const cacheable = this.changes.reliable;
    const cached = cacheable ? this.cache.get(sessionId) : undefined;
    if (cached !== undefined) return cached === MISSING || cached.principal.user.id !== userId ? undefined : cached;
    const generation = this.generation;
    const row = await findSessionContext(this.db, sessionId, userId);
    const grant = row && grantOf(row);
    if (cacheable && generation === this.generation) this.cache.set(sessionId, grant ?? MISSING);
    return grant;
  }
}
