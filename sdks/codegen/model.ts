// The language-neutral model of the API that the three SDK emitters render: every operation the
// served OpenAPI document names (`operationId` = `<resource>.<method>`, api/operation-ids.ts)
// and every object schema it uses, each given one type name. The document writes all its schemas
// inline, so names are chosen here:
//
//  - the object an operation returns is named by its `x-aegis-model` (the item, for a list);
//  - a JSON request body is `<Resource><Method>Params`, the resource in the singular
//    (`ShieldSiteCreateParams`, `VulnerabilityCreateTicketParams`);
//  - query parameters are `<Resource><Method>Query`; an answer the table does not name, or whose
//    model name another shape already took, `<Resource><Method>Response`; a page `…Page`, its
//    `pagination` object `Pagination`;
//  - an object nested in a field is `<Parent><Field>` (singular for array items);
//  - structurally equal objects (descriptions aside) share the first name given, models first
//    (each model's shape is claimed before any walk); request bodies keep their own names.
//
// Emitters never read the OpenAPI document themselves: what they need is here, so the three SDKs
// agree on names, optionality and pagination.
import { pascalCase, singular } from './names.ts';

export type TypeRef =
  | { kind: 'string'; format?: string; enum?: readonly string[] }
  | { kind: 'integer' }
  | { kind: 'number' }
  | { kind: 'boolean' }
  | { kind: 'null' }
  | { kind: 'unknown' }
  | { kind: 'array'; items: TypeRef }
  /** An object whose keys are data (`additionalProperties` only). */
  | { kind: 'map'; values: TypeRef }
  /** An object type of `SdkModel.types`. */
  | { kind: 'named'; name: string }
  /** Any of these; `T | null` is a union with `{ kind: 'null' }` (see `splitNullable`). */
  | { kind: 'union'; variants: readonly TypeRef[] };

export interface Field {
  /** The JSON property name, as sent on the wire. */
  name: string;
  type: TypeRef;
  required: boolean;
  description?: string;
  /** Set by the server; present in answers, ignored in requests. */
  readOnly?: boolean;
  /** Sent in requests only; never in answers. */
  writeOnly?: boolean;
  default?: unknown;
}

export interface NamedType {
  name: string;
  description?: string;
  fields: Field[];
  /** Extra properties the object may carry beyond `fields` (`additionalProperties`), if any. */
  additional?: TypeRef;
}

export interface Param {
  /** As sent: the path placeholder, query key or header name. */
  name: string;
  type: TypeRef;
  required: boolean;
  description?: string;
  default?: unknown;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestBody {
  required: boolean;
  description?: string;
  /** The JSON form, if the operation takes one. */
  json?: TypeRef;
  /**
   * Non-JSON forms (a CSV file, an OpenAPI document, a source archive), sent as raw bytes or text
   * with one of these content types. With `json` as well, the caller picks one form per call.
   */
  raw?: { contentTypes: string[]; description?: string };
}

export interface ResponseShape {
  status: number;
  /**
   * `json`: a JSON body of `type`; `empty`: no body (204); `sse`: a text/event-stream whose
   * `decision`-style events carry `type` as JSON; `document`: JSON of no fixed schema (SARIF).
   */
  kind: 'json' | 'empty' | 'sse' | 'document';
  type?: TypeRef;
}

export interface Operation {
  /** `shieldSites.list`. */
  id: string;
  /** `shieldSites`: the client namespace. */
  resource: string;
  /** `list`: the method in that namespace. */
  name: string;
  httpMethod: HttpMethod;
  /** `/api/v1/shield/sites/{id}/ip-access`. */
  path: string;
  summary?: string;
  description?: string;
  /** The API-key scope the operation needs, if any beyond being signed in. */
  scope?: string;
  /** In the order they appear in the path. */
  pathParams: Param[];
  query: Param[];
  /** The name a type of all query parameters may take (`IpAccessRuleListQuery`). */
  queryTypeName: string;
  headers: Param[];
  body?: RequestBody;
  response: ResponseShape;
  /** Lists paged by cursor: `{ data: item[], pagination: { next } }`, and a `cursor` parameter. */
  pagination?: { item: TypeRef };
  /** POST, PUT, PATCH and DELETE: they carry an Idempotency-Key. */
  mutating: boolean;
  /** The model named by the operation table, if any. */
  model?: string;
}

export interface Resource {
  /** `shieldSites`. */
  name: string;
  operations: Operation[];
}

export interface SdkModel {
  title: string;
  /** The API version the document states. */
  version: string;
  description?: string;
  resources: Resource[];
  /** Every named object type, in a stable order (by name). */
  types: NamedType[];
}

/** `T | null` → `{ type: T, nullable: true }`; anything else unchanged. */
export function splitNullable(type: TypeRef): { type: TypeRef; nullable: boolean } {
  if (type.kind !== 'union' || !type.variants.some((v) => v.kind === 'null')) return { type, nullable: false };
  const rest = type.variants.filter((v) => v.kind !== 'null');
  return { type: rest.length === 1 ? rest[0]! : { kind: 'union', variants: rest }, nullable: true };
}

// ---------------------------------------------------------------------------------------------
// Building the model from the document

type Schema = Record<string, unknown>;
interface OpenApiOperation {
  operationId?: string;
  'x-aegis-model'?: string;
  'x-aegis-sdk'?: boolean;
  'x-required-scope'?: string;
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Schema }[];
  requestBody?: { required?: boolean; description?: string; content: Record<string, { schema?: Schema }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema?: Schema; 'x-aegis-event-schema'?: Schema }> }>;
}
export interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
}

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const asSchema = (value: unknown): Schema | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : undefined);

