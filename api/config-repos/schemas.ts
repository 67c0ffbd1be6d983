// Request and response shapes of /api/v1/config-repos (OpenAPI via the route schemas).
import { nullableTimestampSchema, timestampSchema } from '../../platform/http/schemas.ts';
import { livemodeSchema } from '../../schemas/common.ts';

export const REPO_STATUSES = ['unknown', 'synced', 'out_of_sync', 'error'] as const;
export type RepoStatus = (typeof REPO_STATUSES)[number];
export const SYNC_TRIGGERS = ['push', 'poll', 'manual', 'drift'] as const;
export type SyncTrigger = (typeof SYNC_TRIGGERS)[number];
export const SYNC_STATUSES = ['queued', 'running', 'completed'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];
export const SYNC_RESULTS = ['applied', 'unchanged', 'planned', 'refused', 'failed'] as const;
export type SyncResult = (typeof SYNC_RESULTS)[number];
export const FAILURE_STAGES = ['fetch', 'validate', 'plan', 'apply'] as const;
export type FailureStage = (typeof FAILURE_STAGES)[number];

/** Settings a repository is created with and may change later. */
const settings = {
  name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,62}$', description: 'Unique in the organisation.' },
  url: {
    type: 'string',
    minLength: 1,
    maxLength: 2048,
    description:
      'The repository: `https://…`, `ssh://…`, `git@host:path` or `git://…` (`file://` only on servers run with AEGIS_ALLOW_LOCAL_SOURCES=true). A token in an https URL is stored sealed and never shown.',
  },
  branch: { type: 'string', minLength: 1, maxLength: 255, description: 'The branch followed (default `main`).' },
  path: {
    type: 'string',
    maxLength: 512,
    pattern: '^[A-Za-z0-9._/@+-]*$',
    description: 'The config directory inside the repository (default: its root). Written as Argo CD users write it: `.` and `./` are the root, `./prod/` is `prod` (returned without the dots); `..` segments and absolute paths are refused.',
  },
  auto_sync: { type: 'boolean', description: 'Apply what pushes and polls find (default true); false: they only plan and report out_of_sync, and a manual sync applies.' },
  prune: { type: 'boolean', description: 'Delete objects this repository made that its config no longer has (default true).' },
  self_heal: { type: 'boolean', description: 'Restore objects changed by hand when the periodic check finds drift (default false: report only).' },
  deny_weakening: { type: 'boolean', description: 'Refuse automatic syncs that weaken protection (a deleted rule, block → log…) until forced (default false).' },
  max_changes: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'Updates + replacements + deletions a sync may make regardless of size (default 5)…' },
  max_change_percent: { type: 'integer', minimum: 0, maximum: 100, description: '…and as a share of the objects the repository owns (default 25). Past both, the sync is refused until `POST …/sync?force=true`.' },
  impact_window: {
    type: ['string', 'null'],
    maxLength: 16,
    description:
      "How much recorded Shield traffic each sync's impact preview replays: a whole number of minutes, hours or days up to 90 days (`30m`, `6h`, `24h`, `7d`; default `24h`). Every change to an existing site's settings or rules is previewed, and the sync record's `impact` says what it would have done. `null`: no preview.",
  },
  max_new_blocks: {
    type: ['integer', 'null'],
    minimum: 0,
    maximum: 1_000_000_000_000,
    description:
      'Refuse a sync (result `refused`, until `POST …/sync?force=true`) whose plan would make any one site newly block more recorded requests than this, or whose impact could not be previewed. Needs `impact_window`. `null` (default): no gate.',
  },
  poll_interval_seconds: { type: 'integer', minimum: 5, maximum: 86_400, description: 'How often the repository is fetched and live state checked for drift (default 180, jittered ±10 %).' },
  credentials_ref: {
    type: ['string', 'null'],
    pattern: '^[A-Z0-9_]{1,64}$',
    description: 'Names git credentials the workers hold: the environment variable `AEGIS_GIT_CREDENTIAL_<NAME>` (`token` or `user:token`), sent to https URLs only.',
  },
  connection: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 64,
    description:
      'A source-control connection (`GET /api/v1/integrations`) whose token clones a private repository: `url` is then its HTTPS URL on that provider, without credentials. Not with `credentials_ref`; `null` stops using it.',
  },
} as const;

const webhookSecret = {
  type: 'string',
  minLength: 16,
  maxLength: 256,
  writeOnly: true,
  description: "The push webhook's secret (GitHub's HMAC secret, GitLab's token). Generated and returned once when not given; never shown again.",
} as const;

export const ConfigRepoCreate = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url'],
  properties: {
    ...settings,
    source: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: '^[A-Za-z0-9._/:@-]+$',
      description: 'The ownership source id written on every object this repository makes (default: the URL without scheme, with `/<path>` when a path is set). Unique in the organisation; fixed once created.',
    },
    webhook_secret: webhookSecret,
  },
} as const;

