// The triage answer's JSON Schema and its validator. TRIAGE_SCHEMA is what providers are given to
// constrain the model's output (OpenAI structured outputs in strict mode, Anthropic tool input), so
// it keeps to the subset strict mode accepts: every property required, additionalProperties false
// everywhere, no numeric or length bounds. What a model sends back is then checked against a
// stricter copy that adds those bounds — a provider that ignores the schema cannot slip past it.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { VERDICTS, type TriageAnswer } from './types.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export const MAX_EXPLANATION_CHARS = 4000;
export const MAX_PATCH_CHARS = 20_000;
/** Summaries are prose of a few sentences; bounded so a runaway answer is refused, not stored. */
export const MAX_SUMMARY_CHARS = 4000;

/** Strict-mode JSON Schema of TriageAnswer (every property required, no additional properties). */
export const TRIAGE_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: [...VERDICTS], description: 'likely_true_positive, likely_false_positive or needs_review' },
    confidence: { type: 'number', description: 'How sure the verdict is, from 0 to 1' },
    explanation: { type: 'string', description: 'Why, in a few sentences a developer can act on' },
    suggested_fix: {
      type: 'object',
      properties: {
        summary: { type: 'string', description: 'What to change, in prose' },
        patch: { type: ['string', 'null'], description: 'A unified diff against the shown file, or null' },
      },
      required: ['summary', 'patch'],
      additionalProperties: false,
    },
  },
  required: ['verdict', 'confidence', 'explanation', 'suggested_fix'],
  additionalProperties: false,
};

/** TRIAGE_SCHEMA with the bounds strict mode cannot carry. */
function stricterSchema(): Record<string, unknown> {
  const copy = structuredClone(TRIAGE_SCHEMA) as {
    properties: Record<string, Record<string, unknown>> & { suggested_fix: { properties: Record<string, Record<string, unknown>> } };
  };
  Object.assign(copy.properties.confidence!, { minimum: 0, maximum: 1 });
  Object.assign(copy.properties.explanation!, { minLength: 1, maxLength: MAX_EXPLANATION_CHARS });
  Object.assign(copy.properties.suggested_fix.properties.summary!, { maxLength: MAX_SUMMARY_CHARS });
  Object.assign(copy.properties.suggested_fix.properties.patch!, { maxLength: MAX_PATCH_CHARS });
  return copy as unknown as Record<string, unknown>;
}

let validate: ValidateFunction<TriageAnswer> | undefined;
function validator(): ValidateFunction<TriageAnswer> {
  validate ??= new Ajv({ allErrors: false, strict: true, allowUnionTypes: true }).compile<TriageAnswer>(stricterSchema());
  return validate;
}

/** One short sentence for the first schema error: which field, what is wrong. */
function describe(error: ErrorObject): string {
  const field = error.instancePath === '' ? 'the answer' : error.instancePath.slice(1).replace(/\//g, '.');
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${field === 'the answer' ? '' : `${field}: `}missing field "${String(p.missingProperty)}"`;
    case 'additionalProperties':
      return `${field === 'the answer' ? '' : `${field}: `}unexpected field "${String(p.additionalProperty)}"`;
    case 'enum':
      return `${field} must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      return `${field} must be ${String(p.type).replace(',', ' or ')}`;
    case 'minimum':
    case 'maximum':
      return `${field} must be between 0 and 1`;
    case 'minLength':
      return `${field} must not be empty`;
    case 'maxLength':
      return `${field} is longer than ${String(p.limit)} characters`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

/** The JSON text of an answer: whitespace and one Markdown code fence (```json … ```) taken off. */
function unfence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('```') || !trimmed.endsWith('```') || trimmed.length < 6) return trimmed;
  const firstBreak = trimmed.indexOf('\n');
  // the opening fence's line may only name a language
  if (firstBreak < 0 || !/^```[A-Za-z0-9_-]*\s*$/.test(trimmed.slice(0, firstBreak))) return trimmed;
  return trimmed.slice(firstBreak + 1, -3).trim();
}

/** Parses and validates a model's answer. */
export function parseTriageAnswer(text: string): { ok: true; answer: TriageAnswer } | { ok: false; error: string } {
  const body = unfence(text);
  if (body === '') return { ok: false, error: 'the answer is empty' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    return { ok: false, error: `the answer is not JSON: ${errorMessage(err)}`.slice(0, 200) };
  }
  const check = validator();
  if (!check(value)) {
    const first = check.errors?.[0];
    return { ok: false, error: first ? `the answer does not fit the schema: ${describe(first)}` : 'the answer does not fit the schema' };
  }
  return { ok: true, answer: value };
}