/** A schema with its descriptions, examples and validation bounds removed: what makes two objects "the same type". */
function shapeKey(schema: unknown): string {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as Schema).sort()) {
      if (['description', 'example', 'examples', 'title', 'default', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minItems', 'maxItems', 'uniqueItems', 'maxProperties', 'minProperties', 'propertyNames'].includes(key)) continue;
      out[key] = strip((value as Schema)[key]);
    }
    return out;
  };
  return JSON.stringify(strip(schema));
}

class TypeNamer {
  readonly types = new Map<string, NamedType>();
  private readonly byShape = new Map<string, string>();
  /** Model names claimed for shapes before any walk, so a model met nested elsewhere first keeps its name. */
  private readonly reserved = new Map<string, string>();

  /** Claims `name` for `schema`'s shape (first claim wins). */
  reserve(schema: Schema | undefined, name: string): void {
    if (!schema || schema.type !== 'object') return;
    const key = shapeKey(schema);
    if (!this.reserved.has(key) && ![...this.reserved.values()].includes(name)) this.reserved.set(key, name);
  }

  /**
   * The TypeRef of `schema`; objects with properties become named types, called `name` if still
   * free, else `fallback` if given and free, else `name` numbered.
   */
  ref(schema: Schema | undefined, name: string, fallback?: string, distinct = false): TypeRef {
    if (!schema) return { kind: 'unknown' };
    if ('const' in schema) return typeof schema.const === 'string' ? { kind: 'string', enum: [schema.const] } : { kind: 'unknown' };
    const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(variants)) {
      const refs = variants.map((v, i) => this.ref(v, variants.length > 1 ? `${name}${variantSuffix(v, i)}` : name));
      return unionOf(refs);
    }
    const type = schema.type;
    if (Array.isArray(type)) {
      if (type.length === 0) return { kind: 'unknown' };
      return unionOf(type.map((t) => this.ref({ ...schema, type: t }, name)));
    }
    switch (type) {
      case 'string': {
        const enumValues = Array.isArray(schema.enum) ? (schema.enum as unknown[]).filter((v): v is string => typeof v === 'string') : undefined;
        return { kind: 'string', ...(typeof schema.format === 'string' ? { format: schema.format } : {}), ...(enumValues?.length ? { enum: enumValues } : {}) };
      }
      case 'integer':
        return { kind: 'integer' };
      case 'number':
        return { kind: 'number' };
      case 'boolean':
        return { kind: 'boolean' };
      case 'null':
        return { kind: 'null' };
      case 'array':
        return { kind: 'array', items: this.ref(asSchema(schema.items), name) };
      case 'object':
        return this.object(schema, name, fallback, distinct);
      default:
        return { kind: 'unknown' };
    }
  }

  private object(schema: Schema, name: string, fallback?: string, distinct = false): TypeRef {
    const properties = asSchema(schema.properties);
    const additional = schema.additionalProperties;
    if (!properties || Object.keys(properties).length === 0) {
      if (additional === false) return { kind: 'map', values: { kind: 'unknown' } };
      return { kind: 'map', values: additional && typeof additional === 'object' ? this.ref(additional as Schema, `${name}Value`) : { kind: 'unknown' } };
    }
    const key = shapeKey(schema);
    const known = distinct ? undefined : this.byShape.get(key);
    if (known) return { kind: 'named', name: known };
    const claimed = distinct ? undefined : this.reserved.get(key);
    const wanted = claimed ?? name;
    const unique = this.types.has(wanted) && fallback ? this.freeName(fallback) : this.freeName(wanted);
    if (!distinct) this.byShape.set(key, unique);
    // Registered before its fields are named, so a recursive shape refers to itself.
    const named: NamedType = { name: unique, fields: [], ...(typeof schema.description === 'string' ? { description: schema.description } : {}) };
    this.types.set(unique, named);
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const [field, value] of Object.entries(properties)) {
      const fieldSchema = asSchema(value) ?? {};
      const isArray = fieldSchema.type === 'array' || (Array.isArray(fieldSchema.type) && fieldSchema.type.includes('array'));
      const nested = `${unique}${pascalCase(isArray ? singular(field) : field)}`;
      named.fields.push({
        name: field,
        type: this.ref(fieldSchema, nested),
        required: required.has(field),
        ...(typeof fieldSchema.description === 'string' ? { description: fieldSchema.description } : {}),
        ...(fieldSchema.readOnly === true ? { readOnly: true } : {}),
        ...(fieldSchema.writeOnly === true ? { writeOnly: true } : {}),
        ...('default' in fieldSchema ? { default: fieldSchema.default } : {}),
      });
    }
    if (additional && typeof additional === 'object') named.additional = this.ref(additional as Schema, `${unique}Value`);
    else if (additional === true) named.additional = { kind: 'unknown' };
    return { kind: 'named', name: unique };
  }

  private freeName(name: string): string {
    if (!this.types.has(name)) return name;
    for (let i = 2; ; i++) if (!this.types.has(`${name}${i}`)) return `${name}${i}`;
  }
}

