// The event catalogue: for each type, its payload version, what it means, who may read it and the
// schema of `data.object`. The OpenAPI document lists every type under `webhooks` from here, and the
// events API shows a caller only the types its scopes can read.
import type { JSONSchema } from 'json-schema-to-ts';
import type { Scope } from '../accounts/auth/scopes.ts';
import { SyncResource } from '../config-repos/schemas.ts';
import { timestampSchema } from '../../platform/http/schemas.ts';
import { apiKeySchema } from '../accounts/keys/key-resource.ts';
import { ScanResource, VulnerabilityResource } from '../scans/schemas.ts';
import { IntegrationResource } from '../integrations/connections/schemas.ts';
import { EVENT_TYPE_INFO, type EventTypeDescription, EVENT_TYPES, WebhookResource, type EventType } from '../../schemas/index.ts';

type ObjectSchema = { type: 'object'; properties: Record<string, unknown>; required?: readonly string[] };

/** `data.object` of shield.block and shield.challenge: one site, rule and action over one window. */
export const ShieldAlertObject = {
  type: 'object',
  required: ['object', 'site_id', 'action', 'rule_kind', 'rule_id', 'count', 'window_start', 'window_end', 'first_at', 'last_at', 'samples'],
  properties: {
    object: { type: 'string', enum: ['shield_alert'] },
    site_id: { type: 'string' },
    action: { type: 'string', enum: ['block', 'challenge'] },
    rule_kind: { type: 'string', description: 'The kind of rule that decided (`virtual_patch`, `ip_rule`, `rate_limit`, `schema`, `managed`, …), or `` for the site mode.' },
    rule_id: { type: 'string', description: 'The rule that decided, or `` when none did.' },
    count: { type: 'integer', description: 'Requests this rule blocked (or challenged) on this site during the window.' },
    window_start: timestampSchema,
    window_end: timestampSchema,
    first_at: timestampSchema,
    last_at: timestampSchema,
    samples: {
      type: 'array',
      maxItems: 5,
      description: 'Up to five of the requests, as the decision log stores them.',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, time: timestampSchema, client_ip: { type: 'string' }, method: { type: 'string' }, host: { type: 'string' }, path: { type: 'string' }, status: { type: 'integer' } },
      },
    },
  },
} as const;

/** `data.object` of shield.certificate.failed: one failed ACME order of a site (never a key). */
export const ShieldCertificateFailureObject = {
  type: 'object',
  required: ['object', 'site_id', 'domain', 'attempts', 'error', 'next_attempt_at'],
  properties: {
    object: { type: 'string', enum: ['shield_certificate_order'] },
    site_id: { type: 'string' },
    domain: { type: 'string' },
    attempts: { type: 'integer', description: 'Orders that failed in a row, this one included; reset when a certificate is obtained.' },
    error: { type: 'string', description: 'What the ACME server or the order said went wrong.' },
    next_attempt_at: timestampSchema,
  },
} as const;

/** `data.object` of shield.site.domain_taken_over: the organisation's own site that lost its domain (never who took it). */
export const ShieldSiteTakeoverObject = {
  type: 'object',
  required: ['object', 'site_id', 'domain', 'was_serving', 'taken_at'],
  properties: {
    object: { type: 'string', enum: ['shield_site_takeover'] },
    site_id: { type: 'string', description: 'Your site whose domain another organisation proved control of.' },
    domain: { type: 'string' },
    was_serving: { type: 'boolean', description: 'Whether your site was serving the domain until then.' },
    taken_at: timestampSchema,
  },
} as const;

/** `data.object` of ping: which webhook was tested. */
const PingObject = {
  type: 'object',
  required: ['object', 'webhook_id', 'message'],
  properties: { object: { type: 'string', enum: ['ping'] }, webhook_id: { type: 'string' }, message: { type: 'string' } },
} as const;

export interface EventTypeInfo extends EventTypeDescription {
  /** Who may read events of this type through the events API. */
  scope: Scope;
  object: ObjectSchema;
}

const vulnerability = VulnerabilityResource as unknown as ObjectSchema;
const scan = ScanResource as unknown as ObjectSchema;
const sync = SyncResource as unknown as ObjectSchema;
const apiKey = apiKeySchema as unknown as ObjectSchema;
const webhook = WebhookResource as unknown as ObjectSchema;
const alert = ShieldAlertObject as unknown as ObjectSchema;
const integration = IntegrationResource as unknown as ObjectSchema;

