// The scope catalogue of spec 5.2 and how a key's scopes satisfy a route's requirement.

export const SCOPES = [
  'scans:read',
  'scans:write',
  'vulnerabilities:read',
  'vulnerabilities:write',
  'shield:read',
  'shield:write',
  'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What a route asks of the caller: `public` (no credentials), `authenticated` (any valid key or
 * session), `user` (a signed-in person: their own sessions and invites) or a scope. Every /api
 * route must say which; see the auth plugin.
 */
export type AuthRequirement = 'public' | 'authenticated' | 'user' | Scope;

/** `admin` grants everything; `x:write` also grants `x:read`. */
export function grants(granted: ReadonlySet<Scope>, required: Scope): boolean {
  if (granted.has('admin') || granted.has(required)) return true;
  if (required.endsWith(':read')) return granted.has(required.replace(/:read$/, ':write') as Scope);
  return false;
}