function unionOf(refs: TypeRef[]): TypeRef {
  const flat: TypeRef[] = [];
  for (const ref of refs) for (const v of ref.kind === 'union' ? ref.variants : [ref]) if (!flat.some((f) => JSON.stringify(f) === JSON.stringify(v))) flat.push(v);
  return flat.length === 1 ? flat[0]! : { kind: 'union', variants: flat };
}

/** A variant named by the value its discriminating property is fixed to, else by position. */
function variantSuffix(variant: Schema, index: number): string {
  const properties = asSchema(variant.properties) ?? {};
  for (const value of Object.values(properties)) {
    const p = asSchema(value);
    if (!p) continue;
    if (typeof p.const === 'string') return pascalCase(p.const);
    if (Array.isArray(p.enum) && p.enum.length === 1 && typeof p.enum[0] === 'string') return pascalCase(p.enum[0]);
  }
  return `Option${index + 1}`;
}

function paramsOf(operation: OpenApiOperation, where: string, namer: TypeNamer, base: string): Param[] {
  return (operation.parameters ?? [])
    .filter((p) => p.in === where)
    .map((p) => ({
      name: p.name,
      type: namer.ref(p.schema, `${base}${pascalCase(p.name)}`),
      required: p.required === true,
      ...(p.description ? { description: p.description } : {}),
      ...(p.schema && 'default' in p.schema ? { default: p.schema.default } : {}),
    }));
}

function successOf(operation: OpenApiOperation): { status: number; content?: Record<string, { schema?: Schema; 'x-aegis-event-schema'?: Schema }> } {
  const statuses = Object.keys(operation.responses).filter((s) => /^2\d\d$/.test(s)).sort();
  const status = statuses[0] ?? '200';
  return { status: Number(status), content: operation.responses[status]?.content };
}

/** A cursor-paged list: `{ data: [...], pagination: {...} }` answering a request with `cursor`. */
function pagedItemSchema(operation: OpenApiOperation, schema: Schema | undefined): Schema | undefined {
  if (!(operation.parameters ?? []).some((p) => p.in === 'query' && p.name === 'cursor')) return undefined;
  const properties = asSchema(schema?.properties);
  const data = asSchema(properties?.data);
  if (!data || data.type !== 'array' || !asSchema(properties?.pagination)) return undefined;
  return asSchema(data.items);
}

/** Operations that claim their model's name first: a get names `ShieldSite`, not a create that answers a variant of it. */
const CLAIM_ORDER = ['get', 'list'];
const claimRank = (name: string) => (CLAIM_ORDER.includes(name) ? CLAIM_ORDER.indexOf(name) : CLAIM_ORDER.length);

