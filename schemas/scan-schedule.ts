import { createdAtSchema, idSchema, labelsSchema, updatedAtSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';

export const SCAN_TYPES = ['dast', 'sast', 'sca', 'secrets', 'api', 'cve'] as const;

const properties = {
  name: { type: 'string', minLength: 1, maxLength: 100, description: 'Human-readable name.' },
  scan_type: {
    type: 'string',
    enum: SCAN_TYPES,
    description: 'Kind of scan to run: `dast` (web), `sast` (source), `sca` (dependencies), `secrets`, `api` (OpenAPI-driven) or `cve` (CVE-targeted).',
  },
  target: {
    type: 'string',
    minLength: 1,
    maxLength: 2048,
    description: 'What to scan: a URL for dast/api/cve scans, a git repository URL for sast/sca/secrets scans.',
  },
  cron: {
    type: 'string',
    minLength: 9,
    maxLength: 200,
    description: 'When to run, as a 5-field cron expression (minute hour day-of-month month day-of-week), e.g. `0 3 * * 1`.',
  },
  timezone: { type: 'string', minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone the cron expression is read in, e.g. `Europe/Amsterdam`.' },
  enabled: { type: 'boolean', default: true, description: 'Disabled schedules keep their settings but start no scans.' },
  config: { type: 'object', default: {}, additionalProperties: true, description: 'Scan-type-specific settings passed to each scan (scope, budget, ref, …).' },
  labels: labelsSchema,
} as const;

export const ScanScheduleSpec = {
  $id: 'https://aegis.dev/schemas/ScanSchedule.json',
  title: 'ScanSchedule',
  description: 'Runs a scan of a target on a cron schedule.',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scan_type', 'target', 'cron'],
  properties,
} as const;

export const ScanScheduleUpdate = { type: 'object', additionalProperties: false, minProperties: 1, properties: withoutDefaults(properties) } as const;

export const ScanScheduleResource = {
  type: 'object',
  required: ['livemode', 'id', 'name', 'scan_type', 'target', 'cron', 'timezone', 'enabled', 'config', 'next_run_at', 'labels', 'created_at', 'updated_at'],
  properties: {
    livemode: livemodeSchema,
    id: idSchema,
    ...properties,
    next_run_at: { type: ['string', 'null'], format: 'date-time', readOnly: true, description: 'Next time a scan starts; null when disabled.' },
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

export const scanScheduleMeta: KindMeta = {
  kind: 'ScanSchedule',
  terraformType: 'aegis_scan_schedule',
  parent: null,
  identity: ['name'],
  mutable: ['name', 'scan_type', 'target', 'cron', 'timezone', 'enabled', 'config', 'labels'],
  computed: ['id', 'next_run_at', 'created_at', 'updated_at'],
  sensitive: [],
};
