// The state one GitHub stand-in keeps, shared by its OAuth, REST, git and webhook modules: they take
// this context explicitly rather than closing over it, so each module can live in its own file.
// Also here: the token store's rules (which tokens are live, what revoking a grant retires) and the
// users GitHub knows, since every module asks them.
import { randomBytes } from 'node:crypto';
import type { Operation } from './openapi-validation.ts';
import type { GithubStandIn, GithubUser } from './types.ts';

export const CLIENT_ID = 'aegis-test-client';
export const CLIENT_SECRET = 'aegis-test-secret';
export const REFRESH_LIFETIME_SECONDS = 15_897_600;
export const DOCS = 'https://docs.github.com/rest';

export type Json = Record<string, unknown>;

export interface TokenRecord {
  kind: 'pat' | 'user' | 'refresh';
  login: string;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
  grant: GrantRecord | null;
  /** A user token's refresh token, and the reverse: the pair one token request issued. */
  pair: string | null;
}

/** A user's authorization of the app: one per client and user, whichever flow made its tokens. */
export interface GrantRecord {
  clientId: string;
  login: string;
  tokens: Set<string>;
  revoked: boolean;
}

export interface PendingCode {
  clientId: string;
  redirectUri: string | null;
  challenge: string | null;
  expires: number;
}

export interface StandInContext {
  /** The object tests hold; its arrays and maps are the stand-in's records. */
  standIn: GithubStandIn;
  /** Where the bare repositories live. */
  root: string;
  /** Lifetime of user access tokens from the OAuth flow, in seconds. */
  lifetime: number;
  /** The API operations served, compiled from GitHub's OpenAPI description. */
  specs: Operation[];
  tokens: Map<string, TokenRecord>;
  codes: Map<string, PendingCode>;
  users: Map<string, GithubUser>;
  /** Client ids whose grant was revoked through the API, one entry per call. */
  revokedGrants: string[];
  /** Access tokens revoked through the API, one entry per call. */
  revokedAccessTokens: string[];
  /** Live grants by `<client id>:<login>`. */
  grants: Map<string, GrantRecord>;
  refreshes: number;
  failures: { count: number; status: number; headers: Record<string, string> } | null;
  webhook: { url: string; secret: string } | null;
  /** The next id for users, repositories, issues, comments, check runs and statuses alike. */
  nextId: number;
  /** The user OAuth grants belong to. */
  user: GithubUser;
}

export const token = (prefix: string): string => `${prefix}_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'x').slice(0, 36)}`;

/** The user `login`, made on first mention (GitHub knows every login a test names). */
export function userOf(ctx: StandInContext, login: string): GithubUser {
  let found = ctx.users.get(login);
  if (!found) {
    found = { id: ctx.nextId++, login };
    ctx.users.set(login, found);
  }
  return found;
}

export function revokeGrant(ctx: StandInContext, grant: GrantRecord): void {
  grant.revoked = true;
  for (const value of grant.tokens) {
    const record = ctx.tokens.get(value);
    if (record) record.revoked = true;
  }
}

export function liveToken(ctx: StandInContext, value: string | null, kinds: TokenRecord['kind'][]): TokenRecord | null {
  if (!value) return null;
  const record = ctx.tokens.get(value);
  if (!record || !kinds.includes(record.kind) || record.revoked || record.grant?.revoked) return null;
  if (record.expiresAt !== null && record.expiresAt <= Date.now()) return null;
  return record;
}