export function buildModel(document: OpenApiDocument): SdkModel {
  const namer = new TypeNamer();
  const entries: { path: string; method: HttpMethod; op: OpenApiOperation; resource: string; name: string }[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = operations[method.toLowerCase()];
      if (!op || op['x-aegis-sdk'] === false) continue;
      if (!op.operationId) throw new Error(`${method} ${path} has no operationId: name it in api/operation-ids.ts`);
      const [resource, name] = op.operationId.split('.') as [string, string];
      entries.push({ path, method, op, resource, name });
    }
  }
  entries.sort((a, b) => a.resource.localeCompare(b.resource) || a.name.localeCompare(b.name));

  // Models first (gets before lists before the rest), so their names are never taken by a request
  // body or a nested object that happens to share a shape: each model's shape is claimed before
  // anything is walked (the overview nests recent scans, yet they are `Scan`s).
  const byClaim = [...entries].sort((a, b) => claimRank(a.name) - claimRank(b.name));
  for (const { op } of byClaim) {
    const model = op['x-aegis-model'];
    const schema = successOf(op).content?.['application/json']?.schema;
    if (model && schema) namer.reserve(pagedItemSchema(op, schema) ?? schema, model);
  }
  const responses = new Map<string, { response: ResponseShape; pagination?: { item: TypeRef } }>();
  for (const entry of byClaim) {
    const { op, resource, name } = entry;
    const { status, content } = successOf(op);
    const base = baseName(resource, name);
    const fallback = `${base}Response`;
    let result: { response: ResponseShape; pagination?: { item: TypeRef } };
    if (content?.['text/event-stream']) {
      // The events' JSON schema rides in an extension (OpenAPI 3.1 has no `itemSchema`).
      const eventSchema = content['text/event-stream']['x-aegis-event-schema'];
      result = { response: { status, kind: 'sse', type: namer.ref(eventSchema, op['x-aegis-model'] ?? fallback, fallback) } };
    } else if (content?.['application/json']) {
      const schema = content['application/json'].schema;
      const item = pagedItemSchema(op, schema);
      if (item) {
        const itemRef = namer.ref(item, op['x-aegis-model'] ?? `${base}Item`, `${base}Item`);
        namer.ref(asSchema(asSchema(schema?.properties)?.pagination), 'Pagination');
        result = { response: { status, kind: 'json', type: namer.ref(schema, `${base}Page`) }, pagination: { item: itemRef } };
      } else {
        result = { response: { status, kind: 'json', type: namer.ref(schema, op['x-aegis-model'] ?? fallback, fallback) } };
      }
    } else if (status === 204) {
      result = { response: { status, kind: 'empty' } };
    } else {
      result = { response: { status, kind: 'document' } };
    }
    responses.set(`${entry.method} ${entry.path}`, result);
  }

  const byResource = new Map<string, Operation[]>();
  for (const { path, method, op, resource, name } of entries) {
    const model = op['x-aegis-model'];
    const base = baseName(resource, name);
    const { response, pagination } = responses.get(`${method} ${path}`)!;
    let body: RequestBody | undefined;
    if (op.requestBody) {
      const types = Object.keys(op.requestBody.content);
      const jsonType = types.find((t) => t === 'application/json');
      const raw = types.filter((t) => t !== 'application/json');
      const rawDescription = raw.map((t) => op.requestBody!.content[t]?.schema?.description).find((d): d is string => typeof d === 'string');
      body = {
        required: op.requestBody.required === true,
        ...(op.requestBody.description ? { description: op.requestBody.description } : {}),
        // Each operation's body keeps its own name even when another has the same shape: the
        // secrets scan takes `ScanCreateSecretsParams`, not the SAST scan's.
        ...(jsonType ? { json: namer.ref(op.requestBody.content[jsonType]!.schema, `${base}Params`, undefined, true) } : {}),
        ...(raw.length ? { raw: { contentTypes: raw, ...(rawDescription ? { description: rawDescription } : {}) } } : {}),
      };
    }
    const operation: Operation = {
      id: `${resource}.${name}`,
      resource,
      name,
      httpMethod: method,
      path,
      ...(op.summary ? { summary: op.summary } : {}),
      ...(op.description ? { description: op.description } : {}),
      ...(op['x-required-scope'] ? { scope: op['x-required-scope'] } : {}),
      pathParams: orderByPath(path, paramsOf(op, 'path', namer, base)),
      query: paramsOf(op, 'query', namer, `${base}Query`),
      queryTypeName: `${base}Query`,
      headers: paramsOf(op, 'header', namer, base),
      ...(body ? { body } : {}),
      response,
      ...(pagination ? { pagination } : {}),
      mutating: method !== 'GET',
      ...(model ? { model } : {}),
    };
    const list = byResource.get(resource) ?? [];
    list.push(operation);
    byResource.set(resource, list);
  }

  return {
    title: document.info.title,
    version: document.info.version,
    ...(document.info.description ? { description: document.info.description } : {}),
    resources: [...byResource.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, operations]) => ({ name, operations })),
    types: [...namer.types.values()].sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** `shieldSites` + `create` → `ShieldSiteCreate`. */
const baseName = (resource: string, name: string): string => `${singular(pascalCase(resource))}${pascalCase(name)}`;

function orderByPath(path: string, params: Param[]): Param[] {
  const order = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return [...params].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
}
