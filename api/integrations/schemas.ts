// JSON Schemas of the integrations API: the connection resource and its request bodies.
import type { JSONSchema } from 'json-schema-to-ts';
import { nullableTimestampSchema, timestampSchema } from '../http/schemas.ts';

export const PROVIDERS = ['github', 'gitlab', 'jira', 'linear'] as const;

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

export const IntegrationSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { pull_requests: PullRequestSettings },
} as const satisfies JSONSchema;

export const IntegrationResource = {
  type: 'object',
  required: ['id', 'object', 'livemode', 'kind', 'provider', 'auth_type', 'status', 'error', 'account', 'scopes', 'connected_by', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['integration'] },
    livemode: { type: 'boolean' },
    kind: { type: 'string', enum: ['source_control', 'ticket_tracker'] },
    provider: { type: 'string', enum: PROVIDERS },
    auth_type: { type: 'string', enum: ['oauth', 'token'], description: '`oauth`: connected through the provider’s authorization page; `token`: a pasted personal access token or API key.' },
    status: { type: 'string', enum: ['pending', 'active', 'error'], description: '`pending` until the OAuth callback completes; `error` when the provider refused the credential (`error` says why): connect again.' },
    error: { type: ['string', 'null'] },
    account: { type: ['string', 'null'], description: 'The account the credential belongs to: a login, a Jira site, a Linear workspace.' },
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
