// The name of every operation in the OpenAPI document (`operationId`, as `<resource>.<method>`) and
// the model its answer carries (`x-aegis-model`: the object a get returns, the item of a list). The
// SDKs are generated from these (sdks/codegen): `client.shieldSites.list()` in Node,
// `client.shield_sites.list()` in Python, `client.ShieldSites.List(ctx)` in Go. They are the SDKs'
// public names, so they are chosen here once, by hand, rather than derived from paths that may move.
//
// `null`: not for API clients — browser sign-in steps and the endpoints third parties call
// (identity-provider callbacks, inbound webhooks from GitHub, GitLab, Jira, Linear and Stripe).
// A route missing from this table fails the OpenAPI test (test/api/openapi.test.ts), so a new
// route cannot reach the SDKs unnamed.

export interface OperationName {
  readonly id: string;
  readonly model?: string;
}

const op = (id: string, model?: string): OperationName => (model ? { id, model } : { id });

/** Keyed by `METHOD url`, with the url as Fastify declares it (`:id`). */
export const OPERATION_NAMES: Readonly<Record<string, OperationName | null>> = {
  'GET /healthz': op('health.live', 'Health'),
  'GET /readyz': op('health.ready', 'Readiness'),
  'GET /api/v1/me': op('identity.me', 'Me'),
  'GET /api/v1/orgs/current': op('identity.organization', 'Organization'),

  // Sign-in: steps a browser takes (links, redirects, cookies), not API calls.
  'POST /auth/login': null,
  'GET /auth/magic': null,
  'POST /auth/magic': null,
  'POST /auth/logout': null,
  'GET /auth/session': null,
  'GET /auth/google': null,
  'GET /auth/google/callback': null,
  'GET /auth/sso': null,
  'GET /auth/sso/start/:state': null,
  'GET /auth/sso/oidc/callback': null,
  'POST /auth/sso/saml/acs': null,
  'GET /auth/sso/saml/complete': null,
  'GET /auth/sso/saml/metadata/:org_id': null,
  'GET /auth/invite': null,
  'POST /auth/invite/accept': null,
  'POST /auth/first-owner': null,

  'GET /api/v1/me/sessions': op('sessions.list', 'Session'),
  'DELETE /api/v1/me/sessions/:id': op('sessions.revoke'),
  'PUT /api/v1/me/current-organization': op('sessions.setOrganization'),
  'PUT /api/v1/me/current-environment': op('sessions.setEnvironment'),

  'GET /api/v1/orgs/current/sso': op('sso.get', 'SsoConnection'),
  'PUT /api/v1/orgs/current/sso': op('sso.configure', 'SsoConnection'),
  'DELETE /api/v1/orgs/current/sso': op('sso.delete'),
  'POST /api/v1/orgs/current/sso/test': op('sso.test'),
  'POST /api/v1/orgs/current/sso/enforcement': op('sso.setEnforcement'),
  'GET /api/v1/orgs/current/domains': op('domains.list', 'Domain'),
  'POST /api/v1/orgs/current/domains': op('domains.create', 'Domain'),
  'GET /api/v1/orgs/current/domains/:id': op('domains.get', 'Domain'),
  'POST /api/v1/orgs/current/domains/:id/verify': op('domains.verify', 'Domain'),
  'DELETE /api/v1/orgs/current/domains/:id': op('domains.delete'),

  'GET /api/v1/orgs/current/members': op('members.list', 'Member'),
  'PATCH /api/v1/orgs/current/members/:user_id': op('members.update', 'Member'),
  'DELETE /api/v1/orgs/current/members/:user_id': op('members.remove'),
  'POST /api/v1/orgs/current/invite': op('invites.create', 'Invite'),
  'GET /api/v1/orgs/current/invites': op('invites.list', 'Invite'),
  'DELETE /api/v1/orgs/current/invites/:id': op('invites.revoke', 'Invite'),
  'POST /api/v1/me/invites/accept': op('invites.accept'),

  'POST /api/v1/api-keys': op('apiKeys.create', 'NewApiKey'),
  'GET /api/v1/api-keys': op('apiKeys.list', 'ApiKey'),
  'GET /api/v1/api-keys/:id': op('apiKeys.get', 'ApiKey'),
  'DELETE /api/v1/api-keys/:id': op('apiKeys.revoke', 'ApiKey'),
  'POST /api/v1/api-keys/:id/rotate': op('apiKeys.rotate', 'NewApiKey'),

  'GET /api/v1/audit-log': op('auditLog.list', 'AuditEntry'),

  'GET /api/v1/shield/sites': op('shieldSites.list', 'ShieldSite'),
  'POST /api/v1/shield/sites': op('shieldSites.create', 'ShieldSite'),
  'GET /api/v1/shield/sites/:id': op('shieldSites.get', 'ShieldSite'),
  'PATCH /api/v1/shield/sites/:id': op('shieldSites.update', 'ShieldSite'),
  'DELETE /api/v1/shield/sites/:id': op('shieldSites.delete'),
  'GET /api/v1/shield/managed-rules': op('shieldSites.managedRules', 'ManagedRuleCatalogue'),
  'POST /api/v1/shield/sites/:id/verify-domain': op('shieldSites.verifyDomain', 'ShieldSite'),
  'PUT /api/v1/shield/sites/:id/certificate': op('shieldCertificates.upload', 'ShieldCertificate'),
  'GET /api/v1/shield/sites/:id/certificate': op('shieldCertificates.get', 'ShieldCertificate'),
  'DELETE /api/v1/shield/sites/:id/certificate': op('shieldCertificates.delete'),

  'PUT /api/v1/shield/sites/:id/schema': op('shieldSchema.upload', 'ShieldSchema'),
  'GET /api/v1/shield/sites/:id/schema': op('shieldSchema.get', 'ShieldSchema'),
  'DELETE /api/v1/shield/sites/:id/schema': op('shieldSchema.delete'),
  'GET /api/v1/shield/sites/:id/schema-config': op('shieldSchema.getConfig', 'ShieldSchemaConfig'),
  'PATCH /api/v1/shield/sites/:id/schema-config': op('shieldSchema.updateConfig', 'ShieldSchemaConfig'),

  'GET /api/v1/shield/sites/:id/ip-access': op('ipAccessRules.list', 'IpAccessRule'),
  'POST /api/v1/shield/sites/:id/ip-access': op('ipAccessRules.create', 'IpAccessRule'),
  'GET /api/v1/shield/sites/:id/ip-access/:rule_id': op('ipAccessRules.get', 'IpAccessRule'),
  'PATCH /api/v1/shield/sites/:id/ip-access/:rule_id': op('ipAccessRules.update', 'IpAccessRule'),
  'DELETE /api/v1/shield/sites/:id/ip-access/:rule_id': op('ipAccessRules.delete'),
  'POST /api/v1/shield/sites/:id/ip-access/import': op('ipAccessRules.import', 'IpAccessImport'),

  'GET /api/v1/shield/sites/:id/virtual-patches': op('virtualPatches.list', 'VirtualPatch'),
  'POST /api/v1/shield/sites/:id/virtual-patches': op('virtualPatches.create', 'VirtualPatch'),
  'GET /api/v1/shield/sites/:id/virtual-patches/:patch_id': op('virtualPatches.get', 'VirtualPatch'),
  'PATCH /api/v1/shield/sites/:id/virtual-patches/:patch_id': op('virtualPatches.update', 'VirtualPatch'),
  'DELETE /api/v1/shield/sites/:id/virtual-patches/:patch_id': op('virtualPatches.delete'),

  'GET /api/v1/shield/sites/:id/rate-limits': op('rateLimitRules.list', 'RateLimitRule'),
  'POST /api/v1/shield/sites/:id/rate-limits': op('rateLimitRules.create', 'RateLimitRule'),
  'GET /api/v1/shield/sites/:id/rate-limits/:rule_id': op('rateLimitRules.get', 'RateLimitRule'),
  'PATCH /api/v1/shield/sites/:id/rate-limits/:rule_id': op('rateLimitRules.update', 'RateLimitRule'),
  'DELETE /api/v1/shield/sites/:id/rate-limits/:rule_id': op('rateLimitRules.delete'),

  'POST /api/v1/shield/sites/:id/rules/batch': op('shieldRules.batch', 'ShieldRuleBatch'),
  'GET /api/v1/shield/sites/:id/analytics': op('shieldAnalytics.get', 'ShieldAnalytics'),
  'POST /api/v1/shield/sites/:id/impact': op('shieldImpact.preview', 'ShieldImpact'),
  'GET /api/v1/shield/sites/:id/live': op('shieldLive.stream', 'ShieldDecision'),

  'GET /api/v1/scan-schedules': op('scanSchedules.list', 'ScanSchedule'),
  'POST /api/v1/scan-schedules': op('scanSchedules.create', 'ScanSchedule'),
  'GET /api/v1/scan-schedules/:id': op('scanSchedules.get', 'ScanSchedule'),
  'PATCH /api/v1/scan-schedules/:id': op('scanSchedules.update', 'ScanSchedule'),
  'DELETE /api/v1/scan-schedules/:id': op('scanSchedules.delete'),

  'GET /api/v1/webhooks': op('webhooks.list', 'Webhook'),
  'POST /api/v1/webhooks': op('webhooks.create', 'NewWebhook'),
  'GET /api/v1/webhooks/event-types': op('webhooks.eventTypes', 'WebhookEventType'),
  'GET /api/v1/webhooks/:id': op('webhooks.get', 'Webhook'),
  'PATCH /api/v1/webhooks/:id': op('webhooks.update', 'Webhook'),
  'DELETE /api/v1/webhooks/:id': op('webhooks.delete'),
  'POST /api/v1/webhooks/:id/test': op('webhooks.test', 'WebhookDelivery'),
  'POST /api/v1/webhooks/:id/rotate-secret': op('webhooks.rotateSecret'),
  'GET /api/v1/webhooks/:id/deliveries': op('webhookDeliveries.list', 'WebhookDelivery'),
  'GET /api/v1/webhooks/:id/deliveries/:delivery_id': op('webhookDeliveries.get', 'WebhookDelivery'),
  'POST /api/v1/webhooks/:id/deliveries/:delivery_id/redeliver': op('webhookDeliveries.redeliver', 'WebhookDelivery'),

  'GET /api/v1/events': op('events.list', 'Event'),
  'GET /api/v1/events/:id': op('events.get', 'Event'),

  'POST /api/v1/sast/scans': op('scans.createSast', 'Scan'),
  'POST /api/v1/sca/scans': op('scans.createSca', 'Scan'),
  'POST /api/v1/secrets/scans': op('scans.createSecrets', 'Scan'),
  'POST /api/v1/api-scans': op('scans.createApi', 'Scan'),
  'POST /api/v1/cve-scans': op('scans.createCve', 'Scan'),
  'POST /api/v1/scans': op('scans.create', 'Scan'),
  'GET /api/v1/scans': op('scans.list', 'Scan'),
  'GET /api/v1/scans/:id': op('scans.get', 'Scan'),
  'DELETE /api/v1/scans/:id': op('scans.cancel', 'Scan'),
  'GET /api/v1/scans/:id/diff': op('scans.diff', 'ScanDiff'),
  'GET /api/v1/scans/:id/coverage': op('scans.coverage', 'ScanCoverage'),
  'GET /api/v1/scans/:id/sarif': op('scans.sarif'),

  'GET /api/v1/sandbox': op('sandbox.get', 'Sandbox'),
  'PUT /api/v1/sandbox/targets': op('sandbox.setTargets', 'Sandbox'),
  'DELETE /api/v1/sandbox/data': op('sandbox.reset'),

  'GET /api/v1/vulnerabilities': op('vulnerabilities.list', 'Vulnerability'),
  'GET /api/v1/vulnerabilities/:id': op('vulnerabilities.get', 'Vulnerability'),
  'PATCH /api/v1/vulnerabilities/:id': op('vulnerabilities.update', 'Vulnerability'),
  'GET /api/v1/vulnerabilities/:id/history': op('vulnerabilities.history', 'VulnerabilityChange'),
  'POST /api/v1/vulnerabilities/:id/verify': op('vulnerabilities.verify'),
  'POST /api/v1/vulnerabilities/:id/virtual-patch': op('vulnerabilities.createVirtualPatch'),
  'POST /api/v1/vulnerabilities/:id/ticket': op('vulnerabilities.createTicket', 'Ticket'),
  'GET /api/v1/vulnerabilities/:id/ticket': op('vulnerabilities.getTicket', 'Ticket'),
  'POST /api/v1/vulnerabilities/:id/triage': op('vulnerabilities.triage', 'Triage'),
  'GET /api/v1/vulnerabilities/:id/triage': op('vulnerabilities.getTriage', 'Triage'),
  'GET /api/v1/triage/usage': op('triage.usage', 'TriageUsage'),

  'GET /api/v1/overview': op('overview.get', 'Overview'),
  'POST /api/v1/advisories': op('advisories.import', 'AdvisoryImport'),

  'GET /api/v1/config-repos': op('configRepos.list', 'ConfigRepo'),
  'POST /api/v1/config-repos': op('configRepos.create', 'ConfigRepo'),
  'GET /api/v1/config-repos/:id': op('configRepos.get', 'ConfigRepo'),
  'PATCH /api/v1/config-repos/:id': op('configRepos.update', 'ConfigRepo'),
  'DELETE /api/v1/config-repos/:id': op('configRepos.delete'),
  'POST /api/v1/config-repos/:id/sync': op('configRepos.sync', 'ConfigRepoSync'),
  'GET /api/v1/config-repos/:id/syncs': op('configRepos.listSyncs', 'ConfigRepoSync'),
  'GET /api/v1/config-repos/:id/syncs/:syncId': op('configRepos.getSync', 'ConfigRepoSync'),

  'GET /api/v1/integrations': op('integrations.list', 'Integration'),
  'GET /api/v1/integrations/:id': op('integrations.get', 'Integration'),
  'PATCH /api/v1/integrations/:id': op('integrations.update', 'Integration'),
  'DELETE /api/v1/integrations/:id': op('integrations.delete'),
  'POST /api/v1/integrations/:provider/connect': op('integrations.connect'),
  'POST /api/v1/integrations/aws/connect': op('integrations.connectAws'),
  'POST /api/v1/integrations/:id/webhook-secret': op('integrations.createWebhookSecret'),
  'GET /api/v1/integrations/:id/pull-requests': op('integrations.pullRequests', 'PullRequestCheck'),
  'POST /api/v1/integrations/:id/discover': op('integrations.discover', 'DiscoveryRun'),
  'GET /api/v1/integrations/oauth/:provider/callback': null,

  'GET /api/v1/attack-surface': op('attackSurface.list', 'Asset'),
  'GET /api/v1/attack-surface/runs': op('attackSurface.runs', 'DiscoveryRun'),
  'GET /api/v1/attack-surface/:id': op('attackSurface.get', 'Asset'),
  'POST /api/v1/attack-surface/:id/scan-schedule': op('attackSurface.createScanSchedule', 'ScanSchedule'),
  'POST /api/v1/attack-surface/:id/shield-site': op('attackSurface.createShieldSite', 'ShieldSite'),

  // Called by the services themselves, signed with their own secrets.
  'POST /api/v1/webhooks/jira': null,
  'POST /api/v1/webhooks/linear': null,
  'POST /api/v1/webhooks/github': null,
  'POST /api/v1/webhooks/gitlab': null,
  'POST /api/v1/webhooks/stripe': null,
};

/** The OpenAPI fields naming a route: `operationId`, `x-aegis-model`, or `x-aegis-sdk: false`. */
export function operationFields(method: string, url: string): Record<string, unknown> {
  const name = OPERATION_NAMES[`${method} ${url}`];
  if (name === undefined) return {};
  if (name === null) return { 'x-aegis-sdk': false };
  return { operationId: name.id, ...(name.model ? { 'x-aegis-model': name.model } : {}) };
}
