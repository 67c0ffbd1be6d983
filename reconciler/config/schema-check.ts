// Runs the JSON Schemas over parsed config and turns ajv's errors into issues a person can act on:
// one issue per mistake, each with the path of the offending value and where in the source to
// point (the key for an unknown field, the enclosing mapping for a missing one, the value otherwise).
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { Kind } from '../model.ts';
import { apiSpecSchema, configDocumentSchema, terraformAttributesSchema, type JsonSchema } from './envelope-schema.ts';
import { validatorFor, type Flavour } from './validators.ts';

export type PathSegment = string | number;

/** Which node of the source an issue points at. */
export type Anchor = 'key' | 'value' | 'container';

export interface SchemaIssue {
  /** Path of the node to point at (for `key`: the key's own path). */
  path: PathSegment[];
  anchor: Anchor;
  message: string;
}

let documentValidator: ValidateFunction | undefined;
const terraformValidators = new Map<Kind, ValidateFunction>();
const specDefaulters = new Map<Kind, ValidateFunction>();

function cached(cache: Map<Kind, ValidateFunction>, kind: Kind, flavour: Flavour, schema: () => JsonSchema): ValidateFunction {
  let validate = cache.get(kind);
  if (!validate) {
    validate = validatorFor(flavour, schema());
    cache.set(kind, validate);
  }
  return validate;
}

/** `spec.virtual_patches[0].action`, `spec.labels["aegis.dev/x"]`. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

function parsePointer(pointer: string): PathSegment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^(0|[1-9]\d*)$/.test(token) ? Number(token) : token;
    });
}

const prefixed = (path: readonly PathSegment[], message: string): string => (path.length ? `${formatPath(path)}: ${message}` : message);

/** The fields a `oneOf` of `{required: [x]}` branches chooses between, if that is its shape. */
function choiceFields(schema: unknown): string[] | null {
  if (!Array.isArray(schema)) return null;
  const fields: string[] = [];
  for (const branch of schema as unknown[]) {
    const required = (branch as { required?: unknown }).required;
    if (!Array.isArray(required) || required.length !== 1 || typeof required[0] !== 'string') return null;
    fields.push(required[0]);
  }
  return fields;
}

/** The choice a secret reference offers (kinds/secret-reference.ts). */
const isSecretChoice = (fields: readonly string[] | null): boolean => fields !== null && fields.length === 2 && fields[0] === 'env' && fields[1] === 'file';
const isSecretBranch = (schema: unknown): boolean => {
  const required = (schema as { required?: unknown } | undefined)?.required;
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return Array.isArray(required) && required.length === 1 && (required[0] === 'env' || required[0] === 'file') && Object.keys(properties ?? {}).length === 1;
};

const PLAINTEXT_SECRET =
  'must not hold the secret itself (config files are committed and shown in reviews): name where it is, { env: NAME } for an environment variable or { file: PATH } for a file inside the config directory';

const orList = (items: readonly string[]): string => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`);

function toIssue(error: ErrorObject, base: readonly PathSegment[]): SchemaIssue | null {
  const path = [...base, ...parsePointer(error.instancePath)];
  // Inside a branch of a secret reference's `oneOf` (`{ env }` / `{ file }`): the `oneOf` says what is wrong.
  if (/\/oneOf\/\d+\/[^/]+$/.test(error.schemaPath) && isSecretBranch(error.parentSchema)) return null;
  switch (error.keyword) {
    case 'if':
      // Bookkeeping of the per-kind dispatch: the `then` branch reported the real errors.
      return null;
    case 'propertyNames':
      // Reported by the failing sub-keyword, which names the property.
      return null;
    case 'required': {
      const missing = String((error.params as { missingProperty: string }).missingProperty);
      // Inside a oneOf branch a missing field is one option, not a requirement; the oneOf says what is wanted.
      if (/\/oneOf\/\d+\//.test(error.schemaPath)) return null;
      return { path, anchor: 'container', message: prefixed([...path, missing], 'is required') };
    }
    case 'additionalProperties': {
      const extra = String((error.params as { additionalProperty: string }).additionalProperty);
      return { path: [...path, extra], anchor: 'key', message: prefixed([...path, extra], 'unknown field') };
    }
    case 'oneOf': {
      const fields = choiceFields(error.schema);
      if (!fields) return { path, anchor: 'container', message: prefixed(path, error.message ?? 'is invalid') };
      if (isSecretChoice(fields)) {
        const message = typeof error.data === 'string' ? PLAINTEXT_SECRET : 'must be { env: NAME } or { file: PATH }';
        return { path, anchor: 'value', message: prefixed(path, message) };
      }
      const passing = (error.params as { passingSchemas: number[] | null }).passingSchemas;
      const message = passing ? `give only one of ${orList(fields)}` : `one of ${orList(fields)} is required`;
      return { path, anchor: 'container', message: prefixed(path, message) };
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map(String);
      return { path, anchor: 'value', message: prefixed(path, `must be one of ${allowed.join(', ')}`) };
    }
    case 'const':
      return { path, anchor: 'value', message: prefixed(path, `must be ${String((error.params as { allowedValue: unknown }).allowedValue)}`) };
    default: {
      // A propertyNames sub-keyword (`pattern` on label keys) carries the offending key.
      const propertyName = (error as ErrorObject & { propertyName?: string }).propertyName;
      if (propertyName !== undefined) {
        return { path: [...path, propertyName], anchor: 'key', message: prefixed(path, `key ${JSON.stringify(propertyName)} ${error.message ?? 'is invalid'}`) };
      }
      return { path, anchor: 'value', message: prefixed(path, error.message ?? 'is invalid') };
    }
  }
}

function issuesOf(validate: ValidateFunction, value: unknown, base: readonly PathSegment[]): SchemaIssue[] {
  if (validate(value)) return [];
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    const issue = toIssue(error, base);
    // The same mistake can surface through two schema paths; report it once.
    const key = issue ? `${issue.anchor}|${issue.message}` : '';
    if (issue && !seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues;
}

/** Problems with one config document (`{ apiVersion, kind, metadata, spec }`). Does not change it. */
export function checkConfigDocument(value: unknown): SchemaIssue[] {
  documentValidator ??= validatorFor('checking', configDocumentSchema);
  return issuesOf(documentValidator, value, []);
}

/** Problems with the attributes of a Terraform resource; paths start at `base`. */
export function checkTerraformAttributes(kind: Kind, attributes: unknown, base: readonly PathSegment[]): SchemaIssue[] {
  return issuesOf(cached(terraformValidators, kind, 'checking', () => terraformAttributesSchema(kind)), attributes, base);
}

/**
 * Fills the schema defaults of the kind's API spec into `spec` (in place) and returns what still
 * does not fit the API's own schema. Run on the flattened spec, so the config and the API agree.
 */
export function applySpecDefaults(kind: Kind, spec: Record<string, unknown>, base: readonly PathSegment[] = []): SchemaIssue[] {
  return issuesOf(cached(specDefaulters, kind, 'defaulting', () => apiSpecSchema(kind)), spec, base);
}
