// Single sign-on (spec 5.4, Enterprise): an organisation's OIDC or SAML 2.0 connection.
// Settings, all `admin`, every write on the Enterprise plan and audited:
//   GET    /api/v1/orgs/current/sso               the connection (never the client secret)
//   PUT    /api/v1/orgs/current/sso               configure (OIDC discovery / SAML metadata checked first)
//   DELETE /api/v1/orgs/current/sso               remove (not while enforced)
//   POST   /api/v1/orgs/current/sso/test          a "Try login" URL for the admin's browser
//   POST   /api/v1/orgs/current/sso/enforcement   enforce (after a successful try) or stop enforcing
// Browser side (public):
//   GET /auth/sso?org=<slug>|email=<address>      starts a sign-in at the organisation's IdP
//   GET /auth/sso/start/<state>                   starts a "Try login" (the URL from .../sso/test)
//   GET /auth/sso/oidc/callback                   the OIDC IdP's answer (SAML's is in saml/routes.ts)
// Changing settings clears `tested_at`; enforcement needs a successful try since. While enforced
// the settings cannot change and the connection cannot be removed: stop enforcing first.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { organizationLevel, principalOf } from '../auth/plugin.ts';
import type { Role } from '../auth/roles.ts';
import { hashToken } from '../../../platform/crypto/tokens.ts';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { AuthFlowRow } from '../../../platform/db/schema.ts';
import { ApiError, conflict, notFound, validationFailed } from '../../../platform/http/errors.ts';
import { nullableTimestampSchema, timestampSchema } from '../../../platform/http/schemas.ts';
import { callbackQuery, checkFlowCookie, FLOW_INVALID, oidcCallbackQuery } from '../sign-in/callbacks.ts';
import { guardedFetch } from '../../../platform/net/guarded-fetch.ts';
import { OidcClients, OidcDiscoveryError, OidcVerificationError, refusedAddressIn } from '../sign-in/oidc-client.ts';
import { requirePlan } from '../people/plans.ts';
import { domainSchema } from '../people/resources.ts';
import { requireOwnerSession } from '../auth/owner-powers.ts';
import { FLOW_COOKIE, flowCookieOptions } from '../auth/cookies.ts';
import { rememberReturnTo } from '../sign-in/return-to.ts';
import { returnToSchema } from '../sign-in/forms.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { findUserByEmail, normalizeEmail } from '../people/user-store.ts';
import { auditSsoRefusal, completeSsoSignIn } from '../sign-in/sso-complete.ts';
import { deleteSsoConnection, findSsoConnection, findSsoConnectionForDomain, saveSsoConnection, setSsoEnforced, verifiedAmong, type SsoConnection, type SsoSettings } from '../sign-in/sso-connection-store.ts';
import { FLOW_LIFETIME_MS, finishFlow, setFlowRequestId, startFlow, type FlowKind } from '../sign-in/flows.ts';
import { readIdpMetadata } from './saml-metadata.ts';
import { serviceProvider } from './saml-service-provider.ts';
import { samlSignInUrl } from './saml-sign-in.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export interface SsoRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  tokens: SessionTokens;
  changes: AuthChanges;
  publicUrl: () => string;
  allowPrivateTargets: boolean;
}

const JIT_ROLES = ['admin', 'member', 'viewer'] as const;

