// What only an owner may do — grant or take away the owner role, remove an owner, enforce SSO —
// needs an owner's own session: never a key (an admin could mint one and act beyond its role) and
// never an admin. The one exception is an organisation that has no owner yet (a fresh self-hosted
// install, made with an operator's key): its admins may name the first owner.
import { ApiError } from '../../../platform/http/errors.ts';
import type { Principal } from './principal.ts';

export function requireOwnerSession(principal: Principal, what: string, options: { ownerless?: boolean } = {}): void {
  if (principal.kind === 'session' && principal.role === 'owner') return;
  if (options.ownerless) return;
  const who = principal.kind === 'api_key' ? 'an API key never holds owner powers' : `your role is ${principal.role}`;
  throw new ApiError(403, 'owner_session_required', `only an owner, signed in, may ${what}; ${who}`, { required_role: 'owner', required_principal: 'session' });
}
