// Response and request shapes of the scans API (OpenAPI via the route schemas).
import { SCAN_TYPES } from '../../schemas/index.ts';
import { nullableTimestampSchema, timestampSchema } from '../../platform/http/schemas.ts';
import { livemodeSchema } from '../../schemas/common.ts';
import { StoredTriageSchema } from '../ai/schemas.ts';

export const SCAN_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

const count = { type: 'integer', minimum: 0 } as const;
const severityCounts = {
  type: 'object',
  description: 'Distinct findings of the scan by severity, and `total`; empty until the scan completes.',
  properties: { critical: count, high: count, medium: count, low: count, info: count, total: count },
} as const;

export const ScanResource = {
  type: 'object',
  required: ['livemode', 'id', 'scan_type', 'status', 'target', 'source', 'config', 'schedule_id', 'progress', 'summary', 'error', 'created_at', 'started_at', 'finished_at', 'duration_ms'],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string' },
    scan_type: { type: 'string', enum: SCAN_TYPES },
    status: { type: 'string', enum: SCAN_STATUSES, description: '`queued → running → completed | failed | canceled`.' },
    target: { type: 'string', description: 'What was scanned, normalised: a repository URL without credentials, or `archive:<sha256>`. Scans of one target are compared with each other.' },
    source: {
      type: 'object',
      additionalProperties: true,
      description: '`{kind: git, url, ref, commit}` (URL without credentials) or `{kind: archive, format, sha256, bytes}`.',
    },
    config: { type: 'object', additionalProperties: true },
    schedule_id: { type: ['string', 'null'] },
    progress: { type: 'number', minimum: 0, maximum: 1 },
    summary: severityCounts,
    error: { type: ['string', 'null'], description: 'Why the scan failed.' },
    created_at: timestampSchema,
    started_at: nullableTimestampSchema,
    finished_at: nullableTimestampSchema,
    duration_ms: { type: ['integer', 'null'] },
  },
} as const;

/** The JSON body of POST /sast|sca|secrets/scans: the same `target` and `config` a schedule carries. */
export const CodeScanBody = {
  type: 'object',
  additionalProperties: false,
  required: ['target'],
  properties: {
    target: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description: 'Git repository to clone: https, ssh, git or scp-like `git@host:owner/repo.git`; `file://` URLs and local paths only when the server runs with `AEGIS_ALLOW_LOCAL_SOURCES=true`.',
    },
    config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ref: { type: 'string', minLength: 1, maxLength: 255, description: 'Branch, tag or commit; the default branch when left out.' },
        history: { type: 'boolean', description: 'Secrets scans: also scan the git history (every commit reachable from the ref).' },
      },
    },
    connection: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'A source-control connection (`GET /api/v1/integrations`) whose token clones a private repository: `target` is then its HTTPS URL on that provider, without credentials.',
    },
  },
} as const;