export const ConfigRepoUpdate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...settings, webhook_secret: webhookSecret },
} as const;

export const ConfigRepoResource = {
  type: 'object',
  required: ['livemode', 
    'id', 'name', 'url', 'branch', 'path', 'source', 'auto_sync', 'prune', 'self_heal', 'deny_weakening', 'max_changes', 'max_change_percent',
    'impact_window', 'max_new_blocks', 'poll_interval_seconds', 'credentials_ref', 'connection', 'webhook_secret_last4', 'api_key_id', 'status', 'status_message', 'last_synced_commit', 'last_synced_at',
    'last_checked_at', 'next_poll_at', 'created_at', 'updated_at',
  ],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string' },
    name: { type: 'string' },
    url: { type: 'string', description: 'Without credentials.' },
    branch: { type: 'string' },
    path: { type: 'string' },
    source: { type: 'string' },
    auto_sync: { type: 'boolean' },
    prune: { type: 'boolean' },
    self_heal: { type: 'boolean' },
    deny_weakening: { type: 'boolean' },
    max_changes: { type: 'integer' },
    max_change_percent: { type: 'integer' },
    impact_window: { type: ['string', 'null'], description: 'The window syncs preview their impact over; null: no preview.' },
    max_new_blocks: { type: ['integer', 'null'], description: 'Newly blocked requests per site past which a sync is refused; null: no gate.' },
    poll_interval_seconds: { type: 'integer' },
    credentials_ref: { type: ['string', 'null'] },
    connection: { type: ['string', 'null'], description: 'The source-control connection that clones the repository.' },
    webhook_secret_last4: { type: 'string' },
    api_key_id: { type: 'string', description: 'The API key syncs act with (listed under /api-keys; revoking it stops the syncs).' },
    status: {
      type: 'string',
      enum: REPO_STATUSES,
      description: '`synced`: live state matches the last synced commit. `out_of_sync`: changes are waiting (plan only, drift without self-heal, a refused sync). `error`: the last sync failed. `unknown`: not synced yet.',
    },
    status_message: { type: ['string', 'null'] },
    last_synced_commit: { type: ['string', 'null'] },
    last_synced_at: nullableTimestampSchema,
    last_checked_at: nullableTimestampSchema,
    next_poll_at: timestampSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const ConfigRepoCreated = {
  ...ConfigRepoResource,
  properties: { ...ConfigRepoResource.properties, webhook_secret: { type: 'string', description: 'Present only when the secret was generated; shown this once.' } },
} as const;

const count = { type: 'integer', minimum: 0 } as const;
const lines = { type: 'array', items: { type: 'string' } } as const;

export const SyncResource = {
  type: 'object',
  required: ['livemode', 'id', 'repo_id', 'trigger', 'status', 'result', 'failure_stage', 'forced', 'delivery_id', 'commit_sha', 'summary', 'changes', 'impact', 'errors', 'warnings', 'created_at', 'started_at', 'finished_at', 'duration_ms'],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string' },
    repo_id: { type: 'string' },
    trigger: { type: 'string', enum: SYNC_TRIGGERS },
    status: { type: 'string', enum: SYNC_STATUSES },
    result: {
      type: ['string', 'null'],
      enum: [...SYNC_RESULTS, null],
      description:
        '`applied`: the changes were made. `unchanged`: nothing to change. `planned`: changes found and left (auto_sync off, or drift without self-heal); a manual sync applies them. `refused`: held back by a threshold or the weakening rule; waits for `POST …/sync?force=true`. `failed`: see `failure_stage` and `errors`; nothing past the failing step was changed.',
    },
    failure_stage: { type: ['string', 'null'], enum: [...FAILURE_STAGES, null] },
    forced: { type: 'boolean' },
    delivery_id: { type: ['string', 'null'], description: 'The source-control delivery that triggered a push sync.' },
    commit_sha: { type: ['string', 'null'] },
    summary: {
      type: ['object', 'null'],
      properties: { create: count, update: count, replace: count, delete: count, unchanged: count, checksum: { type: ['string', 'null'] } },
    },
    changes: { ...lines, description: 'The planned changes, one line each (at most 200).' },
    impact: {
      ...lines,
      description:
        "The plan's impact on recorded traffic over the repository's `impact_window`, in words: each previewed change's line with its impact indented under it, the per-site totals, and a `note:` line where impact is unavailable. Empty when nothing was previewed (no changes to existing sites, previews off).",
    },
    errors: lines,
    warnings: lines,
    created_at: timestampSchema,
    started_at: nullableTimestampSchema,
    finished_at: nullableTimestampSchema,
    duration_ms: { type: ['integer', 'null'] },
  },
} as const;
