// Who is signed in, from GET /api/v1/me, and what they may do. Buttons that write are shown only
// to roles whose scopes allow the write; the API refuses the rest anyway.
import { useQuery } from '@tanstack/react-query';
import { ApiError, api, ok } from './client.ts';
import type { Answer } from './types.ts';

export type Me = Answer<'/api/v1/me'>;

export const meQueryKey = ['me'] as const;

/** The caller, or null when nobody is signed in (401). */
export function useMe() {
  return useQuery({
    queryKey: meQueryKey,
    queryFn: async (): Promise<Me | null> => {
      try {
        return await ok(api.GET('/api/v1/me'));
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
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
