// The event catalogue: for each type, its payload version, what it means, who may read it and the
// schema of `data.object`. The OpenAPI document lists every type under `webhooks` from here, and the
// events API shows a caller only the types its scopes can read.
import type { JSONSchema } from 'json-schema-to-ts';
import type { Scope } from '../auth/scopes.ts';
import { SyncResource } from '../config-repos/schemas.ts';
import { timestampSchema } from '../../platform/http/schemas.ts';
import { apiKeySchema } from '../keys/key-resource.ts';
import { ScanResource, VulnerabilityResource } from '../scans/schemas.ts';
import { IntegrationResource } from '../integrations/schemas.ts';
import { EVENT_TYPES, WebhookResource, type EventType } from '../../schemas/index.ts';

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

/** `data.object` of config_repo.sync.*: the sync, as GET /api/v1/config-repos/:id/syncs/:sync_id shows it. */
const PingObject = {
  type: 'object',
  required: ['object', 'webhook_id', 'message'],
  properties: { object: { type: 'string', enum: ['ping'] }, webhook_id: { type: 'string' }, message: { type: 'string' } },
} as const;

export interface EventTypeInfo {
  version: number;
  description: string;
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
  'vulnerability.created': { version: 1, scope: 'vulnerabilities:read', object: vulnerability, description: 'A scan found a vulnerability not seen before on its target.' },
  'vulnerability.updated': {
    version: 1,
    scope: 'vulnerabilities:read',
    object: vulnerability,
    description: 'A finding’s status, triage (false positive, notes), verification or virtual patch changed; `data.previous_attributes` holds the old values.',
  },
  'vulnerability.resolved': { version: 1, scope: 'vulnerabilities:read', object: vulnerability, description: 'A finding became resolved: fixed (a later scan no longer sees it), verified, or closed by hand.' },
  'scan.started': { version: 1, scope: 'scans:read', object: scan, description: 'A scan began running.' },
  'scan.completed': { version: 1, scope: 'scans:read', object: scan, description: 'A scan finished; `summary` counts findings by severity, new and fixed.' },
  'scan.failed': { version: 1, scope: 'scans:read', object: scan, description: 'A scan ended without a result; `error` says why.' },
  'shield.block': {
    version: 1,
    scope: 'shield:read',
    object: alert,
    description: 'Shield blocked requests on a site: one event per site, rule and window (AEGIS_SHIELD_ALERT_WINDOW_MS, 10 s by default) with the count and up to five samples, so an attack is a bounded number of events.',
  },
  'shield.challenge': { version: 1, scope: 'shield:read', object: alert, description: 'Shield challenged requests on a site; aggregated like `shield.block`.' },
  'config_repo.sync.completed': { version: 1, scope: 'admin', object: sync, description: 'A config-repository sync ended (applied, unchanged, planned or refused).' },
  'config_repo.sync.failed': { version: 1, scope: 'admin', object: sync, description: 'A config-repository sync failed; `failure_stage` and `errors` say where and why.' },
  'api_key.created': { version: 1, scope: 'admin', object: apiKey, description: 'An API key was created (or issued by rotation). Never carries the key value.' },
  'api_key.revoked': { version: 1, scope: 'admin', object: apiKey, description: 'An API key was revoked.' },
  'webhook.disabled': {
    version: 1,
    scope: 'admin',
    object: webhook,
    description: 'A webhook was disabled because every delivery to it failed for AEGIS_WEBHOOK_DISABLE_AFTER_MS (3 days); `disabled_reason` says why. Re-enable it with PATCH `enabled: true`.',
  },
  'integration.connected': { version: 1, scope: 'admin', object: integration, description: 'A provider connection became active (OAuth completed, or a pasted token was validated). Never carries a token.' },
  'integration.disconnected': { version: 1, scope: 'admin', object: integration, description: 'A provider connection was deleted (its grant revoked at the provider where the provider allows).' },
  'integration.error': {
    version: 1,
    scope: 'admin',
    object: integration,
    description: 'The provider refused a connection’s credential (revoked, or expired beyond refresh); `error` says why. Connect again to repair it.',
  },
  ping: { version: 1, scope: 'admin', object: PingObject as unknown as ObjectSchema, description: 'Sent by POST /api/v1/webhooks/:id/test to that webhook only; no subscription selects it.' },
};

export const EVENT_VERSIONS = Object.fromEntries(Object.entries(EVENT_CATALOGUE).map(([type, info]) => [type, info.version])) as Record<EventType | 'ping', number>;

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
