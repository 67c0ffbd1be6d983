// A small, real OpenID provider on 127.0.0.1 for tests (Google sign-in and OIDC SSO): discovery,
// JWKS, an /authorize that signs in the configured user at once (no login page) and redirects
// back with a code, and a /token endpoint that checks the client (client_secret_basic or
// client_secret_post), the code, the redirect URI and the PKCE verifier against the S256
// challenge, then returns an RS256 ID token. Knobs make it misbehave the ways an attacker would:
// a token signed with a key not in the JWKS, a payload changed after signing, a wrong nonce, a
// wrong audience, a wrong issuer, an expired token.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface OpUser {
  sub?: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export type Tamper = 'foreign_key' | 'payload' | 'nonce' | 'aud' | 'iss' | 'expired' | null;

export interface AuthorizeRequest {
  params: Record<string, string>;
}

export interface OidcProvider {
  issuer: string;
  /** Who /authorize signs in next (changeable between requests). */
  user: OpUser;
  /** How the next ID token is spoiled (null: a good token). */
  tamper: Tamper;
  /** Registered clients: id → secret. */
  clients: Map<string, string>;
  /** Every /authorize request, oldest first. */
  authorizeRequests: AuthorizeRequest[];
  /** Every /token request's client authentication method, oldest first. */
  tokenAuthMethods: string[];
  close(): Promise<void>;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  nonce: string | undefined;
  challenge: string;
  user: OpUser;
  expires: number;
}

const b64url = (buf: Buffer) => buf.toString('base64url');

