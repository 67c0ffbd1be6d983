// JSON Schemas of the triage API (OpenAPI is generated from them): the triage a finding carries,
// the request that starts one, and the month's usage.
import type { JSONSchema } from 'json-schema-to-ts';
import { nullableTimestampSchema, timestampSchema } from '../../platform/http/schemas.ts';
import { ENGINE_REQUESTS } from './engine-choice.ts';
import { VERDICTS } from './types.ts';

const tokens = { type: 'integer', minimum: 0 } as const;

export const TriageAnswerSchema = {
  type: 'object',
  description: 'The structured verdict.',
  required: ['verdict', 'confidence', 'explanation', 'suggested_fix'],
  properties: {
    verdict: { type: 'string', enum: VERDICTS, description: 'Whether the finding is likely real, likely a false positive, or needs a person to look.' },
    confidence: { type: 'number', minimum: 0, maximum: 1, description: 'How sure the engine is of the verdict (0–1).' },
    explanation: { type: 'string', description: 'Why, in a few sentences.' },
    suggested_fix: {
      type: 'object',
      required: ['summary', 'patch'],
      properties: {
        summary: { type: 'string', description: 'What to change.' },
        patch: { type: ['string', 'null'], description: 'A unified diff against the file of a code finding, when the engine could write one.' },
      },
    },
  },
} as const satisfies JSONSchema;

export const TriageEngineSchema = {
  type: ['object', 'null'],
  description: 'Who answered: the customer’s provider and the model that replied, or `fallback` (Aegis’s bundled rules, no AI: model `aegis-rules-v1`). Null while pending.',
  required: ['provider', 'model', 'integration_id'],
  properties: {
    provider: { type: 'string', enum: ['openai', 'anthropic', 'fallback'] },
    model: { type: 'string' },
    integration_id: { type: ['string', 'null'], description: 'The AI connection used; null for the fallback.' },
  },
} as const satisfies JSONSchema;

const storedTriageProperties = {
  status: { type: 'string', enum: ['pending', 'completed', 'failed'], description: '`pending` while a job runs it; `completed` with `result`, or `failed` with `error`.' },
  requested_at: timestampSchema,
  requested_by: { type: ['string', 'null'], description: 'Who asked (null for automatic triage).' },
  trigger: { type: 'string', enum: ['manual', 'auto'], description: '`manual`: `POST …/triage`; `auto`: a new high or critical finding of an organisation with `auto_triage` on.' },
  completed_at: nullableTimestampSchema,
  engine: TriageEngineSchema,
  result: { ...TriageAnswerSchema, type: ['object', 'null'], description: 'The verdict; null until completed. It never changes the finding’s status: people decide.' },
  usage: {
    type: 'object',
    description: 'Tokens spent with the provider over all attempts (0 for the fallback).',
    required: ['input_tokens', 'output_tokens'],
    properties: { input_tokens: tokens, output_tokens: tokens },
  },
  attempts: { type: 'integer', minimum: 0, description: 'Model calls made: a malformed answer is asked for once more.' },
  redactions: { type: 'integer', minimum: 0, description: 'Secrets masked in what was sent to the provider.' },
  error: { type: ['string', 'null'], description: 'Why it failed.' },
  job_id: { type: ['string', 'null'] },
} as const;

const storedTriageRequired = ['status', 'requested_at', 'requested_by', 'trigger', 'completed_at', 'engine', 'result', 'usage', 'attempts', 'redactions', 'error', 'job_id'] as const;

/** `triage` on the vulnerability resource. */
export const StoredTriageSchema = {
  type: ['object', 'null'],
  description: 'The latest AI triage of this finding (`POST …/triage`), or null.',
  required: storedTriageRequired,
  properties: storedTriageProperties,
} as const satisfies JSONSchema;

export const TriageResource = {
  type: 'object',
  required: ['object', 'vulnerability_id', ...storedTriageRequired],
  properties: {
    object: { type: 'string', enum: ['triage'] },
    vulnerability_id: { type: 'string' },
    ...storedTriageProperties,
  },
} as const satisfies JSONSchema;

export const TriageRequestBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    engine: {
      type: 'string',
      enum: ENGINE_REQUESTS,
      description: '`auto` (default): the organisation’s active AI connection, else the bundled fallback; `fallback`: the bundled rules even with a connection.',
    },
  },
} as const satisfies JSONSchema;

export const TriageUsageResource = {
  type: 'object',
  required: ['object', 'month', 'engine', 'integration_id', 'tokens_used', 'token_budget', 'triages', 'fallback_triages', 'fallback_quota', 'resets_at'],
  properties: {
    object: { type: 'string', enum: ['triage_usage'] },
    month: { type: 'string', format: 'date', description: 'The first day of the month (UTC) the numbers count.' },
    engine: { type: 'string', enum: ['openai', 'anthropic', 'fallback'], description: 'What a triage requested now would run on.' },
    integration_id: { type: ['string', 'null'], description: 'The active AI connection triage uses, if any.' },
    tokens_used: { ...tokens, description: 'Tokens spent with AI providers this month.' },
    token_budget: { type: ['integer', 'null'], description: 'The connection’s monthly token budget; null without a connection.' },
    triages: { ...tokens, description: 'Triages completed by a provider’s model this month.' },
    fallback_triages: { ...tokens, description: 'Triages of the bundled fallback this month.' },
    fallback_quota: { type: ['integer', 'null'], description: 'Fallback triages per month without an AI connection; null with one (no quota then).' },
    resets_at: timestampSchema,
  },
} as const satisfies JSONSchema;
