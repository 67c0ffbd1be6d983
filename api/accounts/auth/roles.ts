// Members' roles, mapped onto the scope catalogue (DESIGN §7) so that a session is authorised by
// the same check as an API key:
// - owner: everything, including granting and taking away the owner role;
// - admin: everything else (members, invites, keys, webhooks, SSO, integrations, the audit log);
// - member: reads and writes scans, findings and Shield configuration;
// - viewer: reads them.
import type { Scope } from './scopes.ts';

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: ['admin'],
  admin: ['admin'],
  member: ['scans:write', 'vulnerabilities:write', 'shield:write'],
  viewer: ['scans:read', 'vulnerabilities:read', 'shield:read'],
};

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);
