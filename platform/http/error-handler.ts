// Every error leaves the server in the specification's envelope, whether a route threw it or the
// framework did (malformed JSON, wrong content type, oversize body, schema validation, no route).
import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { ApiError, codeForStatus, type ErrorCode, type ErrorDetails } from './errors.ts';

interface Envelope {
  error: { code: ErrorCode; message: string; details: ErrorDetails };
}

const envelope = (code: ErrorCode, message: string, details: ErrorDetails = {}): Envelope => ({ error: { code, message, details } });

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

/** Ajv issues as the envelope's `details.fields` (a field is '' when the issue is about the whole value). */
export function fieldProblems(issues: readonly ValidationIssue[]): { field: string; message: string }[] {
  return issues.map((issue) => ({ field: fieldOf(issue), message: describe(issue) }));
}

/** `/scopes/0` + params → `scopes[0]`; a missing required property names itself. */
function fieldOf(issue: ValidationIssue): string {
  const base = issue.instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')
    .replace(/^\./, '');
  const params = issue.params as Record<string, unknown>;
  const extra = typeof params.missingProperty === 'string' ? params.missingProperty : typeof params.additionalProperty === 'string' ? params.additionalProperty : undefined;
  if (extra === undefined) return base;
  return base ? `${base}.${extra}` : extra;
}

function describe(issue: ValidationIssue): string {
  const params = issue.params as Record<string, unknown>;
  if (issue.keyword === 'additionalProperties') return 'is not a known field';
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'enum' && Array.isArray(params.allowedValues)) return `must be one of ${params.allowedValues.join(', ')}`;
  return issue.message ?? 'is invalid';
}

/** Maps an error to status + envelope. Exported for the rare place that must answer outside a route. */
export function toEnvelope(error: FastifyError | ApiError | Error): { status: number; body: Envelope } {
  if (error instanceof ApiError) return { status: error.statusCode, body: envelope(error.code, error.message, error.details) };
  const err = error as FastifyError & { code?: string };
  if (err.validation) {
    const inBody = err.validationContext === 'body';
    const fields = fieldProblems(err.validation).map(({ field, message }) => ({ field: field || err.validationContext || 'request', message }));
    const summary = fields.map((f) => `${f.field} ${f.message}`).join('; ');
    return inBody
      ? { status: 422, body: envelope('validation_failed', `request body is invalid: ${summary}`, { fields }) }
      : { status: 400, body: envelope('invalid_request', `${err.validationContext ?? 'request'} is invalid: ${summary}`, { fields }) };
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: envelope('invalid_request', err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'request body is empty but the content type is JSON' : 'request body is not valid JSON') };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: envelope('payload_too_large', 'request body is too large') };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return err.statusCode === 415
        ? { status: 415, body: envelope('unsupported_media_type', `content type is not supported here`) }
        : { status: 400, body: envelope('invalid_request', err.message) };
    case 'FST_ERR_BAD_URL':
      return { status: 400, body: envelope('invalid_request', 'the request path is not valid percent-encoded UTF-8') };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, body: envelope('uri_too_long', 'a path parameter is too long') };
    case 'FST_ERR_CTP_INVALID_TYPE':
      return { status: 400, body: envelope('invalid_request', err.message) };
    // Backstop for the edge check (input-guard.ts): PostgreSQL refusing text it cannot store is bad input, not a fault.
    case '22021': // character_not_in_repertoire (NUL)
    case '22P05': // untranslatable_character
      return { status: 400, body: envelope('invalid_request', 'the request contains a character that cannot be stored (NUL or an unpaired surrogate)') };
    case '23505': // unique_violation from PostgreSQL: a uniqueness rule the route did not pre-check
      return { status: 409, body: envelope('conflict', 'an object with the same identity already exists') };
  }
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  if (status === 500) return { status, body: envelope('internal', 'internal error; the request id identifies it in the server log') };
  return { status, body: envelope(codeForStatus[status] ?? 'invalid_request', err.message) };
}

const errorHandlerPlugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((error, request, reply) => {
    const { status, body } = toEnvelope(error as Error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: body.error.code, status }, 'request rejected');
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(envelope('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
};

export default fp(errorHandlerPlugin, { name: 'aegis-errors' });
