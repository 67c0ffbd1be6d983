// GitHub App user authorization as github.com serves it: /login/oauth/authorize auto-approves and
// redirects with a code; /login/oauth/access_token checks the client, the code, redirect_uri and
// the S256 verifier, and a refresh retires the old refresh and access tokens. Also the app's
// revocation API (DELETE /applications/{client_id}/token and /grant), which answers with the
// client's Basic credentials rather than a user's token.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CLIENT_ID, CLIENT_SECRET, DOCS, type GrantRecord, type Json, liveToken, REFRESH_LIFETIME_SECONDS, revokeGrant, type StandInContext, token } from './context.ts';
import { describeErrors } from './openapi-validation.ts';
import { json, refuse } from './replies.ts';

export function authorize(ctx: StandInContext, res: ServerResponse, query: URLSearchParams): void {
  const p = Object.fromEntries(query);
  // GitHub shows a 404 page for an unknown client; the stand-in records it as a mismatch.
  if (p.client_id !== CLIENT_ID) return refuse(ctx, res, `GET /login/oauth/authorize with client_id=${p.client_id ?? ''}`, 404, { message: 'Not Found' });
  // `state` is optional for GitHub; Aegis must always send it (CSRF), so it is required here.
  if (!p.state) return refuse(ctx, res, 'GET /login/oauth/authorize without state', 400, { error: 'invalid_request' });
  if (p.code_challenge !== undefined && (p.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge))) {
    return refuse(ctx, res, `GET /login/oauth/authorize with code_challenge_method=${p.code_challenge_method ?? ''}`, 400, { error: 'invalid_request', error_description: 'code_challenge_method must be S256' });
  }
  if (p.redirect_uri !== undefined && !/^https?:\/\//.test(p.redirect_uri)) return refuse(ctx, res, 'GET /login/oauth/authorize with a redirect_uri that is not http(s)', 400, { error: 'redirect_uri_mismatch' });
  const code = randomBytes(10).toString('hex');
  ctx.codes.set(code, { clientId: p.client_id, redirectUri: p.redirect_uri ?? null, challenge: p.code_challenge ?? null, expires: Date.now() + 600_000 });
  const target = new URL(p.redirect_uri ?? `${ctx.standIn.url}/callback`);
  target.searchParams.set('code', code);
  target.searchParams.set('state', p.state);
  res.writeHead(302, { location: target.toString() });
  res.end();
}