const connectionSchema = {
  type: 'object',
  required: ['protocol', 'oidc', 'saml', 'enforced', 'jit_domains', 'jit_domains_pending', 'jit_role', 'tested_at', 'service_provider', 'oidc_redirect_uri', 'created_at', 'updated_at'],
  properties: {
    protocol: { type: 'string', enum: ['oidc', 'saml'] },
    oidc: {
      type: ['object', 'null'],
      required: ['issuer', 'client_id', 'client_secret_set'],
      properties: {
        issuer: { type: 'string' },
        client_id: { type: 'string' },
        client_secret_set: { type: 'boolean', description: 'The client secret is stored (sealed); it is never returned.' },
      },
      description: 'OpenID Connect settings (protocol `oidc`), else null.',
    },
    saml: {
      type: ['object', 'null'],
      required: ['metadata_url', 'idp_entity_id', 'sso_url', 'certificate_count'],
      properties: {
        metadata_url: { type: ['string', 'null'], description: 'Where the metadata was read from; null when it was uploaded as XML.' },
        idp_entity_id: { type: 'string' },
        sso_url: { type: 'string', description: "The IdP's sign-in (SingleSignOnService) URL." },
        certificate_count: { type: 'integer', description: 'Signing certificates read from the metadata.' },
      },
      description: 'SAML 2.0 settings (protocol `saml`), else null.',
    },
    enforced: { type: 'boolean', description: 'Members may only sign in through this identity provider.' },
    jit_domains: { type: 'array', items: { type: 'string' }, description: 'E-mail domains whose people become members on their first SSO sign-in, once the organisation has verified them.' },
    jit_domains_pending: {
      type: 'array',
      items: { type: 'string' },
      description: 'The listed domains the organisation has not verified (GET /api/v1/orgs/current/domains): they admit nobody until verified.',
    },
    jit_role: { type: 'string', enum: JIT_ROLES, description: 'The role just-in-time members get.' },
    tested_at: { ...nullableTimestampSchema, description: 'The last successful "Try login" since the settings last changed; enforcing needs one.' },
    service_provider: {
      type: 'object',
      required: ['entity_id', 'acs_url', 'metadata_url'],
      properties: {
        entity_id: { type: 'string', description: 'Our SAML entity id (the audience).' },
        acs_url: { type: 'string', description: 'Our Assertion Consumer Service URL.' },
        metadata_url: { type: 'string', description: 'Our SAML service-provider metadata.' },
      },
      description: 'What to enter at a SAML identity provider.',
    },
    oidc_redirect_uri: { type: 'string', description: 'The redirect URI to register at an OpenID provider.' },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

const putBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['protocol'],
  properties: {
    protocol: { type: 'string', enum: ['oidc', 'saml'] },
    issuer: { type: 'string', minLength: 1, maxLength: 2000, description: 'OIDC: the issuer URL (its /.well-known/openid-configuration is read).' },
    client_id: { type: 'string', minLength: 1, maxLength: 500, description: 'OIDC: the client id.' },
    client_secret: { type: 'string', minLength: 1, maxLength: 2000, description: 'OIDC: the client secret (sealed at rest, never returned). May be left out to keep the stored one.' },
    metadata_url: { type: 'string', minLength: 1, maxLength: 2000, description: "SAML: the IdP's metadata URL." },
    metadata_xml: { type: 'string', minLength: 1, maxLength: 512 * 1024, description: "SAML: the IdP's metadata document." },
    jit_domains: { type: 'array', maxItems: 50, items: domainSchema, description: 'E-mail domains whose people join on their first SSO sign-in (optional).' },
    jit_role: { type: 'string', enum: JIT_ROLES, description: 'Role of just-in-time members (default member).' },
  },
} as const;

const enforcementBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['enforced'],
  properties: { enforced: { type: 'boolean', description: 'true: members must sign in through the IdP; false: any sign-in method.' } },
} as const;

const ssoStartQuery = {
  type: 'object',
  properties: {
    org: { type: 'string', minLength: 1, maxLength: 100, description: "The organisation's slug." },
    email: { type: 'string', minLength: 1, maxLength: 254, description: 'A work e-mail address (its domain, or its account, finds the organisation); a slug is accepted too.' },
    return_to: { ...returnToSchema, description: 'Path to land on after signing in (this server only).' },
  },
} as const;

const stateParams = { type: 'object', required: ['state'], properties: { state: { type: 'string', minLength: 1, maxLength: 200 } } } as const;

const NO_SSO = 'no single sign-on is set up for this organisation or address';

