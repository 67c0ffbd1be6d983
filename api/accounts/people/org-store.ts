// Organisations and their memberships.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../../platform/db/database.ts';
import type { OrganizationSummary } from '../auth/principal.ts';
import type { Role } from '../auth/roles.ts';
import { newId } from '../../../platform/ids.ts';
import { asPlan, type Plan } from './plans.ts';

// A type alias, not an interface, so it fits the response types inferred from JSON Schema.
export type MembershipView = {
  role: Role;
  created_at: Date;
  organization: OrganizationSummary;
  sso_enforced: boolean;
};

/** A new organisation owned by `ownerId` (sign-up): slug from the name, made unique with a suffix. */
export async function createOrganization(db: Db, input: { name: string; ownerId: string; plan: Plan }): Promise<string> {
  const base = input.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'org';
  const id = newId('org');
  await db.insertInto('organizations').values({ id, slug: `${base}-${randomBytes(3).toString('hex')}`, name: input.name, plan: input.plan }).execute();
  await addMembership(db, id, input.ownerId, 'owner');
  return id;
}

/** Adds the user to the organisation; an existing membership keeps its role. */
export async function addMembership(db: Db, orgId: string, userId: string, role: Role): Promise<boolean> {
  const inserted = await db
    .insertInto('memberships')
    .values({ org_id: orgId, user_id: userId, role })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doNothing())
    .returning('user_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function membershipsOf(db: Db, userId: string): Promise<MembershipView[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('organizations', 'organizations.id', 'memberships.org_id')
    .leftJoin('sso_connections', 'sso_connections.org_id', 'memberships.org_id')
    .select([
      'memberships.role',
      'memberships.created_at',
      'organizations.id',
      'organizations.slug',
      'organizations.name',
      'organizations.plan',
      'organizations.created_at as org_created_at',
      'sso_connections.enforced',
    ])
    .where('memberships.user_id', '=', userId)
    .orderBy('memberships.created_at')
    .orderBy('organizations.id')
    .execute();
  return rows.map((r) => ({
    role: r.role as Role,
    created_at: r.created_at,
    organization: { id: r.id, slug: r.slug, name: r.name, plan: asPlan(r.plan), created_at: r.org_created_at.toISOString() },
    sso_enforced: r.enforced === true,
  }));
}

/** A member as the members list shows them. */
export interface MemberRow {
  /** The user id; also the list's cursor (ids sort by creation time). */
  id: string;
  email: string;
  name: string | null;
  role: Role;
  joined_at: Date;
  last_login_at: Date | null;
}

function membersQuery(db: Db, orgId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'users.name', 'memberships.role', 'memberships.created_at as joined_at', 'users.last_login_at'])
    .where('memberships.org_id', '=', orgId);
}

const toMember = (r: { id: string; email: string; name: string | null; role: string; joined_at: Date; last_login_at: Date | null }): MemberRow => ({ ...r, role: r.role as Role });

/** A page of the organisation's members, newest user first (fetches `limit + 1` to detect a next page). */
export async function listMembers(db: Db, q: { orgId: string; after: string | null; limit: number }): Promise<MemberRow[]> {
  let query = membersQuery(db, q.orgId);
  if (q.after) query = query.where('users.id', '<', q.after);
  return (await query.orderBy('users.id', 'desc').limit(q.limit + 1).execute()).map(toMember);
}

export async function findMember(db: Db, orgId: string, userId: string): Promise<MemberRow | undefined> {
  const row = await membersQuery(db, orgId).where('users.id', '=', userId).executeTakeFirst();
  return row && toMember(row);
}

/**
 * The organisation's owners, locked until the transaction ends: two owners demoting each other at
 * the same moment must not leave the organisation with none.
 */
export async function lockOwners(trx: Db, orgId: string): Promise<string[]> {
  const rows = await trx.selectFrom('memberships').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').forUpdate().execute();
  return rows.map((r) => r.user_id);
}

export async function setMemberRole(db: Db, orgId: string, userId: string, role: Role): Promise<void> {
  await db.updateTable('memberships').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
}

export async function removeMembership(db: Db, orgId: string, userId: string): Promise<boolean> {
  const row = await db.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', userId).returning('user_id').executeTakeFirst();
  return row !== undefined;
}
