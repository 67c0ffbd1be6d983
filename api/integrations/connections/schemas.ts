// JSON Schemas of the integrations API: the connection resource and its request bodies.
import type { JSONSchema } from 'json-schema-to-ts';
import { nullableTimestampSchema, timestampSchema } from '../../../platform/http/schemas.ts';

/** Providers connected with OAuth or a pasted token/API key (POST /api/v1/integrations/:provider/connect). */
export const PROVIDERS = ['github', 'gitlab', 'jira', 'linear', 'openai', 'anthropic'] as const;
/** Every provider a connection may be with: the above, and cloud accounts (POST /api/v1/integrations/aws/connect). */
export const ALL_PROVIDERS = [...PROVIDERS, 'aws'] as const;
export const KINDS = ['source_control', 'ticket_tracker', 'ai', 'cloud'] as const;

export const PullRequestSettings = {
  type: 'object',
  additionalProperties: false,
  description: 'Pull/merge-request checks of a source-control connection: which scans run on each pull request and from which severity a new finding fails the check.',
  properties: {
    enabled: { type: 'boolean', default: true },
    scan_types: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: ['secrets', 'sast', 'sca'] }, default: ['secrets', 'sast', 'sca'] },
    fail_on: { type: 'string', enum: ['critical', 'high', 'medium', 'low', 'info', 'none'], default: 'high', description: 'A new finding of this severity or above fails the check; `none`: the check never fails.' },
  },
} as const satisfies JSONSchema;

export const AiSettings = {
  type: 'object',
  additionalProperties: false,
  description: 'AI connections: the model triage uses, the organisation’s monthly token budget with this provider, and whether new high and critical findings are triaged automatically.',
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 200, description: 'Model (or Azure deployment) name. Default: gpt-4.1-mini (OpenAI-compatible), claude-sonnet-4-6 (Anthropic).' },
    monthly_token_budget: { type: 'integer', minimum: 1000, maximum: 1_000_000_000, description: 'Input and output tokens triage may spend per calendar month (UTC); triage is refused with 429 once spent. Default: AEGIS_AI_MONTHLY_TOKEN_BUDGET (1 000 000).' },
    auto_triage: { type: 'boolean', description: 'Triage every new high or critical finding as scans record it (default false).' },
  },
} as const satisfies JSONSchema;

export const DiscoverySettings = {
  type: 'object',
  additionalProperties: false,
  description: 'Cloud connections: where and how often attack-surface discovery runs.',
  properties: {
    regions: { type: 'array', minItems: 1, maxItems: 40, uniqueItems: true, items: { type: 'string', pattern: '^[a-z]{2}(-[a-z]+)+-\\d$' }, description: 'Regions of the regional services (load balancers, API Gateway, EC2). Default: us-east-1.' },
    interval_hours: { type: 'integer', minimum: 1, maximum: 168, description: 'Hours between scheduled discoveries (default 24).' },
  },
} as const satisfies JSONSchema;

export const IntegrationSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Settings by connection kind: `pull_requests` (source control), `ai` (AI providers), `discovery` (cloud accounts).',
  properties: { pull_requests: PullRequestSettings, ai: AiSettings, discovery: DiscoverySettings },
} as const satisfies JSONSchema;

/** The settings sections a kind of connection takes. */
export const SETTINGS_BY_KIND: Readonly<Record<(typeof KINDS)[number], readonly string[]>> = {
  source_control: ['pull_requests'],
  ticket_tracker: [],
  ai: ['ai'],
  cloud: ['discovery'],
};

export const IntegrationResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'kind', 'provider', 'auth_type', 'status', 'error', 'account', 'scopes', 'connected_by', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['integration'] },
    livemode: { type: 'boolean' },
    kind: { type: 'string', enum: KINDS },
    provider: { type: 'string', enum: ALL_PROVIDERS },
    auth_type: { type: 'string', enum: ['oauth', 'token', 'role'], description: '`oauth`: connected through the provider’s authorization page; `token`: a pasted personal access token or API key; `role`: a cloud role Aegis assumes (with the organisation’s external id).' },
    status: { type: 'string', enum: ['pending', 'active', 'error'], description: '`pending` until the OAuth callback completes; `error` when the provider refused the credential (`error` says why): connect again.' },
    error: { type: ['string', 'null'] },
    account: { type: ['string', 'null'], description: 'The account the credential belongs to: a login, a Jira site, a Linear workspace, an AI provider’s endpoint, an AWS account.' },
    account_id: { type: ['string', 'null'] },
    scopes: { type: 'array', items: { type: 'string' }, description: 'Scopes the provider granted.' },
    api_base_url: { type: ['string', 'null'] },
    metadata: { type: 'object', additionalProperties: true, description: 'Provider specifics that are not secret (Jira cloud id and site).' },
    settings: IntegrationSettingsSchema,
    webhook_url: { type: ['string', 'null'], description: 'Where the provider should send its webhooks for this connection (pull requests, ticket changes). The secret that signs them is shown once, in the connect answer.' },
    token_expires_at: nullableTimestampSchema,
    connected_by: { type: ['string', 'null'] },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const satisfies JSONSchema;
