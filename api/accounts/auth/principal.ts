// Who is calling. API keys and browser sessions both become a principal with an organisation and a
// set of scopes, so one authorisation check (api/accounts/auth/plugin.ts) serves both (DESIGN §7): a route
// asks which scopes and which organisation, never "key or cookie?".
import type { Scope } from './scopes.ts';
import type { Role } from './roles.ts';
import type { Plan } from '../people/plans.ts';
import type { Environment } from '../../../platform/db/environments.ts';

// A type alias, not an interface, so it fits the response types inferred from JSON Schema.
export type OrganizationSummary = {
  id: string;
  slug: string;
  name: string;
  plan: Plan;
  created_at: string;
};

export interface Actor {
  type: 'api_key' | 'user' | 'system';
  id: string;
}

interface PrincipalBase {
  /**
   * The data space the caller works in: the organisation's live data (its own id) or its sandbox
   * (platform/db/environments.ts). Stores scope every environment-owned row by it.
   */
  orgId: string;
  environment: Environment;
  /** The organisation as of the lookup (cached with it); organisation-level routes use its id. */
  organization: OrganizationSummary;
  scopes: ReadonlySet<Scope>;
  /** Who acts, for the audit log and `created_by` / `triggered_by` fields. */
  actor: Actor;
}

export interface KeyPrincipal extends PrincipalBase {
  kind: 'api_key';
  keyId: string;
  keyName: string;
  /** Epoch ms after which the key stops working (rotation grace), or null. */
  expiresAt: number | null;
  /** Replaced by rotation and in its grace period: it may call the API, not manage keys, members or SSO. */
  rotating: boolean;
  /** The person whose role caps the key (and whose keys it makes); null for keys an operator made. */
  ownerUserId: string | null;
}

export type SessionUser = {
  id: string;
  email: string;
  name: string | null;
};

export interface SessionPrincipal extends PrincipalBase {
  kind: 'session';
  sessionId: string;
  user: SessionUser;
  role: Role;
  /** The organisation whose identity provider (or the first-owner link) signed this session in: it works there only. Null when the address itself was proved. */
  boundOrgId: string | null;
}

export type Principal = KeyPrincipal | SessionPrincipal;
