// Provider connections (spec 4.9, 5.5): list, connect (OAuth with state and PKCE, or a pasted token
// validated against the provider), the OAuth callback, settings, the inbound-webhook secret, and
// disconnect (revoking the connection's credential where the provider has an endpoint for it).
// `admin` scope; every change is audited and recorded as an `integration.*` event. Tokens never
// leave the server.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditRequest, recordAudit } from '../../../platform/audit-log.ts';
import { principalOf, sessionOf } from '../../accounts/auth/plugin.ts';
import { grants } from '../../accounts/auth/scopes.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { IntegrationRow, IntegrationSettings } from '../../../platform/db/schema.ts';
import { announceDeliveries, recordEvents } from '../../../platform/events/event-store.ts';
import { ApiError, notFound, validationFailed } from '../../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { listResponseSchema, pageQueryProperties } from '../../../platform/http/schemas.ts';
import { finishFlow, startFlow } from '../../accounts/sign-in/flows.ts';
import { ProviderAuthError, ProviderError, ProviderRequestError } from '../providers/errors.ts';
import type { AccountInfo, ProviderConnector, ProviderName, TokenSet } from '../providers/types.ts';
import { urlRefusal, type UrlPolicy } from '../../../platform/net/url-refusal.ts';
import { ALL_PROVIDERS, IntegrationResource, IntegrationSettingsSchema, KINDS, PROVIDERS, SETTINGS_BY_KIND } from './schemas.ts';
import type { IntegrationDeps } from './sessions.ts';
import {
  activateIntegration,
  createPendingIntegration,
  createTokenIntegration,
  findIntegration,
  listIntegrations,
  openAccessToken,
  openRefreshToken,
  rotateWebhookSecret,
  toIntegration,
  updateIntegrationSettings,
} from './store.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export interface IntegrationRoutesOptions extends IntegrationDeps {
  publicUrl: () => string;
  /** Which provider URLs an admin may give (a Jira site, a self-managed GitLab). */
  urlPolicy: UrlPolicy;
}

/**
 * An OAuth connect completes only for whoever started it (docs/security.md): a flow started in a
 * browser needs that browser (this cookie) and that person's session; a flow started with an API
 * key needs the session of an admin of the key's organisation. Otherwise anyone who followed the
 * authorize URL would land their own provider grant in the organisation (or another's in theirs).
 */
const FLOW_COOKIE = 'aegis_connect_flow';
const CALLBACK_PATH = '/api/v1/integrations/oauth';

const WebhookInfo = {
  type: 'object',
  required: ['url', 'secret'],
  description: 'Where the provider should send its webhooks for this connection and the secret to configure there — shown this once.',
  properties: { url: { type: 'string' }, secret: { type: 'string' } },
} as const;

const ConnectBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    token: { type: 'string', minLength: 1, maxLength: 4096, description: 'A personal access token (GitHub, GitLab), API token (Jira, with `email` and `url`) or API key (Linear, OpenAI-compatible, Anthropic: checked against the provider’s model list). Without it, the OAuth flow starts (AI providers need it).' },
    email: { type: 'string', minLength: 3, maxLength: 320, description: 'Jira API tokens: the Atlassian account e-mail.' },
    url: { type: 'string', minLength: 8, maxLength: 2048, pattern: '^https?://', description: 'Jira: the site (https://<name>.atlassian.net). GitLab: a self-managed instance. OpenAI-compatible: the base URL (Azure OpenAI, a gateway, a local server; default https://api.openai.com/v1). Anthropic: another Messages API base URL.' },
    settings: IntegrationSettingsSchema,
  },
} as const;

const ConnectAnswer = {
  type: 'object',
  description: 'With a token: the active connection and its webhook settings. Without: where to send the browser to authorize.',
  properties: {
    ...IntegrationResource.properties,
    webhook: WebhookInfo,
    authorize_url: { type: 'string', description: 'OAuth: the provider’s authorization page; the provider sends the browser back to the callback, which completes the connection.' },
    state: { type: 'string' },
    integration: IntegrationResource,
  },
} as const;

const providerParams = { type: 'object', required: ['provider'], properties: { provider: { type: 'string', enum: PROVIDERS } } } as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } } as const;

