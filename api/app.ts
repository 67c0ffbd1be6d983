// Assembles the HTTP API: shared plugins first (errors, auth, rate limits, idempotency, OpenAPI),
// then one plugin per area of the API. Everything a route needs arrives as an option; no route
// reaches for a global.
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Db } from '../platform/db/database.ts';
import type { ServerConfig } from './config.ts';
import type { Authenticator } from './accounts/keys/authenticator.ts';
import cookie from '@fastify/cookie';
import authPlugin from './accounts/auth/plugin.ts';
import type { AuthChanges } from './accounts/auth/auth-changes.ts';
import type { SessionAuthenticator } from './accounts/sessions/session-authenticator.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { loginRoutes } from './accounts/login/login-routes.ts';
import { sessionRoutes } from './accounts/sessions/routes.ts';
import { googleRoutes } from './accounts/login/google.ts';
import { ownerLinkRoutes } from './accounts/first-owner/owner-link-routes.ts';
import { ssoRoutes } from './accounts/sso/sso-routes.ts';
import { samlRoutes } from './accounts/sso/saml-routes.ts';
import { orgRoutes } from './accounts/members/member-routes.ts';
import { domainRoutes } from './accounts/members/domain-routes.ts';
import type { TxtLookup } from '../platform/net/txt-records.ts';
import errorHandler from '../platform/http/error-handler.ts';
import idempotency from '../platform/http/idempotency.ts';
import inputGuard, { clientErrorHandler, frameworkErrors } from '../platform/http/input-guard.ts';
import openApi from '../platform/http/openapi.ts';
import { openApiWebhooks } from './events/catalogue.ts';
import { operationFields } from './operation-ids.ts';
import rateLimit from '../platform/http/rate-limit.ts';
import { requestIdFor } from '../platform/http/request-id.ts';
import { createValidatorCompiler } from '../schemas/validation.ts';
import { auditRoutes } from './audit/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { webPlugin } from './web/plugin.ts';
import { identityRoutes } from './accounts/members/identity-routes.ts';
import { keyRoutes } from './accounts/keys/routes.ts';
import { siteRoutes } from './shield/sites/routes.ts';
import { edgeSettings } from './shield/sites/edge-settings.ts';
import { certificateRoutes } from './shield/certificates/routes.ts';
import { domainProofRoutes } from './shield/domain-proof/routes.ts';
import { originPolicy } from '../platform/net/origin-policy.ts';
import { managedRuleRoutes } from './shield/managed-rules/routes.ts';
import { schemaRoutes } from './shield/schema/routes.ts';
import { scheduleRoutes } from './schedules/routes.ts';
import { eventRoutes } from './events/routes.ts';
import { webhookUrlPolicy } from './webhooks/url-policy.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { webhookDeliveryRoutes } from './webhooks/delivery-routes.ts';
import type { SecretBox } from '../platform/crypto/secret-box.ts';
import type { ShieldEvents } from '../gateway/events/index.ts';
import { observeHttp, type Observability } from '../platform/metrics/index.ts';
import { ipAccessRoutes } from './shield/ip-access/routes.ts';
import { rateLimitRoutes } from './shield/rate-limits/routes.ts';
import { virtualPatchRoutes } from './shield/virtual-patches/routes.ts';
import { ruleBatchRoutes } from './shield/batch/routes.ts';
import { impactRoutes } from './shield/impact/routes.ts';
import { analyticsRoutes } from './shield/analytics/routes.ts';
import { liveRoutes } from './shield/live/routes.ts';
import { advisoryRoutes } from './advisories/routes.ts';
import { scanRoutes } from './scans/routes.ts';
import { scanSarifRoutes } from './scans/sarif-route.ts';
import { vulnerabilityRoutes } from './vulnerabilities/routes.ts';
import { overviewRoutes } from './overview/routes.ts';
import { configRepoRoutes } from './config-repos/routes.ts';
import { urlScanRoutes } from './scans/url-scan-routes.ts';
import { pushRoutes } from './config-repos/push-routes.ts';
import { stripeWebhookRoutes } from './billing/stripe-webhook-routes.ts';
import { sandboxRoutes } from './sandbox/routes.ts';
import { cloneAccess, createConnectors, inboundWebhooks, integrationsPlugin } from './integrations/index.ts';
import { serverTenantPolicy, serverTenantUrlPolicy } from './outbound-policy.ts';
import { triagePlugin } from './ai/index.ts';
import { attackSurfacePlugin } from './attack-surface/index.ts';
import { DEMO_TARGET_PATH, demoTargetRoutes } from './sandbox/demo-target.ts';