/** GitHub answers token requests with 200 and an `error` field when the grant is refused. */
function tokenError(res: ServerResponse, error: string, description: string): void {
  json(res, 200, { error, error_description: description, error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors' });
}

function issueUserTokens(ctx: StandInContext, res: ServerResponse, grant: GrantRecord): void {
  const access = token('ghu');
  const refresh = token('ghr');
  const now = Date.now();
  ctx.tokens.set(access, { kind: 'user', login: grant.login, scopes: [], expiresAt: now + ctx.lifetime * 1000, revoked: false, grant, pair: refresh });
  ctx.tokens.set(refresh, { kind: 'refresh', login: grant.login, scopes: [], expiresAt: now + REFRESH_LIFETIME_SECONDS * 1000, revoked: false, grant, pair: access });
  grant.tokens.add(access);
  grant.tokens.add(refresh);
  json(res, 200, { access_token: access, expires_in: ctx.lifetime, refresh_token: refresh, refresh_token_expires_in: REFRESH_LIFETIME_SECONDS, scope: '', token_type: 'bearer' });
}

export function accessToken(ctx: StandInContext, req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  const type = req.headers['content-type'] ?? '';
  let p: Record<string, string>;
  if (type.startsWith('application/x-www-form-urlencoded')) p = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  else if (type.startsWith('application/json')) {
    try {
      p = JSON.parse(raw.toString('utf8')) as Record<string, string>;
    } catch {
      return refuse(ctx, res, 'POST /login/oauth/access_token with a body that is not JSON', 400, { error: 'invalid_request' });
    }
  } else return refuse(ctx, res, `POST /login/oauth/access_token with content-type ${type}`, 400, { error: 'invalid_request' });
  ctx.standIn.requests.push({ method: 'POST', path: '/login/oauth/access_token', body: p });
  // The stand-in answers JSON only, so Aegis must ask for it (GitHub's default is form-encoded).
  if (!(req.headers.accept ?? '').includes('application/json')) return refuse(ctx, res, 'POST /login/oauth/access_token without Accept: application/json', 406, { error: 'not_acceptable' });
  if (p.client_id !== CLIENT_ID || p.client_secret !== CLIENT_SECRET) return tokenError(res, 'incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');

  if (p.grant_type === 'refresh_token') {
    if (!p.refresh_token) return refuse(ctx, res, 'POST /login/oauth/access_token (refresh) without refresh_token', 200, { error: 'bad_refresh_token', error_description: 'The refresh token passed is incorrect or expired.' });
    const record = liveToken(ctx, p.refresh_token, ['refresh']);
    if (!record?.grant) return tokenError(res, 'bad_refresh_token', 'The refresh token passed is incorrect or expired.');
    // GitHub: once a refresh token is used, it and the user access token issued with it no longer
    // work. Other token pairs of the same grant (other connections of the user) are untouched.
    record.revoked = true;
    const previous = record.pair ? ctx.tokens.get(record.pair) : undefined;
    if (previous) previous.revoked = true;
    ctx.refreshes++;
    return issueUserTokens(ctx, res, record.grant);
  }
  if (p.grant_type !== undefined && p.grant_type !== 'authorization_code') return refuse(ctx, res, `POST /login/oauth/access_token with grant_type=${p.grant_type}`, 200, { error: 'unsupported_grant_type' });
  if (!p.code) return refuse(ctx, res, 'POST /login/oauth/access_token without code', 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
  const pending = ctx.codes.get(p.code);
  ctx.codes.delete(p.code);
  if (!pending || pending.expires < Date.now() || pending.clientId !== p.client_id) return tokenError(res, 'bad_verification_code', 'The code passed is incorrect or expired.');
  if (pending.redirectUri !== null && p.redirect_uri !== undefined && p.redirect_uri !== pending.redirectUri) return tokenError(res, 'redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.');
  if (pending.challenge !== null) {
    const verifier = p.code_verifier ?? '';
    const computed = createHash('sha256').update(verifier).digest('base64url');
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || computed !== pending.challenge) return tokenError(res, 'bad_verification_code', 'The code_verifier does not match the code_challenge.');
  }
  // One authorization per app and user: a second flow by the same user adds tokens to it.
  const key = `${pending.clientId}:${ctx.user.login}`;
  let grant = ctx.grants.get(key);
  if (!grant || grant.revoked) {
    grant = { clientId: pending.clientId, login: ctx.user.login, tokens: new Set(), revoked: false };
    ctx.grants.set(key, grant);
  }
  issueUserTokens(ctx, res, grant);
}
/** DELETE /applications/{client_id}/token: revokes that one access token (Basic auth with the client's id and secret). */
export function revokeTokenCall(ctx: StandInContext, req: IncomingMessage, res: ServerResponse, what: string, clientId: string, body: unknown): void {
  const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
  const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : '';
  if (decoded !== `${CLIENT_ID}:${CLIENT_SECRET}` || clientId !== CLIENT_ID) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
  const op = ctx.specs.find((o) => o.template === '/applications/{client_id}/token')!;
  if (body === undefined) return refuse(ctx, res, `${what} without a body`, 400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' });
  if (!op.body!(body)) return refuse(ctx, res, `${what}: ${describeErrors(op.body!.errors)}`, 422, { message: 'Invalid request.', documentation_url: DOCS, status: '422' });
  const value = String((body as Json).access_token);
  const record = liveToken(ctx, value, ['user']);
  if (!record?.grant || record.grant.clientId !== clientId) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
  record.revoked = true;
  ctx.revokedAccessTokens.push(value);
  res.writeHead(204);
  res.end();
}

/** DELETE /applications/{client_id}/grant: revokes every token of the grant the given token belongs to. */
export function revokeGrantCall(ctx: StandInContext, req: IncomingMessage, res: ServerResponse, what: string, clientId: string, body: unknown): void {
  const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
  const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : '';
  if (decoded !== `${CLIENT_ID}:${CLIENT_SECRET}` || clientId !== CLIENT_ID) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
  const op = ctx.specs.find((o) => o.template === '/applications/{client_id}/grant')!;
  if (!op.body!(body)) return refuse(ctx, res, `${what}: ${describeErrors(op.body!.errors)}`, 422, { message: 'Invalid request.', documentation_url: DOCS, status: '422' });
  const record = ctx.tokens.get(String((body as Json).access_token));
  if (!record?.grant) return json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
  revokeGrant(ctx, record.grant);
  ctx.revokedGrants.push(record.grant.clientId);
  res.writeHead(204);
  res.end();
}
