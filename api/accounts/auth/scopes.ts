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

/**
 * The scopes of `scopes` that `cap` allows, each lowered as little as needed: a write the cap only
 * reads becomes a read, `admin` becomes the cap itself. A key is capped this way by the role of
 * the person behind it, at every use (DESIGN §7; docs/security.md).
 */
export function capScopes(scopes: readonly Scope[], cap: readonly Scope[]): Scope[] {
  const allowed = new Set(cap);
  const out = new Set<Scope>();
  for (const scope of scopes) {
    if (grants(allowed, scope)) out.add(scope);
    else if (scope === 'admin') for (const c of cap) out.add(c);
    else if (scope.endsWith(':write')) {
      const read = scope.replace(/:write$/, ':read') as Scope;
      if (grants(allowed, read)) out.add(read);
    }
  }
  return [...out];
}

/** `admin` grants everything; `x:write` also grants `x:read`. */
export function grants(granted: ReadonlySet<Scope>, required: Scope): boolean {
  if (granted.has('admin') || granted.has(required)) return true;
  if (required.endsWith(':read')) return granted.has(required.replace(/:read$/, ':write') as Scope);
  return false;
}