/** An admin-given provider address (a Jira site, a self-managed GitLab) is called with the pasted token. */
const PROVIDER_URL_WORDING = {
  credentials: 'must not contain credentials',
  https: 'must use https:// (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow http)',
  address: (host: string, reason: string) => `${host}: ${reason}; providers are not called at private addresses (set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow it)`,
};

const base64url = (bytes: Buffer): string => bytes.toString('base64url');
/** Providers that send Aegis webhooks (pull requests, ticket changes); AI and cloud connections get none. */
const receivesWebhooks = (kind: IntegrationRow['kind']): boolean => kind === 'source_control' || kind === 'ticket_tracker';

/** Refuses settings sections that do not apply to this kind of connection. */
export function checkSettingsKind(kind: IntegrationRow['kind'], settings: IntegrationSettings): void {
  const allowed = SETTINGS_BY_KIND[kind];
  const wrong = Object.keys(settings).filter((key) => !allowed.includes(key));
  if (wrong.length > 0) {
    throw validationFailed(`request body is invalid: settings.${wrong[0]} does not apply to a ${kind} connection`, { fields: wrong.map((key) => ({ field: `settings.${key}`, message: `does not apply to a ${kind} connection` })) });
  }
}
const generateWebhookSecret = (): string => `iwhsec_${base64url(randomBytes(30))}`;

/** The refusal a pasted token or a callback gets when the provider says no, or is unreachable. */
function providerFailure(provider: string, err: unknown): never {
  if (err instanceof ProviderAuthError) throw validationFailed(`${provider} refused the credential: ${err.message}`, { fields: [{ field: 'token', message: 'was refused by the provider' }] });
  if (err instanceof ProviderRequestError) throw validationFailed(err.message);
  if (err instanceof ProviderError) throw new ApiError(502, 'provider_unavailable', `${provider} could not be reached or answered with an error: ${err.message}`);
  throw err;
}

