// Who owns `default`, the organisation a self-hosted server bootstraps with its first API key, and
// naming its first owner. Until it has one, people who sign in have nowhere to land on an
// invite-only server, and what the bootstrap key made belongs to nobody who can sign in.
import { recordAudit, type Actor } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import { DEFAULT_ORG_SLUG } from '../keys/bootstrap.ts';
import { isRole, type Role } from '../auth/roles.ts';
import { addMembership, setMemberRole } from '../people/org-store.ts';
import { revokeOwnerLinks } from './owner-links.ts';
import { ensureUser } from '../people/user-store.ts';

export interface DefaultOrganization {
  id: string;
  name: string;
  /** Whether someone owns it already. */
  owned: boolean;
}

/**
 * `default`, and whether it has an owner; with `lock` (in a transaction) its row stays locked until
 * the transaction ends, so that two first owners cannot be named at once. Undefined when there is none.
 */
export async function findDefaultOrganization(trx: Db, options: { lock: boolean }): Promise<DefaultOrganization | undefined> {
  let query = trx.selectFrom('organizations').select(['id', 'name']).where('slug', '=', DEFAULT_ORG_SLUG);
  if (options.lock) query = query.forUpdate();
  const org = await query.executeTakeFirst();
  if (!org) return undefined;
  const owner = await trx.selectFrom('memberships').select('user_id').where('org_id', '=', org.id).where('role', '=', 'owner').limit(1).executeTakeFirst();
  return { ...org, owned: owner !== undefined };
}

export interface FirstOwner {
  user: UserRow;
  /** The role the person had in `default` before (an admin made owner), or null for a newcomer. */
  from: Role | null;
}

/**
 * Makes the address the owner of the locked, ownerless organisation: the account when missing, the
 * membership (or a promotion), the audit entry, and every owner link ended.
 */
export async function nameFirstOwner(trx: Db, input: { orgId: string; email: string; actor: Actor; ip: string | null; via: 'owner_link' | 'AEGIS_OWNER_EMAIL' }): Promise<FirstOwner> {
  const { user } = await ensureUser(trx, input.email);
  const before = await trx.selectFrom('memberships').select('role').where('org_id', '=', input.orgId).where('user_id', '=', user.id).executeTakeFirst();
  if (before) await setMemberRole(trx, input.orgId, user.id, 'owner');
  else await addMembership(trx, input.orgId, user.id, 'owner');
  const from = before && isRole(before.role) ? before.role : null;
  await recordAudit(trx, {
    orgId: input.orgId,
    actor: input.actor,
    ip: input.ip,
    action: 'member.first_owner',
    target: { type: 'user', id: user.id },
    metadata: { email: user.email, via: input.via, from },
  });
  await revokeOwnerLinks(trx, input.orgId);
  return { user, from };
}
