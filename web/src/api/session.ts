// Who is signed in, from GET /auth/session (what GET /api/v1/me says, or `signed_in: false`), and
// what they may do. Buttons that write are shown only to roles whose scopes allow the write; the
// API refuses the rest anyway. The probe answers 200 when nobody is signed in: a 401 here would be
// logged by the browser as an error on every signed-out page (docs/dashboard.md).
import { useQuery } from '@tanstack/react-query';
import { api, ok } from './client.ts';
import type { Answer } from './types.ts';

export type Me = Answer<'/api/v1/me'>;

export const meQueryKey = ['me'] as const;

/** The signed-in person, or null when nobody is. */
export function useMe() {
  return useQuery({
    queryKey: meQueryKey,
    queryFn: async (): Promise<Me | null> => {
      const session = await ok(api.GET('/auth/session'));
      return session.signed_in ? session.me : null;
    },
    staleTime: 60_000,
  });
}

/** Scopes imply their read scope, and `admin` implies every scope (spec 5.2). */
export function hasScope(me: Me | null | undefined, scope: string): boolean {
  if (!me) return false;
  const scopes = new Set<string>(me.scopes);
  if (scopes.has('admin') || scopes.has(scope)) return true;
  return scope.endsWith(':read') && scopes.has(scope.replace(/:read$/, ':write'));
}

/** Whether the signed-in person may use a write of `scope` (`shield:write`, `admin`, …). */
export function useCan(scope: string): boolean {
  const { data } = useMe();
  return hasScope(data, scope);
}
