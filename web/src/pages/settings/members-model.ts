// Shared names for the members page.
import type { Item } from '../../api/types.ts';

export type Member = Item<'/api/v1/orgs/current/members'>;
export type Invite = Item<'/api/v1/orgs/current/invites'>;
export type Role = Member['role'];

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

export const ROLE_HINTS: Record<Role, string> = {
  owner: 'everything, including granting the owner role',
  admin: 'members, keys, webhooks, SSO, the audit log',
  member: 'runs scans, triages findings, edits Shield',
  viewer: 'reads scans, findings and Shield',
};

export const membersKey = ['members'] as const;
export const invitesKey = ['invites'] as const;