export const VulnerabilityResource = {
  type: 'object',
  required: ['livemode', 
    'id', 'scan_type', 'target', 'rule_id', 'title', 'severity', 'cwe', 'location', 'evidence', 'details', 'status', 'resolution', 'false_positive', 'notes',
    'first_scan_id', 'last_scan_id', 'first_seen_at', 'last_seen_at', 'fixed_at', 'verification', 'virtual_patch', 'created_at', 'updated_at',
  ],
  properties: {
    livemode: livemodeSchema,
    id: { type: 'string' },
    scan_type: { type: 'string', enum: SCAN_TYPES },
    target: { type: 'string' },
    rule_id: { type: 'string', description: 'Rule or advisory that found it.' },
    title: { type: 'string' },
    severity: { type: 'string', enum: SEVERITIES },
    cwe: { type: ['string', 'null'] },
    location: { type: 'object', additionalProperties: true, description: '`{kind: file, path, line, …}`, `{kind: package, path, ecosystem, name, version}` or, for URL scans, `{kind: url, url, method, parameter}`.' },
    evidence: { type: 'string', description: 'Code or package around the problem; secrets appear redacted.' },
    details: { type: 'object', additionalProperties: true },
    status: { type: 'string', enum: ['open', 'acknowledged', 'resolved', 'accepted_risk'] },
    resolution: {
      type: ['string', 'null'],
      enum: ['fixed', 'verified', 'manual', null],
      description: 'For `resolved`: `fixed` when a later scan of the target no longer found it, `verified` when a verify-fix re-run of its check no longer reproduced it.',
    },
    false_positive: { type: 'boolean' },
    notes: { type: 'string' },
    first_scan_id: { type: 'string' },
    last_scan_id: { type: 'string', description: 'The latest scan that found it.' },
    first_seen_at: timestampSchema,
    last_seen_at: timestampSchema,
    fixed_at: nullableTimestampSchema,
    verification: {
      type: ['object', 'null'],
      description: 'The latest verify-fix (`POST …/verify`): `queued → running → reproduced | not_reproduced | error`, with what the re-run saw.',
      required: ['status', 'job_id', 'requested_at', 'finished_at', 'evidence', 'error'],
      properties: {
        status: { type: 'string', enum: ['queued', 'running', 'reproduced', 'not_reproduced', 'error'] },
        job_id: { type: 'string' },
        requested_at: timestampSchema,
        finished_at: nullableTimestampSchema,
        evidence: { type: ['string', 'null'] },
        error: { type: ['string', 'null'] },
      },
    },
    virtual_patch: {
      type: ['object', 'null'],
      description: 'The Shield virtual patch made from this finding (`POST …/virtual-patch`); with `auto_remove` it is deleted when a verification finds the problem fixed.',
      required: ['id', 'auto_remove'],
      properties: { id: { type: 'string' }, auto_remove: { type: 'boolean' } },
    },
    ticket: {
      type: ['object', 'null'],
      description: 'The ticket made from this finding in a connected tracker (`POST …/ticket`), or null. Shown by the vulnerabilities API; events leave it out.',
      required: ['provider', 'key', 'url', 'state'],
      properties: {
        provider: { type: 'string' },
        key: { type: ['string', 'null'], description: 'PROJ-12, owner/repo#12, ENG-12; null while it is being created.' },
        url: { type: ['string', 'null'] },
        state: { type: 'string', enum: ['creating', 'open', 'closed', 'failed'] },
      },
    },
    triage: { ...StoredTriageSchema, description: 'The latest AI triage of this finding (`POST …/triage`), or null: a verdict, never a status change. Shown by the vulnerabilities API; events leave it out.' },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

const skippedFile = {
  type: 'object',
  additionalProperties: false,
  required: ['path', 'reason'],
  properties: { path: { type: 'string' }, reason: { type: 'string', description: '`excluded`, `unsupported`, `unreadable`, `too_large`, …' } },
} as const;

/** GET /api/v1/scans/:id/coverage: files for code scans, requests and items for URL scans. */
export const ScanCoverageResource = {
  type: 'object',
  required: ['scan_id', 'status', 'notes', 'complete'],
  properties: {
    scan_id: { type: 'string' },
    status: { type: 'string', enum: SCAN_STATUSES },
    files_scanned: { ...count, description: 'Code scans: files read.' },
    bytes_scanned: { ...count, description: 'Code scans: bytes read.' },
    skipped: { type: 'array', items: skippedFile, description: 'Code scans: files not scanned, with the reason (at most a bounded number are reported).' },
    skipped_by_type: {
      type: 'array',
      description: 'Code scans (secrets, SAST): `skipped` counted by file type and reason, most files first.',
      items: { type: 'object', additionalProperties: false, required: ['type', 'reason', 'files'], properties: { type: { type: 'string' }, reason: { type: 'string' }, files: count } },
    },
    requests: { ...count, description: 'URL scans: requests sent.' },
    items: { ...count, description: 'URL scans: pages, operations or templates covered.' },
    notes: { type: 'array', items: { type: 'string' }, description: 'What limited the scan.' },
    complete: { type: 'boolean', description: 'Whether the scan completed (the figures are final).' },
  },
} as const;

/** GET /api/v1/scans/:id/diff: findings by fingerprint against the baseline. */
export const ScanDiffResource = {
  type: 'object',
  required: ['scan_id', 'baseline_id', 'counts', 'new', 'fixed', 'unchanged'],
  properties: {
    scan_id: { type: 'string' },
    baseline_id: { type: ['string', 'null'], description: 'The scan compared with; null when there is none (every finding is new).' },
    counts: { type: 'object', additionalProperties: false, required: ['new', 'fixed', 'unchanged'], properties: { new: count, fixed: count, unchanged: count } },
    new: { type: 'array', items: VulnerabilityResource, description: 'Seen by this scan, not by the baseline.' },
    fixed: { type: 'array', items: VulnerabilityResource, description: 'Seen by the baseline, not by this scan.' },
    unchanged: { type: 'array', items: VulnerabilityResource, description: 'Seen by both.' },
  },
} as const;
