// Request bodies of the URL scans (spec 4.7, 4.8): DAST, API and CVE-targeted. What they share —
// scope, limits, authentication — has one shape in all three (and in a schedule's `config`).
import type { ScanPolicy } from '../../../scanners/web/policy.ts';

const headerMap = { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 8192 } } as const;

export const scopeSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Where the scan may send requests. Default: the target\'s host, every path.',
  properties: {
    hosts: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 260, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' }, description: '`host` or `host:port`; must include the target\'s.' },
    path_prefixes: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 512, pattern: '^/' } },
    resolve: {
      type: 'object',
      maxProperties: 20,
      additionalProperties: { type: 'string', minLength: 2, maxLength: 45 },
      description: "Host name → IP address to connect to instead of DNS (curl's `--resolve`): scan a staging server under the production name. The address policy applies to these addresses too.",
    },
  },
} as const;

/** Shared by the three bodies. */
export const commonScanProperties = {
  scope: scopeSchema,
  max_requests: { type: 'integer', minimum: 1, maximum: 100_000, description: 'Requests the scan may send in total (default 2 000).' },
  requests_per_second: { type: 'number', minimum: 0.1, maximum: 200, description: 'Pace of the scan (default 20).' },
  auth: {
    type: 'object',
    additionalProperties: false,
    description: 'Sent with every request (except the checks of what answers without it). Stored sealed; never shown again.',
    properties: { headers: headerMap, cookies: headerMap },
  },
  policy: {
    type: 'object',
    maxProperties: 200,
    additionalProperties: { type: 'string', enum: ['warn', 'fail', 'ignore'] },
    description: 'Per rule id: `ignore` (not run, not reported), `warn` or `fail` (marks the finding; `failed_policy` in the summary counts `fail`s).',
  },
} as const;

const targetUrl = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'An http(s) URL.' } as const;

export const DastScanBody = {
  type: 'object',
  additionalProperties: false,
  required: ['target'],
  properties: {
    target: { ...targetUrl, description: 'Where the crawl starts.' },
    max_depth: { type: 'integer', minimum: 0, maximum: 10, description: 'Links followed from the start page (default 3).' },
    ...commonScanProperties,
  },
} as const;

export const ApiScanBody = {
  type: 'object',
  additionalProperties: false,
  required: ['base_url'],
  properties: {
    base_url: { ...targetUrl, description: 'Where the API answers; operation paths are appended to it.' },
    document: {
      description: 'The OpenAPI 3.x document: an object, or its JSON or YAML text (at most 5 MiB). Exactly one of `document` and `document_url`.',
      anyOf: [{ type: 'object', additionalProperties: true }, { type: 'string', minLength: 1, maxLength: 5 * 1024 * 1024 }],
    },
    document_url: { ...targetUrl, description: 'Where the scan fetches the document (same address policy as the scan).' },
    ...commonScanProperties,
  },
} as const;

export const CveScanBody = {
  type: 'object',
  additionalProperties: false,
  required: ['target'],
  properties: {
    target: targetUrl,
    cves: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', pattern: '^CVE-\\d{4}-\\d{4,}$' } },
    tags: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' } },
    ...commonScanProperties,
  },
} as const;

export interface CommonScanInput {
  scope?: { hosts?: string[]; path_prefixes?: string[]; resolve?: Record<string, string> };
  max_requests?: number;
  requests_per_second?: number;
  auth?: { headers?: Record<string, string>; cookies?: Record<string, string> };
  policy?: ScanPolicy;
}
