// ValidateResourceConfig: the kind's Spec JSON Schema (compiled like the API's body validator, so
// a config Terraform accepts is one the API accepts) over the values known at validate time, plus
// the offline checks the API runs beyond the schema (RE2 patterns, IP rule values), which each kind's
// registry entry holds.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { compileStrict } from '../../schemas/validation.ts';
import { kindEntry } from '../../reconciler/kinds/index.ts';
import type { AttributePath, Diagnostic, TfObject, TfType } from '../framework/contract.ts';
import type { KindSchema } from './schema.ts';
import { apiJson, containsUnknown, parseJsonObject, type Json } from './values.ts';

const validators = new WeakMap<KindSchema, ValidateFunction>();

function validatorFor(kind: KindSchema): ValidateFunction {
  let validate = validators.get(kind);
  if (!validate) {
    // Without $id: the API's validator instance may already hold this $id (same process in tests),
    // and ajv refuses a second schema under one id.
    const { $id: _id, ...spec } = kind.definition.spec;
    validate = compileStrict(spec);
    validators.set(kind, validate);
  }
  return validate;
}

const pointerSteps = (pointer: string): (string | number)[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'));

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) return `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (error.keyword === 'required') return 'is required';
  return error.message ?? 'is invalid';
}

/**
 * The attribute path for a path inside the API object: attribute names inside objects (nested
 * attributes at any depth), list indexes as numbers, map keys as one step (the rest of the path:
 * a label key may contain `/`), JSON attributes as a whole. Steps that go further than Terraform
 * can address (inside a set) stop the path there.
 */
export function pathForField(kind: KindSchema, steps: (string | number)[]): AttributePath | undefined {
  const [field, ...rest] = steps;
  const mapping = kind.attributes.find((a) => a.configurable && !a.parent && a.field === field) ?? kind.attributes.find((a) => a.field === field);
  if (!mapping) return undefined;
  const path: AttributePath = [mapping.schema.name];
  if (mapping.json) return path;
  let type: TfType = mapping.schema.type;
  for (let i = 0; i < rest.length; i++) {
    const step = rest[i] as string | number;
    if (typeof type === 'string') break;
    const [shape, inner] = type;
    if (shape === 'map') {
      path.push(rest.slice(i).map(String).join('/'));
      break;
    }
    if (shape === 'list') {
      const index = Number(step);
      if (!Number.isInteger(index)) break;
      path.push(index);
      type = inner;
      continue;
    }
    if (shape === 'object') {
      const name = String(step);
      const attributeType = inner[name];
      if (attributeType === undefined) break;
      path.push(name);
      type = attributeType;
      continue;
    }
    break; // a set element has no index Terraform could point at
  }
  return path;
}

/** `labels.team`, `events[0]`, `managed_rules.exclusions[0].rules[1]` (the API's `details.fields` form) → attribute path. */
export function pathForApiField(kind: KindSchema, field: string): AttributePath | undefined {
  const match = /^([a-z0-9_]+)(.*)$/.exec(field);
  if (!match?.[1]) return undefined;
  const steps: (string | number)[] = [match[1]];
  let rest = match[2] ?? '';
  const mapping = kind.attributes.find((a) => a.field === match[1]);
  // A map key is everything after the dot (`labels.aegis.dev/name`).
  const isMap = mapping !== undefined && Array.isArray(mapping.schema.type) && mapping.schema.type[0] === 'map';
  while (rest.length > 0) {
    const index = /^\[(\d+)\]/.exec(rest);
    if (index?.[1]) {
      steps.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    if (!rest.startsWith('.')) break;
    if (isMap) {
      steps.push(rest.slice(1));
      break;
    }
    const name = /^\.([A-Za-z0-9_]+)/.exec(rest);
    if (!name?.[1]) break;
    steps.push(name[1]);
    rest = rest.slice(name[0].length);
  }
  return pathForField(kind, steps);
}

const error = (attribute: AttributePath, summary: string, detail: string): Diagnostic => ({ severity: 'error', summary, detail, attribute });

export function validateConfig(kind: KindSchema, config: TfObject): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const known: Record<string, Json> = {};
  const unknownFields = new Set<string>();
  for (const mapping of kind.attributes) {
    if (!mapping.configurable || mapping.parent) continue;
    const value = config[mapping.schema.name] ?? null;
    if (value === null) continue;
    if (containsUnknown(value)) {
      unknownFields.add(mapping.field);
      continue;
    }
    if (mapping.json && typeof value === 'string') {
      const parsed = parseJsonObject(value);
      if (!parsed.ok) {
        diagnostics.push(error([mapping.schema.name], `Invalid ${mapping.schema.name}`, `${mapping.schema.name} ${parsed.reason}`));
        unknownFields.add(mapping.field);
        continue;
      }
      known[mapping.field] = parsed.value;
      continue;
    }
    known[mapping.field] = apiJson(mapping, value);
  }

  const validate = validatorFor(kind);
  // The validator fills defaults in; give it a copy so `known` stays what the user wrote.
  if (!validate(structuredClone(known))) {
    for (const issue of validate.errors ?? []) {
      // A bad map key is reported twice (the key's own failure, then `propertyNames`): keep the first.
      if (issue.keyword === 'propertyNames') continue;
      const steps = pointerSteps(issue.instancePath);
      if (issue.propertyName !== undefined) steps.push(issue.propertyName);
      const missing = (issue.params as { missingProperty?: unknown }).missingProperty;
      if (issue.keyword === 'required' && typeof missing === 'string') {
        if (unknownFields.has(missing)) continue;
        steps.push(missing);
      }
      const attribute = pathForField(kind, steps) ?? [];
      const name = attribute.length ? String(attribute[0]) : kind.meta.terraformType;
      const what = issue.propertyName !== undefined ? `key ${JSON.stringify(issue.propertyName)} of ${name}` : steps.join('.') || name;
      diagnostics.push({ severity: 'error', summary: `Invalid ${name}`, detail: `${what} ${describe(issue)}`, ...(attribute.length ? { attribute } : {}) });
    }
  }
  diagnostics.push(...offlineChecks(kind, known));
  return diagnostics;
}

/** What the API checks beyond the JSON Schema that needs no server (the kind registry's offlineChecks), aimed at the attribute. */
function offlineChecks(kind: KindSchema, known: Record<string, Json>): Diagnostic[] {
  const checks = kindEntry(kind.kind).offlineChecks?.(known) ?? [];
  return checks.map(({ path, message }) => error([...path], `Invalid ${String(path[0])}`, message));
}