export const EVENT_CATALOGUE: Record<EventType | 'ping', EventTypeInfo> = {
  'vulnerability.created': { ...EVENT_TYPE_INFO['vulnerability.created'], scope: 'vulnerabilities:read', object: vulnerability },
  'vulnerability.updated': { ...EVENT_TYPE_INFO['vulnerability.updated'], scope: 'vulnerabilities:read', object: vulnerability },
  'vulnerability.resolved': { ...EVENT_TYPE_INFO['vulnerability.resolved'], scope: 'vulnerabilities:read', object: vulnerability },
  'scan.started': { ...EVENT_TYPE_INFO['scan.started'], scope: 'scans:read', object: scan },
  'scan.completed': { ...EVENT_TYPE_INFO['scan.completed'], scope: 'scans:read', object: scan },
  'scan.failed': { ...EVENT_TYPE_INFO['scan.failed'], scope: 'scans:read', object: scan },
  'shield.block': { ...EVENT_TYPE_INFO['shield.block'], scope: 'shield:read', object: alert },
  'shield.challenge': { ...EVENT_TYPE_INFO['shield.challenge'], scope: 'shield:read', object: alert },
  'shield.certificate.failed': { ...EVENT_TYPE_INFO['shield.certificate.failed'], scope: 'shield:read', object: ShieldCertificateFailureObject as unknown as ObjectSchema },
  'shield.site.domain_taken_over': { ...EVENT_TYPE_INFO['shield.site.domain_taken_over'], scope: 'shield:read', object: ShieldSiteTakeoverObject as unknown as ObjectSchema },
  'config_repo.sync.completed': { ...EVENT_TYPE_INFO['config_repo.sync.completed'], scope: 'admin', object: sync },
  'config_repo.sync.failed': { ...EVENT_TYPE_INFO['config_repo.sync.failed'], scope: 'admin', object: sync },
  'api_key.created': { ...EVENT_TYPE_INFO['api_key.created'], scope: 'admin', object: apiKey },
  'api_key.revoked': { ...EVENT_TYPE_INFO['api_key.revoked'], scope: 'admin', object: apiKey },
  'webhook.disabled': { ...EVENT_TYPE_INFO['webhook.disabled'], scope: 'admin', object: webhook },
  'integration.connected': { ...EVENT_TYPE_INFO['integration.connected'], scope: 'admin', object: integration },
  'integration.disconnected': { ...EVENT_TYPE_INFO['integration.disconnected'], scope: 'admin', object: integration },
  'integration.error': { ...EVENT_TYPE_INFO['integration.error'], scope: 'admin', object: integration },
  ping: { ...EVENT_TYPE_INFO.ping, scope: 'admin', object: PingObject as unknown as ObjectSchema },
};

/** The event envelope with `data.object` of the given schema. */
export function eventSchema<const O extends JSONSchema>(types: readonly string[], object: O) {
  return {
    type: 'object',
    required: ['id', 'livemode', 'object', 'type', 'version', 'organization_id', 'created_at', 'data'],
    properties: {
      id: { type: 'string', description: 'Unique per event (`evt_…`); the same on every delivery attempt, so receivers can deduplicate.' },
      livemode: { type: 'boolean', description: 'False for events of the sandbox (test mode): receivers can tell test traffic from real.' },
      object: { type: 'string', enum: ['event'] },
      type: { type: 'string', enum: types },
      version: { type: 'integer', description: 'Payload version of the type.' },
      organization_id: { type: 'string' },
      created_at: timestampSchema,
      data: {
        type: 'object',
        required: ['object'],
        properties: {
          object: object,
          previous_attributes: { type: 'object', additionalProperties: true, description: 'Updates only: the changed fields before the change.' },
        },
      },
    },
  } as const;
}

/** The OpenAPI 3.1 `webhooks` section: one entry per event type, the POST a receiver gets. */
export function openApiWebhooks(): Record<string, unknown> {
  const entries = (['ping', ...EVENT_TYPES] as const).map((type) => {
    const info = EVENT_CATALOGUE[type];
    return [
      type,
      {
        post: {
          summary: type,
          description: `${info.description} Payload version ${info.version}. Signed with \`X-Service-Signature: t=<unix>,v1=<hex>\` (HMAC-SHA256 of "<t>.<raw body>"); also \`X-Service-Event-Id\` and \`X-Service-Event-Type\`.`,
          requestBody: { required: true, content: { 'application/json': { schema: eventSchema([type], info.object as JSONSchema) } } },
          responses: { '2XX': { description: 'Received. Any other status, or no answer within 10 s, is a failure and is retried.' } },
        },
      },
    ];
  });
  return Object.fromEntries(entries);
}

/** Event types a set of scopes may read. */
export function readableEventTypes(can: (scope: Scope) => boolean): string[] {
  return Object.entries(EVENT_CATALOGUE)
    .filter(([, info]) => can(info.scope))
    .map(([type]) => type);
}