export const integrationRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: IntegrationRoutesOptions }> = async (app, deps) => {
  const { db, secretBox, connectors, publicUrl, urlPolicy } = deps;
  const tags = ['Integrations'];
  const connectorOf = (provider: ProviderName): ProviderConnector => connectors[provider];
  const redirectUri = (provider: ProviderName) => `${publicUrl()}${CALLBACK_PATH}/${provider}/callback`;
  const webhookUrl = (row: IntegrationRow) => `${publicUrl()}/api/v1/webhooks/${row.provider}?integration=${row.id}`;
  const show = (row: IntegrationRow) => ({ ...toIntegration(row), settings: row.settings, webhook_url: row.status === 'active' && receivesWebhooks(row.kind) ? webhookUrl(row) : null });

  /** Records `integration.connected` and the audit entry of a newly active connection. */
  async function connected(trx: Db, row: IntegrationRow, audit: (trx: Db) => Promise<void>): Promise<number> {
    await audit(trx);
    const { deliveries } = await recordEvents(trx, [{ orgId: row.org_id, type: 'integration.connected', object: toIntegration(row) }]);
    return deliveries;
  }

  app.get(
    '/api/v1/integrations',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'List connected providers',
        querystring: { type: 'object', properties: { ...pageQueryProperties, provider: { type: 'string', enum: ALL_PROVIDERS }, kind: { type: 'string', enum: KINDS } } },
        response: { 200: listResponseSchema(IntegrationResource) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listIntegrations(db, { orgId: principalOf(request).orgId, after: decodeCursor(request.query.cursor), limit, provider: request.query.provider, kind: request.query.kind });
      return toPage(rows, limit, show);
    },
  );

  app.get(
    '/api/v1/integrations/:id',
    { config: { auth: 'admin' }, schema: { tags, summary: 'Get a connection', params: idParams, response: { 200: IntegrationResource } } },
    async (request) => {
      const row = await findIntegration(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('integration');
      return show(row);
    },
  );

  app.post(
    '/api/v1/integrations/:provider/connect',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Start OAuth connection',
        description:
          'With `token` (and, for Jira API tokens, `email` and `url`): validates the credential against the provider and saves an active connection (201), answering with the inbound webhook URL and secret once. ' +
          'Without: starts the provider’s OAuth authorization code flow (with PKCE where the provider supports it: GitHub, GitLab, Linear) and answers with `authorize_url` — send the browser there; the provider returns it to ' +
          '`GET /api/v1/integrations/oauth/:provider/callback`, which completes the connection. A flow lives 10 minutes and completes once, and only for whoever started it: started by a signed-in person, in that person’s browser; started with an API key, in the browser of a signed-in admin of the key’s organisation. Refused credential: 422; provider unreachable: 502; OAuth not configured on this server: 422.',
        params: providerParams,
        body: ConnectBody,
        response: { 201: ConnectAnswer },
      },
    },
    async (request, reply) => {
      const { orgId, actor } = principalOf(request);
      const provider = request.params.provider;
      const connector = connectorOf(provider);
      const body = request.body ?? {};
      const settings = (body.settings ?? {}) as IntegrationSettings;
      checkSettingsKind(connector.kind, settings);

      if (body.token === undefined) {
        const oauth = connector.oauth;
        if (connector.kind === 'ai') throw validationFailed(`request body is invalid: ${provider} connects with its API key in \`token\``, { fields: [{ field: 'token', message: 'is required' }] });
        if (!oauth) throw validationFailed(`OAuth is not configured for ${provider} on this server (AEGIS_${provider.toUpperCase()}_CLIENT_ID and _CLIENT_SECRET); connect with a token instead`);
        const verifier = oauth.pkce ? base64url(randomBytes(32)) : null;
        const challenge = verifier ? base64url(createHash('sha256').update(verifier).digest()) : null;
        const pending = await createPendingIntegration(db, { orgId, kind: connector.kind, provider, connectedBy: actor.id, apiBaseUrl: null, settings });
        const { state } = await startFlow(db, { kind: 'integration', purpose: 'connect', orgId, userId: actor.id, codeVerifier: verifier, nonce: request.principal?.kind === 'session' ? 'browser' : null, integrationId: pending.id });
        if (request.principal?.kind === 'session') reply.setCookie(FLOW_COOKIE, state, { path: CALLBACK_PATH, httpOnly: true, secure: publicUrl().startsWith('https:'), sameSite: 'lax', maxAge: 600 });
        await auditRequest(db, request, { action: 'integration.connect_started', target: { type: 'integration', id: pending.id }, metadata: { provider } });
        return reply.code(201).send({ authorize_url: oauth.authorizeUrl({ state, redirectUri: redirectUri(provider), codeChallenge: challenge }), state, integration: show(pending) });
      }

      if (body.url !== undefined) {
        const refusal = await urlRefusal(body.url, urlPolicy, PROVIDER_URL_WORDING);
        if (refusal) throw validationFailed(`request body is invalid: url ${refusal}`, { fields: [{ field: 'url', message: refusal }] });
      }
      let tokenSession: ReturnType<ProviderConnector['tokenSession']>;
      let account: AccountInfo;
      try {
        tokenSession = connector.tokenSession({ token: body.token, ...(body.email ? { email: body.email } : {}), ...(body.url ? { url: body.url } : {}) });
        account = await connector.identify(tokenSession.session);
      } catch (err) {
        providerFailure(provider, err);
      }
      const secret = generateWebhookSecret();
      const tokens: TokenSet = { accessToken: body.token, refreshToken: null, expiresAt: null, scopes: account.scopes ?? [] };
      const { row, deliveries } = await db.transaction().execute(async (trx) => {
        const created = await createTokenIntegration(trx, secretBox, {
          orgId,
          kind: connector.kind,
          provider,
          connectedBy: actor.id,
          settings,
          tokens,
          account,
          apiBaseUrl: tokenSession.session.apiBaseUrl,
          metadata: tokenSession.metadata,
          webhookSecret: secret,
        });
        const deliveries = await connected(trx, created, (t) => auditRequest(t, request, { action: 'integration.connected', target: { type: 'integration', id: created.id }, metadata: { provider, auth_type: 'token', account: account.name } }));
        return { row: created, deliveries };
      });
      announceDeliveries(db, deliveries);
      return reply.code(201).send({ ...show(row), ...(receivesWebhooks(row.kind) ? { webhook: { url: webhookUrl(row), secret } } : {}) });
    },
  );

  app.get(
    `${CALLBACK_PATH}/:provider/callback`,
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'OAuth callback',
        description:
          'Where the provider returns the browser, which must be signed in: an admin of the organisation the connection is for, and for a flow started in a browser the same person in the same browser (the cookie set then). Checks `state` (single use, 10 minutes), redeems the code (with the PKCE verifier), identifies the account, seals the tokens and activates the connection; redirects (303) to the Integrations page of the dashboard settings. The webhook secret is not shown here: get one with `POST /api/v1/integrations/:id/webhook-secret`. Bad or used state: 401; the provider refused: 422.',
        params: providerParams,
        querystring: {
          type: 'object',
          properties: { code: { type: 'string', maxLength: 2048 }, state: { type: 'string', maxLength: 512 }, error: { type: 'string', maxLength: 256 }, error_description: { type: 'string', maxLength: 2048 } },
        },
        response: { 303: { type: 'null', description: 'Connected: redirect to the dashboard.' } },
      },
    },
    async (request, reply) => {
      const provider = request.params.provider;
      const { code, state, error } = request.query;
      const invalid = () => new ApiError(401, 'unauthorized', 'this authorization is unknown, expired or already used; start the connection again');
      if (!state) throw invalid();
      const flow = await finishFlow(db, state, 'integration');
      if (!flow?.integration_id || !flow.org_id) throw invalid();
      const completer = sessionOf(request);
      if (completer.orgId !== flow.org_id || !grants(completer.scopes, 'admin')) {
        throw new ApiError(403, 'forbidden', 'this connection can be completed only by a signed-in admin of the organisation that started it: sign in there and start again');
      }
      if (flow.nonce === 'browser' && (request.cookies[FLOW_COOKIE] !== state || completer.user.id !== flow.user_id)) throw invalid();
      reply.clearCookie(FLOW_COOKIE, { path: CALLBACK_PATH });
      const pending = await findIntegration(db, flow.org_id, flow.integration_id);
      if (!pending || pending.provider !== provider || pending.status !== 'pending') throw invalid();
      const audit = (trx: Db, action: string, metadata: Record<string, unknown>) =>
        recordAudit(trx, { orgId: pending.org_id, actor: { type: flow.user_id?.startsWith('key_') ? 'api_key' : 'user', id: flow.user_id ?? 'unknown' }, ip: request.ip, action, target: { type: 'integration', id: pending.id }, metadata });
      if (error || !code) {
        await db.transaction().execute(async (trx) => {
          await trx.deleteFrom('integrations').where('id', '=', pending.id).execute();
          await audit(trx, 'integration.connect_refused', { provider, error: error ?? 'no code' });
        });
        throw validationFailed(`${provider} did not authorize the connection${error ? `: ${error}` : ''}`);
      }
      const connector = connectorOf(provider);
      const oauth = connector.oauth;
      if (!oauth) throw validationFailed(`OAuth is not configured for ${provider} on this server`);
      let tokens: TokenSet;
      let account: AccountInfo;
      try {
        tokens = await oauth.exchangeCode({ code, redirectUri: redirectUri(provider), codeVerifier: flow.code_verifier });
        account = await connector.identify(connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} }));
      } catch (err) {
        providerFailure(provider, err);
      }
      const deliveries = await db.transaction().execute(async (trx) => {
        const row = await activateIntegration(trx, secretBox, pending, { tokens, account, apiBaseUrl: account.apiBaseUrl ?? null, metadata: account.metadata ?? {}, webhookSecret: generateWebhookSecret() });
        return connected(trx, row, (t) => audit(t, 'integration.connected', { provider, auth_type: 'oauth', account: account.name, scopes: row.scopes }));
      });
      announceDeliveries(db, deliveries);
      return reply.redirect(`${publicUrl()}/settings/integrations?integration=${encodeURIComponent(pending.id)}&connected=${provider}`, 303);
    },
  );

  app.patch(
    '/api/v1/integrations/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Change a connection’s settings', description: 'Replaces the settings sections given (`pull_requests`, `ai`, `discovery`: each applies to one kind of connection).', params: idParams, body: { type: 'object', additionalProperties: false, required: ['settings'], properties: { settings: IntegrationSettingsSchema } }, response: { 200: IntegrationResource } },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const row = await db.transaction().execute(async (trx) => {
        const existing = await findIntegration(trx, orgId, request.params.id);
        if (!existing) throw notFound('integration');
        checkSettingsKind(existing.kind, request.body.settings as IntegrationSettings);
        const updated = await updateIntegrationSettings(trx, orgId, request.params.id, request.body.settings as IntegrationSettings);
        if (!updated) throw notFound('integration');
        await auditRequest(trx, request, { action: 'integration.updated', target: { type: 'integration', id: updated.id }, metadata: { fields: Object.keys(request.body.settings) } });
        return updated;
      });
      return show(row);
    },
  );

  app.post(
    '/api/v1/integrations/:id/webhook-secret',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'New inbound webhook secret',
        description: 'Generates a new secret for the provider’s webhooks to this connection and shows it this once, with the URL to configure at the provider. The previous secret stops verifying at once.',
        params: idParams,
        response: { 201: WebhookInfo },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const secret = generateWebhookSecret();
      const row = await db.transaction().execute(async (trx) => {
        const updated = await rotateWebhookSecret(trx, secretBox, orgId, request.params.id, secret);
        if (!updated) throw notFound('integration');
        await auditRequest(trx, request, { action: 'integration.webhook_secret_rotated', target: { type: 'integration', id: updated.id } });
        return updated;
      });
      return reply.code(201).send({ url: webhookUrl(row), secret });
    },
  );

  app.delete(
    '/api/v1/integrations/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Disconnect',
        description:
          'Revokes the credential at the provider where it has an endpoint for it (GitHub OAuth: this connection’s token only, not the user’s other connections; GitLab and Linear OAuth: the grant; a pasted GitLab personal access token: the token itself), then deletes the connection and its tokens. A revocation the provider refuses or cannot take (it is down, or the token cannot revoke itself: a GitLab project or group token, GitLab before 15.0) does not keep the connection: the audit entry records it (`revoked: false` with the reason), and the credential can be revoked in the provider’s settings.',
        params: idParams,
        response: { 204: { type: 'null', description: 'Disconnected.' } },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const { orgId } = principalOf(request);
      const row = await findIntegration(db, orgId, request.params.id);
      if (!row) throw notFound('integration');
      const revocation = await revoke(row);
      const deliveries = await db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom('integrations').where('org_id', '=', orgId).where('id', '=', row.id).returningAll().executeTakeFirst();
        if (!deleted) throw notFound('integration');
        await auditRequest(trx, request, { action: 'integration.disconnected', target: { type: 'integration', id: row.id }, metadata: { provider: row.provider, account: row.account, revoked: revocation.revoked, ...(revocation.reason ? { revoke_reason: revocation.reason } : {}), ...(revocation.error ? { revoke_error: revocation.error } : {}) } });
        const { deliveries } = await recordEvents(trx, [{ orgId, type: 'integration.disconnected', object: toIntegration(deleted) }]);
        return deliveries;
      });
      announceDeliveries(db, deliveries);
      return reply.code(204).send(null);
    },
  );

  /**
   * Revokes the connection's credential at the provider: an OAuth token through the provider's
   * revocation endpoint (GitHub: this token only, not the user's whole grant), a pasted token where
   * it can revoke itself (GitLab personal access tokens). `revoked: null` when there is nothing the
   * provider offers for it; `false` with `reason` when the provider cannot revoke this kind of token,
   * with `error` when the revocation failed.
   */
  async function revoke(row: IntegrationRow): Promise<{ revoked: boolean | null; error?: string; reason?: string }> {
    // Cloud connections (a role, no token) have no connector here.
    if (row.auth_type !== 'oauth' && row.auth_type !== 'token') return { revoked: null };
    const connector = connectorOf(row.provider as ProviderName) as ProviderConnector | undefined;
    if (!connector) return { revoked: null };
    const oauth = connector.oauth;
    if (row.auth_type === 'oauth' ? !oauth?.revoke : !connector.revokeToken) return { revoked: null };
    const accessToken = openAccessToken(secretBox, row);
    if (!accessToken) return { revoked: null };
    try {
      if (row.auth_type === 'token') {
        const { email, url } = row.metadata as { email?: unknown; url?: unknown };
        const { session } = connector.tokenSession({ token: accessToken, ...(typeof email === 'string' ? { email } : {}), ...(typeof url === 'string' ? { url } : {}) });
        const outcome = await connector.revokeToken!(session);
        return { revoked: outcome.revoked, ...(outcome.reason ? { reason: outcome.reason } : {}) };
      }
      await oauth!.revoke!({ accessToken, refreshToken: openRefreshToken(secretBox, row) });
      return { revoked: true };
    } catch (err) {
      app.log.warn({ integration: row.id, provider: row.provider, err: errorMessage(err) }, 'integration: revocation at the provider failed');
      return { revoked: false, error: errorMessage(err) };
    }
  }
};
