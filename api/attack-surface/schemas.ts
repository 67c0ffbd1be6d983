// JSON Schemas of the attack-surface API (the OpenAPI document is generated from them).
import type { JSONSchema } from 'json-schema-to-ts';
import { ShieldSiteSpec } from '../../schemas/index.ts';
import { DiscoverySettings, IntegrationResource } from '../integrations/connections/schemas.ts';
import { nullableTimestampSchema, pageQueryProperties, filterParam, timestampSchema } from '../../platform/http/schemas.ts';
import { ASSET_KINDS } from './providers/types.ts';

export const ROLE_ARN_PATTERN = '^arn:aws[a-z-]*:iam::\\d{12}:role/.+$';

export const AwsConnectBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    integration: { type: 'string', minLength: 1, maxLength: 64, description: 'Step 2: the pending connection step 1 created.' },
    role_arn: { type: 'string', maxLength: 2048, pattern: ROLE_ARN_PATTERN, description: 'Step 2: the role created with the trust policy of step 1 (`arn:aws:iam::123456789012:role/AegisDiscovery`).' },
    settings: {
      type: 'object',
      additionalProperties: false,
      description: 'Cloud connections take only `discovery`.',
      properties: { discovery: DiscoverySettings },
    },
  },
} as const satisfies JSONSchema;

const SetupInfo = {
  type: 'object',
  required: ['external_id', 'principal', 'trust_policy', 'permissions_policy'],
  description: 'What to create in the AWS account: a role that trusts `principal` with this external id, carrying the read-only permissions policy.',
  properties: {
    external_id: { type: 'string', description: 'Generated for this connection; the trust policy requires it (confused-deputy protection). Not a secret.' },
    principal: { type: ['string', 'null'], description: 'Aegis’s AWS principal the role must trust (AEGIS_AWS_PRINCIPAL_ARN); null when this server has none configured.' },
    trust_policy: { type: 'object', additionalProperties: true, description: 'The role’s trust policy document.' },
    permissions_policy: { type: 'object', additionalProperties: true, description: 'The read-only permissions discovery needs.' },
  },
} as const satisfies JSONSchema;

export const AttackSurfaceRunResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'integration_id', 'status', 'trigger', 'counts', 'errors', 'error', 'created_at', 'started_at', 'finished_at'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['attack_surface_run'] },
    livemode: { type: 'boolean' },
    integration_id: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] },
    trigger: { type: 'string', enum: ['schedule', 'manual', 'connect'] },
    counts: {
      type: ['object', 'null'],
      description: 'Once completed: active assets after the run (`total`), new or back (`added`), no longer found (`removed`), seen again (`unchanged`).',
      required: ['total', 'added', 'removed', 'unchanged'],
      properties: { total: { type: 'integer' }, added: { type: 'integer' }, removed: { type: 'integer' }, unchanged: { type: 'integer' } },
    },
    errors: {
      type: 'array',
      description: 'Scopes (a service in a region) that could not be read; their assets were left as they were.',
      items: { type: 'object', required: ['scope', 'code', 'message'], properties: { scope: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } } },
    },
    error: { type: ['string', 'null'], description: 'Why the run failed (the role could not be assumed, AWS could not be reached), or why it is being retried.' },
    created_at: timestampSchema,
    started_at: nullableTimestampSchema,
    finished_at: nullableTimestampSchema,
  },
} as const satisfies JSONSchema;

export const AwsConnectAnswer = {
  type: 'object',
  description: 'Step 1: the pending connection and what to create in AWS. Step 2: the active connection and its first discovery.',
  required: ['integration'],
  properties: { integration: IntegrationResource, setup: SetupInfo, run: AttackSurfaceRunResource },
} as const satisfies JSONSchema;

const CoverageSchema = {
  type: 'object',
  required: ['covered', 'shield_site_id', 'scan_schedule_id', 'scan_id'],
  description: 'What already covers the host, as of this read.',
  properties: {
    covered: { type: 'boolean' },
    shield_site_id: { type: ['string', 'null'], description: 'A Shield site for this domain, or whose origin is this host.' },
    scan_schedule_id: { type: ['string', 'null'], description: 'An enabled DAST, API or CVE scan schedule whose target is on this host.' },
    scan_id: { type: ['string', 'null'], description: 'A DAST, API or CVE scan of this host created in the last 30 days.' },
  },
} as const satisfies JSONSchema;

export const AttackSurfaceAssetResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'host', 'kind', 'provider', 'integration_id', 'resource', 'details', 'first_seen_at', 'last_seen_at', 'gone_at', 'coverage'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['attack_surface_asset'] },
    livemode: { type: 'boolean' },
    host: { type: 'string', description: 'A DNS name (lower case) or an IP address.' },
    kind: { type: 'string', enum: ASSET_KINDS },
    provider: { type: 'string', enum: ['aws'] },
    integration_id: { type: 'string' },
    resource: {
      type: 'object',
      required: ['id', 'name', 'region'],
      description: 'The cloud resource exposing the host.',
      properties: { id: { type: 'string', description: 'Its ARN, or the provider’s id.' }, name: { type: ['string', 'null'] }, region: { type: ['string', 'null'], description: 'Null for global services (CloudFront, Route 53).' } },
    },
    details: { type: 'object', additionalProperties: true, description: 'Kind-specific facts: scheme, stage, record type, alias target, instance state.' },
    first_seen_at: timestampSchema,
    last_seen_at: timestampSchema,
    gone_at: { ...nullableTimestampSchema, description: 'When a discovery of its service and region no longer found it; null while it exists.' },
    coverage: CoverageSchema,
  },
} as const satisfies JSONSchema;

export const AssetListQuery = {
  type: 'object',
  properties: {
    ...pageQueryProperties,
    kind: filterParam(`Filter by kind (${ASSET_KINDS.join(', ')}).`),
    covered: { type: 'boolean', description: 'Only assets a Shield site or scan covers (`true`), or only uncovered ones (`false`).' },
    integration: { type: 'string', minLength: 1, maxLength: 64, description: 'Only assets of this cloud connection.' },
    status: { type: 'string', enum: ['active', 'gone', 'all'], default: 'active', description: '`active` (default): still found; `gone`: no longer found; `all`.' },
    host: filterParam('Filter by host (exact, case-insensitive).'),
  },
} as const satisfies JSONSchema;

export const RunListQuery = {
  type: 'object',
  properties: { ...pageQueryProperties, integration: { type: 'string', minLength: 1, maxLength: 64, description: 'Only runs of this cloud connection.' } },
} as const satisfies JSONSchema;

export const ScanScheduleFromAsset = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'Default: `DAST <host>` (or `API <host>`).' },
    cron: { type: 'string', minLength: 1, maxLength: 200, description: '5-field cron expression (default: daily at 03:xx UTC, the minute spread by host).' },
    timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone of `cron` (default UTC).' },
    scan_type: { type: 'string', enum: ['dast', 'api'], default: 'dast' },
    target: { type: 'string', minLength: 1, maxLength: 2048, description: 'Default: `https://<host>/`.' },
  },
} as const satisfies JSONSchema;

export const ShieldSiteFromAsset = {
  type: 'object',
  additionalProperties: false,
  properties: {
    domain: { ...ShieldSiteSpec.properties.domain, description: 'The domain the site protects. Default: the asset’s host (required when the host is an IP address).' },
    origin_url: { ...ShieldSiteSpec.properties.origin_url, description: 'Where Shield forwards allowed traffic. Default: `https://<host>`.' },
    mode: { ...ShieldSiteSpec.properties.mode, default: 'log' },
  },
} as const satisfies JSONSchema;

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } } as const;
