// Validating response bodies against the document's JSON schemas with ajv. OpenAPI 3.0 schemas
// are turned into the JSON Schema they mean (`nullable`, boolean exclusive bounds) and 3.1 ones
// run on the 2020-12 dialect. Properties marked writeOnly are not required in responses.
//
// Patterns from the document (`pattern`, `patternProperties`) run on RE2 (compileUserRegex), never
// on JS RegExp: a hostile document must not make a response body stall the scanner. A pattern RE2
// cannot compile (lookaround, backreference) is not enforced and is listed in `unenforced`.
import type { CodeOptions, ErrorObject, Options, ValidateFunction } from 'ajv';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { compileUserRegex } from '../../schemas/checks/regex.ts';
import { numericExclusiveBounds } from '../../schemas/openapi/document.ts';
import { errorMessage, isObject, type JsonObject } from '../../schemas/json-value.ts';
import { deref } from '../../schemas/openapi/refs.ts';
import type { SchemaBundle } from './document.ts';

export type Dialect = '3.0' | '3.1';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = formats.default;

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/** Key under which the bundle's schema sits in the root registered with ajv. */
const SCHEMA_KEY = 'x-aegis-schema';
const MAX_ERRORS = 3;
/** Keywords whose values are data, not schemas: left as they are. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'enum', 'const']);
/** Keywords (and document sections) whose values map names to schemas. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'schemas']);

export type Validation = { ok: true } | { ok: false; errors: string[] } | { ok: 'uncompilable'; reason: string };

function describe(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'body' : error.instancePath;
  const extra = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
  return `${where} ${error.message ?? error.keyword}${extra}`;
}

/** The bundle as one JSON Schema document for ajv (a modified copy; the bundle is untouched). */
function prepare(bundle: SchemaBundle, dialect: Dialect): JsonObject {
  const root: JsonObject = structuredClone({ ...bundle.referenced, [SCHEMA_KEY]: bundle.schema });
  const seen = new Set<object>();
  const isWriteOnly = (schema: unknown): boolean => {
    const target = deref(root, schema);
    return isObject(target) && target.writeOnly === true;
  };
  // `inMap`: the node's keys are names (properties, $defs…), not keywords, so none is skipped.
  const walk = (node: unknown, inMap = false): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (inMap) {
      for (const value of Object.values(node)) walk(value);
      return;
    }
    const schema = node as JsonObject;
    if (dialect === '3.0') {
      if (schema.nullable === true) {
        if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
        if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
      }
      if (typeof schema.nullable === 'boolean') delete schema.nullable;
      numericExclusiveBounds(schema);
    }
    if (Array.isArray(schema.required) && isObject(schema.properties)) {
      const properties = schema.properties;
      schema.required = schema.required.filter((name) => typeof name !== 'string' || !isWriteOnly(properties[name]));
    }
    for (const [key, value] of Object.entries(schema)) {
      if (DATA_KEYWORDS.has(key)) continue;
      walk(value, NAME_MAPS.has(key));
    }
  };
  walk(root, true);
  return root;
}

export class SchemaValidator {
  /** Patterns the document gives that RE2 refused: not enforced. */
  readonly unenforced = new Set<string>();
  private readonly instances = new Map<Dialect, Ajv | Ajv2020>();
  private readonly compiled = new Map<string, ValidateFunction | string>();
  private counter = 0;

  private ajv(dialect: Dialect): Ajv | Ajv2020 {
    let ajv = this.instances.get(dialect);
    if (!ajv) {
      const regExp: RegExpEngine = Object.assign(
        (pattern: string) => {
          const compiled = compileUserRegex(pattern);
          if (compiled.ok) return compiled.compiled;
          this.unenforced.add(pattern);
          return { test: (): boolean => true };
        },
        { code: 'aegisRe2' },
      );
      const options: Options = {
        strict: false, // OpenAPI schemas carry `example`, `xml`, `discriminator`, `x-…`
        validateSchema: false, // the document was validated when uploaded
        allErrors: true,
        validateFormats: true,
        logger: false, // unknown formats (int64, binary) are normal in OpenAPI documents
        code: { regExp },
      };
      ajv = dialect === '3.0' ? new Ajv(options) : new Ajv2020(options);
      addFormats(ajv);
      this.instances.set(dialect, ajv);
    }
    return ajv;
  }

  /**
   * Validates `data`; `cacheKey` names the schema when it is used again (scan-wide), and a bundle
   * given as a function is only built when the key is not compiled yet.
   */
  validate(bundle: SchemaBundle | (() => SchemaBundle), dialect: Dialect, data: unknown, cacheKey?: string): Validation {
    let fn = cacheKey ? this.compiled.get(cacheKey) : undefined;
    if (fn === undefined) {
      const ajv = this.ajv(dialect);
      const id = `https://api-scan.aegis.invalid/schema/${(this.counter += 1)}`;
      try {
        ajv.addSchema(prepare(typeof bundle === 'function' ? bundle() : bundle, dialect), id);
        fn = ajv.compile({ $ref: `${id}#/${SCHEMA_KEY}` });
      } catch (error) {
        fn = `the schema cannot be compiled: ${errorMessage(error)}`;
      }
      if (cacheKey) this.compiled.set(cacheKey, fn);
    }
    if (typeof fn === 'string') return { ok: 'uncompilable', reason: fn };
    if (fn(data)) return { ok: true };
    return { ok: false, errors: (fn.errors ?? []).slice(0, MAX_ERRORS).map(describe) };
  }
}