export const API_VERSION = '1.0.0';

/** Request and response parts that can carry credentials; pino replaces them before writing. */
const REDACTED = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'key',
];

/** Query parameters that carry credentials in sign-in links and identity-provider callbacks. */
const SECRET_QUERY = /([?&](?:token|code|state|id_token|access_token|SAMLResponse|SAMLRequest|RelayState)=)[^&#]*/gi;
/** Paths that carry a flow's state in a segment: the "Try login" link. */
const SECRET_PATH = /^(\/auth\/sso\/start\/)[^/?#]*/i;

/** A URL as logged: sign-in tokens, codes and states replaced, in the query and in the path. */
export const redactUrlForLog = (url: string): string => url.replace(SECRET_PATH, '$1[redacted]').replace(SECRET_QUERY, '$1[redacted]');

/** The request as logged: the URL with sign-in tokens and codes replaced. */
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrlForLog(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export interface AppDeps {
  db: Db;
  authenticator: Authenticator;
  /** Session cookies: verification, cached authorisations and the cookie's signing key. */
  sessions: SessionAuthenticator;
  /** Announces changes of who-may-do-what to every API process. */
  authChanges: AuthChanges;
  mailer: Mailer;
  /** Aegis's public URL (links in mail, identity-provider callbacks, the CSRF origin). */
  publicUrl: () => string;
  redis?: Redis | undefined;
  /** Seals secrets at rest (webhook signing secrets, stored idempotent responses). */
  secretBox: SecretBox;
  /** Stored Shield decisions and the live bus, read by the analytics and live-stream routes. */
  shieldEvents: ShieldEvents;
  /** Request metrics and traces (platform/metrics); none when absent. */
  observability?: Observability | undefined;
  /** Reads the TXT records that prove an organisation controls a domain. */
  txt: TxtLookup;
  config: Pick<ServerConfig, 'rateLimitPerMinute' | 'sessionRateLimitPerMinute' | 'rateLimitWindowMs' | 'trustedProxies' | 'logLevel' | 'logStream' | 'analyticsRateLimitPerMinute' | 'asnDbPath' | 'shieldLiveHeartbeatMs' | 'allowLocalSources' | 'allowPrivateTargets' | 'dnsServers' | 'configRepoPollSeconds' | 'allowMetadataOrigins' | 'shieldDnsServers' | 'googleClientId' | 'googleClientSecret' | 'googleIssuer' | 'signup' | 'stripeWebhookSecret' | 'webhookDnsServers' | 'webhookTimeoutMs' | 'webhookRetryDelaysMs' | 'webhookDisableAfterMs' | 'providers' | 'cloud' | 'triage' | 'shieldTlsPort' | 'shieldDomainProof' | 'shieldDomainProofHttpPort'>;
}

export async function buildApp({ db, authenticator, sessions, authChanges, mailer, publicUrl, redis, secretBox, shieldEvents, observability, txt, config }: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED, censor: '[redacted]' },
      serializers: { req: serializeRequest },
      ...(config.logStream ? { stream: config.logStream } : {}),
    },
    genReqId: requestIdFor,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Errors before a route runs (undecodable path, over-long id, malformed HTTP) in the envelope too.
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(createValidatorCompiler());
  // JSON is the default body type; routes that take another (CSV, YAML) register it themselves.
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  observeHttp(app, observability);

  await app.register(errorHandler);
  await app.register(inputGuard);
  await app.register(cookie);
  await app.register(authPlugin, { authenticator, sessions, publicOrigin: () => new URL(publicUrl()).origin });
  await app.register(rateLimit, { perMinute: config.rateLimitPerMinute, sessionPerMinute: config.sessionRateLimitPerMinute, windowMs: config.rateLimitWindowMs, redis });
  await app.register(idempotency, { db, secretBox });
  // The document's webhook section is the events catalogue; operations are named in one table.
  await app.register(openApi, { version: API_VERSION, webhooks: openApiWebhooks(), operationFields });

  await app.register(healthRoutes, { db });
  await app.register(identityRoutes, { sessions });
  await app.register(loginRoutes, { db, tokens: sessions.tokens, mailer, changes: authChanges, publicUrl, signup: config.signup });
  await app.register(ownerLinkRoutes, { db, tokens: sessions.tokens, changes: authChanges });
  await app.register(sessionRoutes, { db, changes: authChanges });
  await app.register(googleRoutes, { db, tokens: sessions.tokens, publicUrl, clientId: config.googleClientId, clientSecret: config.googleClientSecret, issuer: config.googleIssuer, allowPrivateTargets: config.allowPrivateTargets, signup: config.signup });
  await app.register(ssoRoutes, { db, secretBox, tokens: sessions.tokens, changes: authChanges, publicUrl, allowPrivateTargets: config.allowPrivateTargets });
  await app.register(samlRoutes, { db, secretBox, tokens: sessions.tokens, changes: authChanges, publicUrl });
  await app.register(orgRoutes, { db, mailer, changes: authChanges, tokens: sessions.tokens, publicUrl });
  await app.register(domainRoutes, { db, txt });
  await app.register(keyRoutes, { db, authenticator });
  await app.register(auditRoutes, { db });
  const siteOrigins = originPolicy({ allowMetadataOrigins: config.allowMetadataOrigins, dnsServers: config.shieldDnsServers });
  const edge = edgeSettings(config);
  await app.register(siteRoutes, { db, originPolicy: siteOrigins, edge });
  await app.register(managedRuleRoutes);
  await app.register(schemaRoutes, { db });
  await app.register(scheduleRoutes, { db });
  // Webhook endpoints: URLs the server calls for a tenant.
  const urlPolicy = webhookUrlPolicy({ allowPrivateTargets: config.allowPrivateTargets, dnsServers: config.webhookDnsServers });
  await app.register(webhookRoutes, { db, secretBox, urlPolicy });
  await app.register(webhookDeliveryRoutes, { db, secretBox, config });
  await app.register(eventRoutes, { db });
  await app.register(ipAccessRoutes, { db });
  await app.register(virtualPatchRoutes, { db });
  await app.register(rateLimitRoutes, { db });
  await app.register(ruleBatchRoutes, { db });
  await app.register(analyticsRoutes, { db, perMinute: config.analyticsRateLimitPerMinute, windowMs: config.rateLimitWindowMs });
  await app.register(impactRoutes, { db, secretBox, asnDbPath: config.asnDbPath, perMinute: config.analyticsRateLimitPerMinute, windowMs: config.rateLimitWindowMs });
  await app.register(liveRoutes, { db, bus: shieldEvents.bus, heartbeatMs: config.shieldLiveHeartbeatMs });
  // Clones and provider calls on tenants' behalf connect under this (net/outbound.ts).
  const outbound = serverTenantPolicy(config);
  const integrationDeps = { db, secretBox, connectors: createConnectors(config.providers, outbound) };
  const receiver = inboundWebhooks(integrationDeps);
  const clones = cloneAccess(integrationDeps, config.providers);
  await app.register(certificateRoutes, { db, secretBox });
  // HTTP domain proofs are tenant traffic: the site's domain is a name the tenant gave.
  await app.register(domainProofRoutes, { db, edge, txt, outbound });
  await app.register(scanRoutes, { db, allowLocalSources: config.allowLocalSources, secretBox, cloneAccess: clones, outbound });
  await app.register(scanSarifRoutes, { db });
  await app.register(urlScanRoutes, { db, secretBox, allowPrivateTargets: config.allowPrivateTargets, publicUrl });
  await app.register(sandboxRoutes, { db, publicUrl });
  await app.register(demoTargetRoutes, { prefix: DEMO_TARGET_PATH });
  await app.register(vulnerabilityRoutes, { db });
  await app.register(overviewRoutes, { db });
  await app.register(advisoryRoutes, { db });
  await app.register(configRepoRoutes, { db, secretBox, allowLocalSources: config.allowLocalSources, defaultPollSeconds: config.configRepoPollSeconds, cloneAccess: clones, outbound });
  await app.register(integrationsPlugin, { ...integrationDeps, publicUrl, receiver, urlPolicy: serverTenantUrlPolicy(config) });
  await app.register(triagePlugin, { ...integrationDeps, limits: config.triage });
  await app.register(attackSurfacePlugin, { db, cloud: config.cloud, originPolicy: siteOrigins, edge });
  await app.register(pushRoutes, { db, secretBox, allowLocalSources: config.allowLocalSources, integrations: receiver });
  await app.register(stripeWebhookRoutes, { db, changes: authChanges, secret: config.stripeWebhookSecret });
  // The dashboard: the same API, for people (web/).
  await app.register(webPlugin);
  return app;
}