export const ssoRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: SsoRoutesOptions }> = async (app, options) => {
  app.addHook('onRoute', organizationLevel);
  const { db, secretBox, tokens, changes, publicUrl } = options;
  const clients = new OidcClients({ allowPrivate: options.allowPrivateTargets });
  const metadataFetch = guardedFetch({ allowPrivate: options.allowPrivateTargets });
  const oidcRedirectUri = () => `${publicUrl()}/auth/sso/oidc/callback`;
  const ctx = { db, tokens, changes };
  const tags = ['SSO'];

  const toJson = async (c: SsoConnection) => {
    const sp = serviceProvider(publicUrl(), c.orgId);
    const verified = await verifiedAmong(db, c.orgId, c.jitDomains);
    return {
      protocol: c.protocol,
      oidc: c.oidc ? { issuer: c.oidc.issuer, client_id: c.oidc.clientId, client_secret_set: c.oidc.clientSecret.length > 0 } : null,
      saml: c.saml ? { metadata_url: c.saml.metadataUrl, idp_entity_id: c.saml.idpEntityId, sso_url: c.saml.ssoUrl, certificate_count: c.saml.certificates.length } : null,
      enforced: c.enforced,
      jit_domains: c.jitDomains,
      jit_domains_pending: c.jitDomains.filter((d) => !verified.has(d)),
      jit_role: (JIT_ROLES as readonly string[]).includes(c.jitRole) ? (c.jitRole as (typeof JIT_ROLES)[number]) : 'member',
      tested_at: c.testedAt?.toISOString() ?? null,
      service_provider: { entity_id: sp.entityId, acs_url: sp.acsUrl, metadata_url: `${publicUrl()}/auth/sso/saml/metadata/${c.orgId}` },
      oidc_redirect_uri: oidcRedirectUri(),
      created_at: c.createdAt.toISOString(),
      updated_at: c.updatedAt.toISOString(),
    };
  };

  async function existing(orgId: string): Promise<SsoConnection> {
    const connection = await findSsoConnection(db, secretBox, orgId);
    if (!connection) throw notFound('SSO connection');
    return connection;
  }

  /** Where the browser goes to sign in at the IdP, for a flow just started (OIDC: authorize URL; SAML: AuthnRequest). */
  async function identityProviderUrl(connection: SsoConnection, flow: AuthFlowRow, state: string, loginHint?: string): Promise<string> {
    if (connection.protocol === 'oidc' && connection.oidc && flow.code_verifier && flow.nonce) {
      return clients.authorizationUrl(connection.oidc, { redirectUri: oidcRedirectUri(), state, codeVerifier: flow.code_verifier, nonce: flow.nonce, loginHint });
    }
    if (connection.protocol === 'saml' && connection.saml) {
      const { url, requestId } = await samlSignInUrl(connection.saml, serviceProvider(publicUrl(), connection.orgId), state);
      await setFlowRequestId(db, flow.id, requestId);
      return url;
    }
    throw new ApiError(404, 'not_found', NO_SSO);
  }

  async function newFlow(connection: SsoConnection, purpose: 'login' | 'test', userId: string | null) {
    const kind: FlowKind = connection.protocol === 'oidc' ? 'sso_oidc' : 'sso_saml';
    const checks = connection.protocol === 'oidc' ? OidcClients.newChecks() : {};
    return startFlow(db, { kind, purpose, orgId: connection.orgId, userId, ...checks });
  }

  async function redirectToIdp(request: FastifyRequest, reply: FastifyReply, connection: SsoConnection, flow: AuthFlowRow, state: string, loginHint?: string) {
    let url: string;
    try {
      url = await identityProviderUrl(connection, flow, state, loginHint);
    } catch (err) {
      if (!(err instanceof OidcDiscoveryError)) throw err;
      request.log.warn({ err: err.message, org_id: connection.orgId }, 'SSO: the OpenID issuer could not be discovered');
      throw new ApiError(503, 'unavailable', `the organisation's identity provider cannot be reached right now: ${err.message}`);
    }
    reply.setCookie(FLOW_COOKIE, state, flowCookieOptions);
    return reply.redirect(url, 302);
  }

  // ---- settings -------------------------------------------------------------------------------

  app.get(
    '/api/v1/orgs/current/sso',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: { tags, summary: 'Get the SSO connection', description: "The organisation's SSO connection; 404 when none. The OIDC client secret is never returned.", response: { 200: connectionSchema } },
    },
    async (request) => await toJson(await existing(principalOf(request).organization.id)),
  );

  app.put(
    '/api/v1/orgs/current/sso',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Configure SSO',
        description:
          'Sets up (or replaces) the OIDC or SAML 2.0 connection. OIDC: `issuer`, `client_id`, `client_secret`; the issuer\'s discovery document must be readable. SAML: `metadata_url` or `metadata_xml`; the metadata must name a sign-in URL and a signing certificate. Addresses are fetched with the same private-address guard as URL scans. Changed settings must be tried again ("Try login") before they can be enforced. Enterprise plan (403 `plan_required`); 409 while SSO is enforced (stop enforcing first).',
        body: putBodySchema,
        response: { 200: connectionSchema },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await requirePlan(db, principal.organization.id, ['enterprise'], 'SSO');
      const body = request.body;
      const current = await findSsoConnection(db, secretBox, principal.organization.id);
      if (current?.enforced) throw conflict('SSO is enforced for this organisation: stop enforcing it (POST /api/v1/orgs/current/sso/enforcement {"enforced": false}) before changing its settings', { reason: 'sso_enforced' });
      const missing = (field: string, why: string) => validationFailed(`${field}: ${why}`, { fields: [{ field, message: why }] });
      const unexpected = (fields: string[], protocol: string) => {
        const extra = fields.filter((f) => (body as Record<string, unknown>)[f] !== undefined);
        if (extra.length > 0) throw validationFailed(`${extra.join(', ')}: not used with protocol ${protocol}`, { fields: extra.map((field) => ({ field, message: `not used with protocol ${protocol}` })) });
      };

      let settings: SsoSettings;
      let auditDetails: Record<string, unknown>;
      if (body.protocol === 'oidc') {
        unexpected(['metadata_url', 'metadata_xml'], 'oidc');
        if (!body.issuer) throw missing('issuer', 'required for OIDC');
        if (!body.client_id) throw missing('client_id', 'required for OIDC');
        const keep = current?.oidc && current.oidc.issuer === body.issuer && current.oidc.clientId === body.client_id ? current.oidc.clientSecret : undefined;
        const clientSecret = body.client_secret ?? keep;
        if (!clientSecret) throw missing('client_secret', 'required for OIDC');
        let issuerUrl: URL;
        try {
          issuerUrl = new URL(body.issuer);
        } catch {
          throw missing('issuer', 'not a URL');
        }
        if (issuerUrl.protocol !== 'https:' && issuerUrl.protocol !== 'http:') throw missing('issuer', 'must be an https URL');
        const oidc = { issuer: body.issuer, clientId: body.client_id, clientSecret };
        try {
          await clients.check(oidc);
        } catch (err) {
          if (!(err instanceof OidcDiscoveryError)) throw err;
          throw missing('issuer', err.message);
        }
        settings = { protocol: 'oidc', oidc };
        auditDetails = { protocol: 'oidc', issuer: body.issuer, client_id: body.client_id };
      } else {
        unexpected(['issuer', 'client_id', 'client_secret'], 'saml');
        if (body.metadata_url && body.metadata_xml) throw missing('metadata_url', 'give metadata_url or metadata_xml, not both');
        if (!body.metadata_url && !body.metadata_xml) throw missing('metadata_url', 'SAML needs metadata_url or metadata_xml');
        const field = body.metadata_url ? 'metadata_url' : 'metadata_xml';
        let metadata;
        try {
          metadata = await readIdpMetadata(body.metadata_url ? { url: body.metadata_url } : { xml: body.metadata_xml ?? '' }, metadataFetch);
        } catch (err) {
          throw missing(field, refusedAddressIn(err) ?? errorMessage(err));
        }
        settings = {
          protocol: 'saml',
          saml: { metadataUrl: body.metadata_url ?? null, metadataXml: metadata.metadataXml, idpEntityId: metadata.idpEntityId, ssoUrl: metadata.ssoUrl, certificates: metadata.certificates },
        };
        auditDetails = { protocol: 'saml', metadata_url: body.metadata_url ?? null, idp_entity_id: metadata.idpEntityId };
      }
      const jitDomains = (body.jit_domains ?? []).map((d) => d.toLowerCase());
      const jitRole: Role = body.jit_role ?? 'member';
      const saved = await db.transaction().execute(async (trx) => {
        // Enforcement may have been switched on meanwhile: settings of an enforced connection stay as they are.
        const locked = await trx.selectFrom('sso_connections').select('enforced').where('org_id', '=', principal.organization.id).forUpdate().executeTakeFirst();
        if (locked?.enforced) throw conflict('SSO is enforced for this organisation: stop enforcing it before changing its settings', { reason: 'sso_enforced' });
        const connection = await saveSsoConnection(trx, secretBox, principal.organization.id, settings, { jitDomains, jitRole });
        await auditRequest(trx, request, {
          action: 'sso.configured',
          target: { type: 'organization', id: principal.organization.id },
          metadata: { ...auditDetails, jit_domains: connection.jitDomains, jit_role: jitRole, replaced: current !== undefined },
        });
        return connection;
      });
      return await toJson(saved);
    },
  );

  app.delete(
    '/api/v1/orgs/current/sso',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: { tags, summary: 'Remove the SSO connection', description: 'Removes the connection (204). 409 while it is enforced (stop enforcing first). Enterprise plan.' },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await requirePlan(db, principal.organization.id, ['enterprise'], 'SSO');
      await db.transaction().execute(async (trx) => {
        const locked = await trx.selectFrom('sso_connections').select(['enforced', 'protocol']).where('org_id', '=', principal.organization.id).forUpdate().executeTakeFirst();
        if (!locked) throw notFound('SSO connection');
        if (locked.enforced) throw conflict('SSO is enforced for this organisation: stop enforcing it before removing the connection', { reason: 'sso_enforced' });
        await deleteSsoConnection(trx, principal.organization.id);
        await auditRequest(trx, request, { action: 'sso.deleted', target: { type: 'organization', id: principal.organization.id }, metadata: { protocol: locked.protocol } });
      });
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/orgs/current/sso/test',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Try SSO login',
        description:
          'A URL to open in a browser: it runs a real sign-in at the identity provider and reports whether it worked (recording `tested_at`). It changes no session and enforces nothing. The URL works once, for 10 minutes. Enterprise plan.',
        response: {
          200: {
            type: 'object',
            required: ['url', 'expires_at'],
            properties: { url: { type: 'string', description: 'Open this in a browser.' }, expires_at: timestampSchema },
          },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      await requirePlan(db, principal.organization.id, ['enterprise'], 'SSO');
      const connection = await existing(principal.organization.id);
      const { state, row } = await newFlow(connection, 'test', principal.actor.id);
      return { url: `${publicUrl()}/auth/sso/start/${encodeURIComponent(state)}`, expires_at: row.expires_at.toISOString() };
    },
  );

  app.post(
    '/api/v1/orgs/current/sso/enforcement',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Enforce SSO',
        description:
          'Enforced: every member must sign in through the identity provider; e-mail links and Google are refused for this organisation (403 `sso_required`), and sessions that did not come through it stop working at once. Enforcing needs a successful "Try login" since the settings last changed (409 otherwise). Enterprise plan.',
        body: enforcementBodySchema,
        response: { 200: connectionSchema },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      requireOwnerSession(principal, request.body.enforced ? 'enforce SSO' : 'stop enforcing SSO');
      await requirePlan(db, principal.organization.id, ['enterprise'], 'SSO');
      const { enforced } = request.body;
      await changes.commit(db, async (trx) => {
        const row = await trx.selectFrom('sso_connections').select(['tested_at', 'enforced', 'protocol']).where('org_id', '=', principal.organization.id).forUpdate().executeTakeFirst();
        if (!row) throw notFound('SSO connection');
        if (enforced && !row.tested_at) {
          throw conflict('try login first: SSO can be enforced only after a successful "Try login" (POST /api/v1/orgs/current/sso/test) since the settings last changed', { reason: 'sso_not_tested' });
        }
        if (row.enforced === enforced) return;
        await setSsoEnforced(trx, principal.organization.id, enforced);
        await auditRequest(trx, request, { action: enforced ? 'sso.enforced' : 'sso.unenforced', target: { type: 'organization', id: principal.organization.id }, metadata: { protocol: row.protocol } });
      });
      return await toJson(await existing(principal.organization.id));
    },
  );

  // ---- browser side ---------------------------------------------------------------------------

  /** The organisation an SSO sign-in is for: by slug, by a just-in-time domain, or by the address's memberships. */
  async function connectionFor(org: string | undefined, email: string | undefined): Promise<SsoConnection | undefined> {
    const slug = org ?? (email && !email.includes('@') ? email.trim() : undefined);
    if (slug) {
      const row = await db.selectFrom('organizations').select('id').where('slug', '=', slug.toLowerCase()).executeTakeFirst();
      return row ? findSsoConnection(db, secretBox, row.id) : undefined;
    }
    if (!email) return undefined;
    const address = normalizeEmail(email);
    const domain = address.split('@')[1] ?? '';
    if (domain) {
      const byDomain = await findSsoConnectionForDomain(db, secretBox, domain);
      if (byDomain) return byDomain;
    }
    const user = await findUserByEmail(db, address);
    if (!user) return undefined;
    const orgs = await db
      .selectFrom('memberships')
      .innerJoin('sso_connections', 'sso_connections.org_id', 'memberships.org_id')
      .select('memberships.org_id')
      .where('memberships.user_id', '=', user.id)
      .orderBy('sso_connections.enforced', 'desc')
      .orderBy('memberships.org_id')
      .execute();
    const first = orgs[0];
    return first ? findSsoConnection(db, secretBox, first.org_id) : undefined;
  }

  app.get(
    '/auth/sso',
    {
      schema: {
        tags,
        summary: 'Sign in with SSO',
        description:
          "Starts a sign-in at an organisation's identity provider, found by `org` (slug) or `email` (the organisation listing the address's domain for just-in-time sign-up, else one the account belongs to that has SSO). Redirects (302) to the IdP with a cookie binding the sign-in to this browser. 404 when there is no such organisation or it has no SSO.",
        querystring: ssoStartQuery,
        response: { 302: { type: 'null', description: 'Redirect to the identity provider.' } },
      },
    },
    async (request, reply) => {
      const { org, email, return_to: returnTo } = request.query;
      if (!org && !email) throw new ApiError(400, 'invalid_request', 'name the organisation (org=<slug>) or your work e-mail address (email=<address>)');
      const connection = await connectionFor(org, email);
      if (!connection) throw new ApiError(404, 'not_found', NO_SSO);
      const { state, row } = await newFlow(connection, 'login', null);
      rememberReturnTo(request, reply, returnTo);
      return redirectToIdp(request, reply, connection, row, state, email?.includes('@') ? normalizeEmail(email) : undefined);
    },
  );

  app.get(
    '/auth/sso/start/:state',
    {
      schema: {
        tags,
        summary: 'Start a "Try login"',
        description: 'The URL POST /api/v1/orgs/current/sso/test returns: redirects (302) to the identity provider. Unknown, used or expired: 404.',
        params: stateParams,
        response: { 302: { type: 'null', description: 'Redirect to the identity provider.' } },
      },
    },
    async (request, reply) => {
      const { state } = request.params;
      const flow = await db
        .selectFrom('auth_flows')
        .selectAll()
        .where('state_hash', '=', hashToken(state))
        .where('purpose', '=', 'test')
        .where('used_at', 'is', null)
        .where('expires_at', '>', new Date())
        .executeTakeFirst();
      if (!flow?.org_id) throw new ApiError(404, 'not_found', `this "Try login" link is not valid: it was used, has expired (${FLOW_LIFETIME_MS / 60000} minutes) or was never issued; ask for a new one`);
      const connection = await findSsoConnection(db, secretBox, flow.org_id);
      if (!connection || (connection.protocol === 'oidc') !== (flow.kind === 'sso_oidc')) throw new ApiError(404, 'not_found', 'the SSO connection changed since this link was made; ask for a new one');
      return redirectToIdp(request, reply, connection, flow, state);
    },
  );

  app.get(
    '/auth/sso/oidc/callback',
    {
      schema: {
        tags,
        summary: 'OIDC SSO callback',
        description:
          "Where an organisation's OpenID provider sends the browser back (register this as the redirect URI). Checks the state against the cookie and the flow, redeems the code with the PKCE verifier, verifies the ID token (signature against the issuer's keys, issuer, audience, expiry, nonce), then signs the person in (303 to the landing page) or, for a \"Try login\", shows the result. Bad state: 401; bad token: 401 (audited as `sso.login_refused`); not a member and not admitted: 403.",
        querystring: oidcCallbackQuery,
        response: { 303: { type: 'null', description: 'Signed in: redirect to the landing page.' } },
      },
    },
    async (request, reply) => {
      const state = checkFlowCookie(request, reply, request.query.state);
      const flow = await finishFlow(db, state, 'sso_oidc');
      if (!flow?.org_id || !flow.code_verifier || !flow.nonce) throw new ApiError(401, 'unauthorized', FLOW_INVALID);
      const connection = await findSsoConnection(db, secretBox, flow.org_id);
      if (!connection?.oidc) throw new ApiError(401, 'unauthorized', 'the SSO connection changed during this sign-in: start again');
      let identity;
      try {
        identity = await clients.callback(connection.oidc, { redirectUri: oidcRedirectUri(), query: callbackQuery(request), state, codeVerifier: flow.code_verifier, nonce: flow.nonce });
      } catch (err) {
        if (err instanceof OidcDiscoveryError) throw new ApiError(503, 'unavailable', `the organisation's identity provider cannot be reached right now: ${err.message}`);
        if (!(err instanceof OidcVerificationError)) throw err;
        await auditSsoRefusal(db, request, connection.orgId, 'oidc', err.message);
        throw new ApiError(401, 'unauthorized', `single sign-on failed: ${err.message}`);
      }
      if (!identity.email) {
        const reason = `the identity provider did not vouch for a verified e-mail address (${identity.claimedEmail ?? 'none given'})`;
        await auditSsoRefusal(db, request, connection.orgId, 'oidc', reason);
        throw new ApiError(403, 'forbidden', `single sign-on refused: ${reason}`);
      }
      return completeSsoSignIn(ctx, request, reply, {
        connection,
        flow: { purpose: flow.purpose === 'test' ? 'test' : 'login', userId: flow.user_id },
        identity: { email: identity.email, name: identity.name },
      });
    },
  );
};
