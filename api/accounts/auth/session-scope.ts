// Where a session may work, by how it was signed in (docs/security.md, "Identity"):
//   - a sign-in that proved control of the address itself (magic link, Google's verified address,
//     an invite link mailed to it) may work in any of the person's organisations that do not
//     enforce SSO;
//   - a sign-in through an organisation's identity provider is that organisation's word only: the
//     session is bound to it and can never switch to another organisation, even one that accepts
//     e-mail links — otherwise any organisation's IdP could vouch for someone else's address and
//     walk into their other organisations;
//   - the first-owner link (api/accounts/first-owner/) is the server operator's word for `default`
//     only — it proves no mailbox — so its session is bound to `default` the same way.
// An organisation that enforces SSO admits only sessions its own identity provider signed in.
import type { SessionPrincipal } from './principal.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import { ssoRequired } from './sso-required.ts';
import type { SessionReach } from '../sessions/session-store.ts';

export interface SignInProof {
  method: string;
  /** The organisation the sign-in vouched for (SSO sign-ins, the first-owner link). */
  ssoOrgId: string | null;
}

export interface OrganizationGate {
  id: string;
  name: string;
  slug: string;
  ssoEnforced: boolean;
}

/** Sign-ins through an organisation's own identity provider: the only ones SSO enforcement admits. */
const IDP_METHODS: ReadonlySet<string> = new Set(['sso_oidc', 'sso_saml']);
/** Sign-ins that vouch for a person to one organisation only. */
export const ORG_BOUND_METHODS = ['sso_oidc', 'sso_saml', 'owner_link'] as const;
const BOUND: ReadonlySet<string> = new Set(ORG_BOUND_METHODS);

/** The organisation a bound session (an IdP's, the first-owner link's) works in; null for a session the address itself proved. */
export function boundOrganization(proof: SignInProof): string | null {
  return BOUND.has(proof.method) ? proof.ssoOrgId : null;
}

export type Refusal = 'sso_required' | 'sign_in_required';

/** Why a session bound to `boundOrgId` (boundOrganization; null: not bound) may not work in `org`, or null when it may. */
export function refusalFor(boundOrgId: string | null, org: Pick<OrganizationGate, 'id' | 'ssoEnforced'>): Refusal | null {
  if (boundOrgId !== null) return boundOrgId === org.id ? null : 'sign_in_required';
  return org.ssoEnforced ? 'sso_required' : null;
}

/** Why a session signed in by `proof` may not work in `org` now, or null when it may. */
export function sessionRefusal(proof: SignInProof, org: Pick<OrganizationGate, 'id' | 'ssoEnforced'>): Refusal | null {
  const refusal = refusalFor(boundOrganization(proof), org);
  // Bound there, but not by its identity provider (the first-owner link): enforcement refuses it
  // like any sign-in that did not come through the IdP.
  if (refusal === null && org.ssoEnforced && !IDP_METHODS.has(proof.method)) return 'sso_required';
  return refusal;
}

/** The answer to a refusal (403), saying where to sign in instead. */
export function refusalError(refusal: Refusal, org: Pick<OrganizationGate, 'name' | 'slug'>): ApiError {
  if (refusal === 'sso_required') return ssoRequired(org);
  return new ApiError(
    403,
    'sign_in_required',
    `this session was signed in by another organisation's identity provider, which vouches for you there only: sign in again (an e-mail link, or ${org.name}'s own sign-in) to work in ${org.name}`,
    { sign_in_url: '/auth/login', sso_url: `/auth/sso?org=${encodeURIComponent(org.slug)}` },
  );
}

/** The sessions a caller may see and end: all the person's, or those of the organisation it is bound to. */
export const reachOf = (principal: SessionPrincipal): SessionReach => ({ userId: principal.user.id, boundOrgId: principal.boundOrgId });