export async function startOidcProvider(options: { clients?: Record<string, string>; authMethods?: string[] } = {}): Promise<OidcProvider> {
  const signing = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const kid = b64url(randomBytes(8));
  const jwk: JWK = { ...(await exportJWK(signing.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const codes = new Map<string, PendingCode>();
  const authMethods = options.authMethods ?? ['client_secret_basic', 'client_secret_post'];

  const op: OidcProvider = {
    issuer: '',
    user: { email: 'person@example.com', email_verified: true, name: 'Test Person' },
    tamper: null,
    clients: new Map(Object.entries(options.clients ?? {})),
    authorizeRequests: [],
    tokenAuthMethods: [],
    close: async () => {},
  };

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) => json(res, status, { error, error_description: description });

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async function idToken(code: PendingCode): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      email: code.user.email,
      email_verified: code.user.email_verified,
      ...(code.user.name ? { name: code.user.name } : {}),
      nonce: op.tamper === 'nonce' ? 'not-the-nonce' : code.nonce,
    };
    const key: CryptoKey = op.tamper === 'foreign_key' ? foreign.privateKey : signing.privateKey;
    const jwt = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setIssuer(op.tamper === 'iss' ? `${op.issuer}/other` : op.issuer)
      .setAudience(op.tamper === 'aud' ? 'someone-else' : code.clientId)
      .setSubject(code.user.sub ?? `sub-${createHash('sha256').update(code.user.email).digest('hex').slice(0, 16)}`)
      .setIssuedAt(op.tamper === 'expired' ? now - 7200 : now)
      .setExpirationTime(op.tamper === 'expired' ? now - 3600 : now + 600)
      .sign(key);
    if (op.tamper !== 'payload') return jwt;
    // Change the payload after signing (another address), keeping the signature.
    const [header, payload, signature] = jwt.split('.') as [string, string, string];
    const changed = { ...JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), email: 'attacker@evil.example', email_verified: true };
    return `${header}.${b64url(Buffer.from(JSON.stringify(changed)))}.${signature}`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', op.issuer);
    if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer: op.issuer,
        authorization_endpoint: `${op.issuer}/authorize`,
        token_endpoint: `${op.issuer}/token`,
        jwks_uri: `${op.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        scopes_supported: ['openid', 'email', 'profile'],
        token_endpoint_auth_methods_supported: authMethods,
        code_challenge_methods_supported: ['S256'],
        claims_supported: ['sub', 'email', 'email_verified', 'name'],
      });
    }
    if (req.method === 'GET' && url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const params = Object.fromEntries(url.searchParams);
      op.authorizeRequests.push({ params });
      const redirectUri = params.redirect_uri;
      if (!params.client_id || !op.clients.has(params.client_id)) return oauthError(res, 400, 'unauthorized_client', 'unknown client_id');
      if (!redirectUri) return oauthError(res, 400, 'invalid_request', 'redirect_uri missing');
      if (params.response_type !== 'code') return oauthError(res, 400, 'unsupported_response_type', 'only code');
      if (!params.code_challenge || params.code_challenge_method !== 'S256') return oauthError(res, 400, 'invalid_request', 'PKCE S256 required');
      if (!(params.scope ?? '').split(' ').includes('openid')) return oauthError(res, 400, 'invalid_scope', 'openid scope required');
      const code = b64url(randomBytes(24));
      codes.set(code, { clientId: params.client_id, redirectUri, nonce: params.nonce, challenge: params.code_challenge, user: { ...op.user }, expires: Date.now() + 60_000 });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      if (params.state !== undefined) back.searchParams.set('state', params.state);
      res.writeHead(302, { location: back.toString() });
      return void res.end();
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = new URLSearchParams(await readBody(req));
      let clientId: string | null = null;
      let secret: string | null = null;
      let method = 'none';
      const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      if (basic?.[1]) {
        const [id, pass] = Buffer.from(basic[1], 'base64').toString('utf8').split(':') as [string, string | undefined];
        clientId = decodeURIComponent(id);
        secret = decodeURIComponent(pass ?? '');
        method = 'client_secret_basic';
      } else if (form.get('client_secret') !== null) {
        clientId = form.get('client_id');
        secret = form.get('client_secret');
        method = 'client_secret_post';
      }
      op.tokenAuthMethods.push(method);
      if (!authMethods.includes(method)) return oauthError(res, 401, 'invalid_client', `${method} is not supported`);
      if (!clientId || op.clients.get(clientId) !== secret) return oauthError(res, 401, 'invalid_client', 'bad client credentials');
      if (form.get('grant_type') !== 'authorization_code') return oauthError(res, 400, 'unsupported_grant_type', 'authorization_code only');
      const code = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!code || code.expires < Date.now() || code.clientId !== clientId) return oauthError(res, 400, 'invalid_grant', 'unknown, used or expired code');
      if (form.get('redirect_uri') !== code.redirectUri) return oauthError(res, 400, 'invalid_grant', 'redirect_uri differs from the authorization request');
      const verifier = form.get('code_verifier') ?? '';
      if (b64url(createHash('sha256').update(verifier).digest()) !== code.challenge) return oauthError(res, 400, 'invalid_grant', 'PKCE verification failed');
      return json(res, 200, { access_token: b64url(randomBytes(24)), token_type: 'Bearer', expires_in: 3600, scope: 'openid email profile', id_token: await idToken(code) });
    }
    return oauthError(res, 404, 'not_found', `${req.method} ${url.pathname}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => oauthError(res, 500, 'server_error', String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  op.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  op.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return op;
}

/**
 * A browser, as far as these flows need one: follows redirects by hand (fetch with
 * `redirect: 'manual'`) and keeps cookies per name (every server here is 127.0.0.1).
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const match = /^([^=;\s]+)=([^;]*)/.exec(line);
      if (!match?.[1]) continue;
      const expired = /;\s*max-age=0/i.test(line) || /;\s*expires=Thu, 01 Jan 1970/i.test(line) || match[2] === '';
      if (expired) this.cookies.delete(match[1]);
      else this.cookies.set(match[1], match[2] ?? '');
    }
  }

  /** One request; Set-Cookie is kept. */
  async get(url: string, headers: Record<string, string> = {}): Promise<globalThis.Response> {
    const res = await fetch(url, { redirect: 'manual', headers: { ...(this.cookies.size > 0 ? { cookie: this.cookieHeader() } : {}), ...headers } });
    this.keep(res.headers);
    return res;
  }

  /** Follows redirects from `url` until a non-redirect answer, or until `stopAt(url)` says stop before requesting it. */
  async follow(url: string, stopAt?: (next: string) => boolean): Promise<{ response: globalThis.Response; url: string; hops: string[] }> {
    const hops: string[] = [];
    let current = url;
    for (let i = 0; i < 10; i++) {
      hops.push(current);
      const response = await this.get(current);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return { response, url: current, hops };
      await response.arrayBuffer();
      const next = new URL(location, current).toString();
      if (stopAt?.(next)) return { response, url: next, hops };
      current = next;
    }
    throw new Error(`too many redirects from ${url}`);
  }
}
