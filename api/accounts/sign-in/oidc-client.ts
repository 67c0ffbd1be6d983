// OpenID Connect relying party (Google sign-in and organisations' OIDC SSO), on openid-client:
// authorization code flow with PKCE (S256), `state` and `nonce`. Every request to the identity
// provider (discovery, token endpoint, JWKS) goes through guardedFetch, the private-address guard
// URL scans use. The ID token from the token endpoint is checked for its signature against the
// issuer's JWKS (openid-client's non-repudiation checks; off by default there because TLS vouches
// for the token endpoint — we want the signature checked anyway), and for iss, aud, exp, iat and
// nonce. Discovered configurations are kept a few minutes per issuer and client.
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { guardedFetch, RefusedAddressError } from '../../../platform/net/guarded-fetch.ts';

export interface OidcClientSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface VerifiedIdentity {
  sub: string;
  /** The address when the provider says it is verified (`email_verified: true`), else null. */
  email: string | null;
  /** The address as the provider gave it, verified or not (for messages). */
  claimedEmail: string | null;
  name: string | null;
}

/** The identity provider refused, or its answer did not verify (bad state, nonce, signature, audience…). */
export class OidcVerificationError extends Error {
  override name = 'OidcVerificationError';
}

/** Discovery failed (unreachable, refused by the address guard, not an OpenID issuer). */
export class OidcDiscoveryError extends Error {
  override name = 'OidcDiscoveryError';
}

const CACHE_MS = 5 * 60 * 1000;
const SCOPE = 'openid email profile';

/** The first message in an error's cause chain that the address guard wrote, if any. */
export function refusedAddressIn(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof RefusedAddressError) return e.message;
  }
  return undefined;
}

function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof Error && e.message && !parts.includes(e.message)) parts.push(e.message);
  }
  return parts.join(': ') || String(err);
}

export class OidcClients {
  private readonly cache = new Map<string, { config: Promise<client.Configuration>; expires: number }>();
  private readonly fetcher: typeof fetch;

  constructor(options: { allowPrivate: boolean }) {
    this.fetcher = guardedFetch({ allowPrivate: options.allowPrivate });
  }

  /** The client configuration for `settings`, discovering the issuer (cached a few minutes). */
  async configuration(settings: OidcClientSettings): Promise<client.Configuration> {
    const key = `${settings.issuer}\n${settings.clientId}\n${createHash('sha256').update(settings.clientSecret).digest('hex')}`;
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now) return cached.config;
    for (const [k, v] of this.cache) if (v.expires <= now) this.cache.delete(k);
    const config = this.discover(settings);
    this.cache.set(key, { config, expires: now + CACHE_MS });
    config.catch(() => this.cache.delete(key));
    return config;
  }

  /** Discovers the issuer without caching: for checking settings before they are saved. */
  async check(settings: OidcClientSettings): Promise<void> {
    await this.discover(settings);
  }

  private async discover(settings: OidcClientSettings): Promise<client.Configuration> {
    let issuer: URL;
    try {
      issuer = new URL(settings.issuer);
    } catch {
      throw new OidcDiscoveryError(`${settings.issuer} is not a URL`);
    }
    if (issuer.protocol !== 'https:' && issuer.protocol !== 'http:') throw new OidcDiscoveryError(`${settings.issuer}: the issuer must be an http(s) URL`);
    const execute = [client.enableNonRepudiationChecks];
    if (issuer.protocol === 'http:') execute.push(client.allowInsecureRequests);
    try {
      const probe = await client.discovery(issuer, settings.clientId, undefined, undefined, {
        [client.customFetch]: this.fetcher as client.CustomFetch,
        execute,
        timeout: 10,
      });
      const metadata = probe.serverMetadata();
      if (!metadata.authorization_endpoint || !metadata.token_endpoint || !metadata.jwks_uri) {
        throw new OidcDiscoveryError(`${settings.issuer}: the discovery document lacks authorization_endpoint, token_endpoint or jwks_uri`);
      }
      // client_secret_basic unless the provider supports only client_secret_post (the default per RFC 8414 is basic).
      const methods = metadata.token_endpoint_auth_methods_supported;
      const auth = methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? client.ClientSecretPost(settings.clientSecret) : client.ClientSecretBasic(settings.clientSecret);
      const config = new client.Configuration(metadata, settings.clientId, { client_secret: settings.clientSecret }, auth);
      config[client.customFetch] = this.fetcher as client.CustomFetch;
      config.timeout = 10;
      for (const extension of execute) extension(config);
      return config;
    } catch (err) {
      if (err instanceof OidcDiscoveryError) throw err;
      const refused = refusedAddressIn(err);
      throw new OidcDiscoveryError(refused ?? `OpenID discovery of ${settings.issuer} failed: ${describe(err)}`);
    }
  }

  /** A fresh PKCE verifier and nonce for a new sign-in (kept in its flow row). */
  static newChecks(): { codeVerifier: string; nonce: string } {
    return { codeVerifier: client.randomPKCECodeVerifier(), nonce: client.randomNonce() };
  }

  /** The provider's authorization URL for a sign-in: PKCE (S256 challenge of `codeVerifier`), `state` and `nonce`. */
  async authorizationUrl(
    settings: OidcClientSettings,
    input: { redirectUri: string; state: string; codeVerifier: string; nonce: string; loginHint?: string | undefined },
  ): Promise<string> {
    const config = await this.configuration(settings);
    const parameters: Record<string, string> = {
      redirect_uri: input.redirectUri,
      scope: SCOPE,
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(input.codeVerifier),
      code_challenge_method: 'S256',
      state: input.state,
      nonce: input.nonce,
    };
    if (input.loginHint) parameters.login_hint = input.loginHint;
    return client.buildAuthorizationUrl(config, parameters).href;
  }

  /**
   * Checks the provider's answer at the callback and redeems the code: `state` must be the one
   * the flow was started with, the token endpoint must accept the PKCE verifier, and the ID token
   * must be signed by a key of the issuer's JWKS, for this client, unexpired, with the nonce.
   */
  async callback(
    settings: OidcClientSettings,
    input: { redirectUri: string; query: URLSearchParams; state: string; codeVerifier: string; nonce: string },
  ): Promise<VerifiedIdentity> {
    const config = await this.configuration(settings);
    const current = new URL(input.redirectUri);
    current.search = input.query.toString();
    let claims: client.IDToken | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: input.codeVerifier,
        expectedState: input.state,
        expectedNonce: input.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (err) {
      const refused = refusedAddressIn(err);
      throw new OidcVerificationError(refused ?? describe(err));
    }
    if (!claims) throw new OidcVerificationError('the identity provider returned no ID token');
    const claimedEmail = typeof claims.email === 'string' ? claims.email.toLowerCase() : null;
    const verified = claims.email_verified === true;
    const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200) : null;
    return { sub: claims.sub, email: claimedEmail && verified ? claimedEmail : null, claimedEmail, name };
  }
}
