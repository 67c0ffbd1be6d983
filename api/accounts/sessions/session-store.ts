// Session rows: one per sign-in, so a person can see where they are signed in and end any of it.
// The cookie (session-token.ts) only names a row; the row says whether it still counts.
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { Database, SessionRow } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { SESSION_LIFETIME_MS } from './session-token.ts';
import type { Environment } from '../../../platform/db/environments.ts';
import { ORG_BOUND_METHODS } from '../auth/session-scope.ts';

export const SIGN_IN_METHODS = ['magic_link', 'google', 'sso_oidc', 'sso_saml', 'invite', 'owner_link'] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

export interface NewSession {
  userId: string;
  orgId: string;
  method: SignInMethod;
  ssoOrgId: string | null;
  userAgent: string | null;
  browser: string | null;
  ip: string | null;
}

export async function insertSession(db: Db, s: NewSession): Promise<SessionRow> {
  return db
    .insertInto('sessions')
    .values({
      id: newId('ses'),
      user_id: s.userId,
      org_id: s.orgId,
      method: s.method,
      sso_org_id: s.ssoOrgId,
      user_agent: s.userAgent?.slice(0, 512) ?? null,
      browser: s.browser,
      ip: s.ip,
      expires_at: new Date(Date.now() + SESSION_LIFETIME_MS),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether this user has signed in before from this browser and address (for "new device" audit entries). */
export async function knownDevice(db: Db, userId: string, browser: string | null, ip: string | null): Promise<boolean> {
  const row = await db
    .selectFrom('sessions')
    .select('id')
    .where('user_id', '=', userId)
    .where((eb) => (browser === null ? eb('browser', 'is', null) : eb('browser', '=', browser)))
    .where((eb) => (ip === null ? eb('ip', 'is', null) : eb('ip', '=', ip)))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export interface SessionContextRow {
  session_id: string;
  user_id: string;
  email: string;
  user_name: string | null;
  org_id: string;
  org_slug: string;
  org_name: string;
  org_plan: string;
  org_created_at: Date;
  role: string;
  method: string;
  sso_org_id: string | null;
  sso_enforced: boolean | null;
  environment: 'live' | 'test';
}

/**
 * A live session with what authorising it needs: the user, their role in the session's current
 * organisation and whether that organisation enforces SSO. Undefined when the session is revoked
 * or expired, or the user is no longer a member there.
 */
export async function findSessionContext(db: Db, sessionId: string, userId: string): Promise<SessionContextRow | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .innerJoin('memberships', (join) => join.onRef('memberships.org_id', '=', 'sessions.org_id').onRef('memberships.user_id', '=', 'sessions.user_id'))
    .innerJoin('organizations', 'organizations.id', 'sessions.org_id')
    .leftJoin('sso_connections', 'sso_connections.org_id', 'sessions.org_id')
    .select([
      'sessions.id as session_id',
      'users.id as user_id',
      'users.email',
      'users.name as user_name',
      'organizations.id as org_id',
      'organizations.slug as org_slug',
      'organizations.name as org_name',
      'organizations.plan as org_plan',
      'organizations.created_at as org_created_at',
      'memberships.role',
      'sessions.method',
      'sessions.sso_org_id',
      'sso_connections.enforced as sso_enforced',
      'sessions.environment',
    ])
    .where('sessions.id', '=', sessionId)
    .where('sessions.user_id', '=', userId)
    .where('sessions.revoked_at', 'is', null)
    .where('sessions.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

/**
 * Which of a person's sessions another session may see and end: all of them, or — for a session
 * bound to an organisation (its identity provider's, the first-owner link's) — only those bound to
 * that organisation too.
 */
export interface SessionReach {
  userId: string;
  /** The organisation the calling session is bound to (boundOrganization), or null. */
  boundOrgId: string | null;
}

const within = (reach: SessionReach) => (eb: ExpressionBuilder<Database, 'sessions'>) =>
  reach.boundOrgId === null ? eb.and([eb('user_id', '=', reach.userId)]) : eb.and([eb('user_id', '=', reach.userId), eb('sso_org_id', '=', reach.boundOrgId), eb('method', 'in', [...ORG_BOUND_METHODS])]);

export async function listSessions(db: Db, reach: SessionReach, after: string | null, limit: number): Promise<SessionRow[]> {
  let query = db
    .selectFrom('sessions')
    .selectAll()
    .where(within(reach))
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`);
  if (after) query = query.where('id', '<', after);
  return query.orderBy('id', 'desc').limit(limit + 1).execute();
}

/** Ends one of the user's sessions within reach; undefined when there is no such live session. */
export async function revokeSession(db: Db, reach: SessionReach, sessionId: string): Promise<SessionRow | undefined> {
  return db
    .updateTable('sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where(within(reach))
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Ends every session of the user within reach (logout, spec 3.2); returns how many were live. */
export async function revokeAllSessions(db: Db, reach: SessionReach): Promise<number> {
  const rows = await db.updateTable('sessions').set({ revoked_at: sql<Date>`now()` }).where(within(reach)).where('revoked_at', 'is', null).returning('id').execute();
  return rows.length;
}

/** A session switching organisation starts in its live environment. */
export async function switchSessionOrganization(db: Db, sessionId: string, orgId: string): Promise<void> {
  await db.updateTable('sessions').set({ org_id: orgId, environment: 'live' }).where('id', '=', sessionId).execute();
}

export async function switchSessionEnvironment(db: Db, sessionId: string, environment: Environment): Promise<void> {
  await db.updateTable('sessions').set({ environment }).where('id', '=', sessionId).execute();
}

/** Last-seen times (batched by the session authenticator); each also slides the row's expiry. */
export async function recordSessionUse(db: Db, uses: ReadonlyMap<string, Date>): Promise<void> {
  for (const [id, at] of uses) {
    await db
      .updateTable('sessions')
      .set({ last_seen_at: at, expires_at: new Date(at.getTime() + SESSION_LIFETIME_MS) })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where('last_seen_at', '<', at)
      .execute();
  }
}
