// Checks the stand-in against GitHub's published OpenAPI description (@octokit/openapi): request
// bodies and queries of the operations served, compiled with ajv once per process, and the webhook
// payloads the stand-in sends. Module-level because the description is large and never changes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import type { Json } from './context.ts';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = formats.default;

export interface Operation {
  method: string;
  /** The documented path template, e.g. /repos/{owner}/{repo}/issues. */
  template: string;
  pattern: RegExp;
  body: ValidateFunction | null;
  bodyRequired: boolean;
  query: ValidateFunction | null;
}

/** The operations served, by method and documented path. */
const SERVED: [string, string][] = [
  ['GET', '/user'],
  ['POST', '/repos/{owner}/{repo}/check-runs'],
  ['PATCH', '/repos/{owner}/{repo}/check-runs/{check_run_id}'],
  ['GET', '/repos/{owner}/{repo}/issues'],
  ['POST', '/repos/{owner}/{repo}/issues'],
  ['GET', '/repos/{owner}/{repo}/issues/{issue_number}'],
  ['PATCH', '/repos/{owner}/{repo}/issues/{issue_number}'],
  ['POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments'],
  ['PATCH', '/repos/{owner}/{repo}/issues/comments/{comment_id}'],
  ['POST', '/repos/{owner}/{repo}/statuses/{sha}'],
  ['DELETE', '/applications/{client_id}/grant'],
  ['DELETE', '/applications/{client_id}/token'],
];

let compiled: Operation[] | null = null;

/**
 * OpenAPI 3.0 schema → JSON Schema for ajv: internal $refs inlined (the served operations' schemas
 * are not recursive; a cycle would be cut to `{}`), `nullable: true` turned into "or null".
 */
function toJsonSchema(doc: Json, node: unknown, refs: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(doc, n, refs));
  if (typeof node !== 'object' || node === null) return node;
  const source = node as Json;
  if (typeof source.$ref === 'string') {
    const ref = source.$ref;
    if (!ref.startsWith('#/') || refs.includes(ref)) return {};
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return toJsonSchema(doc, target, [...refs, ref]);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'nullable' || key === 'example' || key === 'examples' || key === 'description' || key === 'discriminator') continue;
    out[key] = key === 'properties' || key === 'patternProperties' ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, toJsonSchema(doc, v, refs)])) : toJsonSchema(doc, value, refs);
  }
  return source.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

let description: Json | null = null;
function openapi(): Json {
  const require = createRequire(import.meta.url);
  description ??= JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as Json;
  return description;
}

const webhookSchemas = new Map<string, ValidateFunction>();

/**
 * Throws unless `payload` matches the documented schema of the `event` webhook with its action
 * (components.schemas.webhook-<event>-<action>): the stand-in's own deliveries are checked too.
 */
export function checkWebhookPayload(event: string, payload: Json): void {
  const name = `webhook-${event.replace(/_/g, '-')}-${String(payload.action).replace(/_/g, '-')}`;
  let validate = webhookSchemas.get(name);
  if (!validate) {
    const doc = openapi();
    const schema = ((doc.components as Json).schemas as Json)[name];
    if (!schema) throw new Error(`GitHub documents no ${name} payload`);
    const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
    addFormats(ajv);
    validate = ajv.compile(toJsonSchema(doc, schema) as object);
    webhookSchemas.set(name, validate);
  }
  if (!validate(payload)) throw new Error(`the stand-in's ${name} payload does not match GitHub's description: ${describeErrors(validate.errors?.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'allOf' && e.keyword !== 'oneOf'))}`);
}

/** The served operations with their validators, compiled on first use. */
export function operations(): Operation[] {
  if (compiled) return compiled;
  const doc = openapi();
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  // Query strings are text: integers and booleans are read from it as GitHub reads them.
  const queryAjv = new Ajv({ strict: false, allErrors: true, logger: false, coerceTypes: true });
  addFormats(queryAjv);
  compiled = SERVED.map(([method, template]) => {
    const op = paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`the OpenAPI description has no ${method} ${template}`);
    const requestBody = toJsonSchema(doc, op.requestBody) as { required?: boolean; content?: Record<string, { schema?: unknown }> } | undefined;
    const bodySchema = requestBody?.content?.['application/json']?.schema;
    const params = ((toJsonSchema(doc, op.parameters) as Json[] | undefined) ?? []).filter((p) => p.in === 'query');
    const query = params.length > 0
      ? queryAjv.compile({
          type: 'object',
          properties: Object.fromEntries(params.map((p) => [p.name as string, p.schema ?? {}])),
          required: params.filter((p) => p.required === true).map((p) => p.name as string),
          additionalProperties: false,
        })
      : null;
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`);
    return { method, template, pattern, body: bodySchema ? ajv.compile(bodySchema as object) : null, bodyRequired: requestBody?.required === true, query };
  });
  return compiled;
}

export const describeErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
