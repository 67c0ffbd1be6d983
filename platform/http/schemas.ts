// JSON Schema fragments every route shares: the error envelope, list envelopes and the paging query.
import type { JSONSchema } from 'json-schema-to-ts';

export const errorEnvelopeSchema = {
  type: 'object',
  description: 'Every error has this shape.',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', description: 'Stable, machine-readable error code such as `not_found` or `validation_failed`.' },
        message: { type: 'string', description: 'Human-readable explanation.' },
        details: { type: 'object', additionalProperties: true, description: 'Structured context, e.g. the failing fields.' },
      },
    },
  },
} as const satisfies JSONSchema;

export const timestampSchema = { type: 'string', format: 'date-time' } as const satisfies JSONSchema;
export const nullableTimestampSchema = { type: ['string', 'null'], format: 'date-time' } as const satisfies JSONSchema;

export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Page size (1–200, default 50).' },
  cursor: { type: 'string', minLength: 1, maxLength: 512, description: 'Opaque cursor from `pagination.next` of the previous page.' },
} as const satisfies Record<string, JSONSchema>;

/** A comma-separated filter value, as in `?severity=high,critical`. */
export const filterParam = (description: string) =>
  ({ type: 'string', minLength: 1, maxLength: 2000, description: `${description} Several values are comma-separated.` }) as const;

export function listResponseSchema<const Item extends JSONSchema>(item: Item) {
  return {
    type: 'object',
    required: ['data', 'pagination'],
    properties: {
      data: { type: 'array', items: item },
      pagination: {
        type: 'object',
        required: ['next'],
        properties: { next: { type: ['string', 'null'], description: 'Cursor of the next page; null on the last page.' } },
      },
    },
  } as const;
}
