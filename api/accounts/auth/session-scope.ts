// Where a session may work, by how it was signed in (docs/security.md, "Identity"):
//   - a sign-in that proved control of the address itself (magic link, Google's verified address,
//     an invite link mailed to it) may work in any of the person's organisations that do not
//     enforce SSO;
//   - a sign-in through an organisation's identity provider is that organisation's word only: the
//     session is bound to it and can never switch to another organisation, even one that accepts
//     e-mail links — otherwise any organisation's IdP could vouch for someone else's address and
//     walk into their other organisations.
// An organisation that enforces SSO admits only sessions bound to it.
import type { SessionPrincipal } from './principal.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import { ssoRequired } from './sso-required.ts';
import type { SessionReach } from '../sessions/session-store.ts';

export interface SignInProof {
  method: string;
  /** The organisation whose identity provider vouched (SSO sign-ins). */
  ssoOrgId: string | null;
}

export interface OrganizationGate {
  id: string;
  name: string;
  slug: string;
  ssoEnforced: boolean;
}

const ORG_BOUND_METHODS: ReadonlySet<string> = new Set(['sso_oidc', 'sso_saml']);

/** The organisation an identity-provider session is bound to; null for a session the address itself proved. */
export function boundOrganization(proof: SignInProof): string | null {
  return ORG_BOUND_METHODS.has(proof.method) ? proof.ssoOrgId : null;
}

export type Refusal = 'sso_required' | 'sign_in_required';

/** Why a session bound to `boundOrgId` (boundOrganization; null: not bound) may not work in `org`, or null when it may. */
export function refusalFor(boundOrgId: string | null, org: Pick<OrganizationGate, 'id' | 'ssoEnforced'>): Refusal | null {
  if (boundOrgId !== null) return boundOrgId === org.id ? null : 'sign_in_required';
  return org.ssoEnforced ? 'sso_required' : null;
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
