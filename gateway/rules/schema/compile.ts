// Compiling a document into an enforcer: ajv validators for every operation's parameters and JSON
// request bodies, at two strictness variants, and its routes in the trie. Everything is compiled
// once per document version (cached by hash); compiling yields to the event loop now and then.
//
// User patterns (`pattern`, `patternProperties`) run on RE2 so that a hostile schema or input
// cannot stall the event loop; a pattern RE2 cannot compile (lookaround, backreference) is not
// enforced and is reported in `warnings`.
import type { AnySchemaObject, CodeOptions, Options, ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import RE2 from 're2';
import { errorMessage, isObject, type JsonObject } from '../../../schemas/json-value.ts';
import { listOperations } from '../../../schemas/openapi/document.ts';
import { pointerToken } from '../../../schemas/openapi/refs.ts';
import { deref, prepareDocument, readDocument } from './document.ts';
import { valueAtPointer } from '../../../schemas/openapi/refs.ts';
import { CompiledEnforcer } from './enforcer.ts';
import { clip, LOCATIONS, type CompiledBody, type CompiledOperation, type CompiledParam, type LocationParams, type MediaBody, type ParamLocation, type SchemaEnforcer, type Variant } from './model.ts';
import { shapeOf } from './params.ts';
import { serverBasePaths, templateSegments, type Route } from './paths.ts';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = formats.default;

type AjvInstance = Ajv2019 | Ajv2020;

/** Base URIs under which the two prepared copies of the document are registered with ajv. */
const DOC_URI: Record<Variant, string> = {
  standard: 'https://openapi.aegis.invalid/standard',
  strict: 'https://openapi.aegis.invalid/strict',
};
/** Header parameters the specification says to ignore (described elsewhere in the document). */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
/** Compilation yields to the event loop this often, so a large document does not stall requests. */
const COMPILE_SLICE_MS = 10;

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/** RE2 for every pattern in the document; a pattern RE2 refuses is reported and not enforced. */
function re2Engine(warn: (message: string) => void): RegExpEngine {
  const engine = (pattern: string, flags: string) => {
    try {
      return new RE2(pattern, flags);
    } catch (error) {
      warn(`pattern ${JSON.stringify(clip(pattern))} is not enforced: RE2 cannot compile it (${errorMessage(error)})`);
      return { test: (): boolean => true, toString: (): string => `unenforced:${pattern}` };
    }
  };
  return Object.assign(engine, { code: 'aegisRe2' });
}

function makeAjv(openapi30: boolean, coerce: boolean, regExp: RegExpEngine): AjvInstance {
  const options: Options = {
    strict: false, // OpenAPI schemas carry `example`, `xml`, `discriminator`, `x-…`
    validateSchema: false, // the document was validated on upload; `$schema` values need no meta-schema
    validateFormats: true,
    allErrors: false, // the first error decides; cheaper
    coerceTypes: coerce ? 'array' : false,
    useDefaults: false, // never change what is forwarded
    logger: false, // unknown formats are normal in OpenAPI documents; not worth a log line per site
    code: { regExp },
  };
  // 3.0 schemas (draft-04/07 style once prepared) run on the 2019-09 class: draft-07's keywords
  // plus `unevaluatedProperties`, which the draft-07 class lacks.
  const ajv = openapi30 ? new Ajv2019(options) : new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

const isJsonRange = (range: string): boolean => range === 'application/json' || range.endsWith('+json') || range === 'application/*' || range === '*/*';

class Compiler {
  readonly enforcer = new CompiledEnforcer();
  private readonly ajv: { body: AjvInstance; params: AjvInstance };
  private sliceStart = performance.now();
  private readonly strictCopy: JsonObject;
  private readonly declaresProperties: (schema: unknown) => boolean;

  constructor(
    private readonly document: JsonObject,
    openapi30: boolean,
  ) {
    const regExp = re2Engine((message) => this.warn(message));
    const strictCopy = structuredClone(document);
    prepareDocument(document, openapi30, 'standard');
    this.strictCopy = strictCopy;
    this.declaresProperties = prepareDocument(strictCopy, openapi30, 'strict');
    // Bodies are JSON and keep their types; parameters arrive as text and are coerced.
    this.ajv = { body: makeAjv(openapi30, false, regExp), params: makeAjv(openapi30, true, regExp) };
    for (const ajv of Object.values(this.ajv)) {
      ajv.addSchema(document, DOC_URI.standard);
      ajv.addSchema(strictCopy, DOC_URI.strict);
    }
  }

  private warn(message: string): void {
    if (!this.enforcer.warnings.includes(message)) this.enforcer.warnings.push(message);
  }

  /** Lets pending requests run when compiling has held the thread for a while. */
  private async breathe(): Promise<void> {
    if (performance.now() - this.sliceStart < COMPILE_SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  /** Both variants of a validator whose root refers into the document; null where it fails. */
  private compile(kind: 'body' | 'params', build: (variant: Variant) => AnySchemaObject, what: string): Record<Variant, ValidateFunction | null> {
    const result: Record<Variant, ValidateFunction | null> = { standard: null, strict: null };
    for (const variant of ['standard', 'strict'] as const) {
      try {
        result[variant] = this.ajv[kind].compile(build(variant));
      } catch (error) {
        this.warn(`${what} is not validated: ${errorMessage(error)}`);
      }
    }
    return result;
  }

  /** A reference to the schema at `pointer`, closed at the root in the strict variant. */
  private rootSchema(pointer: string, variant: Variant): AnySchemaObject {
    const ref = { $ref: `${DOC_URI[variant]}#${pointer.split('/').map(encodeURIComponent).join('/')}` };
    if (variant !== 'strict' || !this.declaresProperties(valueAtPointer(this.strictCopy, pointer))) return ref;
    return { allOf: [ref], unevaluatedProperties: false };
  }

  async build(): Promise<CompiledEnforcer> {
    const paths = isObject(this.document.paths) ? this.document.paths : {};
    const rootBases = serverBasePaths(this.document.servers, (m) => this.warn(m));
    const routes = new Map<string, Route[]>();
    for (const { method, path, operation_id } of listOperations(this.document)) {
      await this.breathe();
      const item = paths[path];
      if (!isObject(item)) continue;
      const itemPointer = `/paths/${pointerToken(path)}`;
      const target = deref(this.document, item, itemPointer);
      const lower = method.toLowerCase();
      const source = isObject(item[lower]) ? { value: item, pointer: itemPointer } : target;
      if (!source || !isObject(source.value[lower])) continue;
      let pathRoutes = routes.get(path);
      if (!pathRoutes) {
        const bases = target?.value.servers !== undefined ? serverBasePaths(target.value.servers, (m) => this.warn(m)) : rootBases;
        try {
          pathRoutes = bases.map((base) => this.enforcer.routes.add(templateSegments(`${base}${path.startsWith('/') ? '' : '/'}${path}`)));
        } catch (error) {
          this.warn(`path ${JSON.stringify(clip(path))} is not enforced: ${errorMessage(error)}`);
          pathRoutes = [];
        }
        routes.set(path, pathRoutes);
      }
      const compiled = this.operation(method, path, operation_id, source.value[lower] as JsonObject, `${source.pointer}/${lower}`, target);
      for (const route of pathRoutes) if (!route.operations.has(method)) route.operations.set(method, compiled);
    }
    return this.enforcer;
  }

  private operation(method: string, path: string, operationId: string | null, operation: JsonObject, pointer: string, item: { value: JsonObject; pointer: string } | null): CompiledOperation {
    const label = operationId ?? `${method} ${path}`;
    // Operation parameters override path-level ones with the same name and location.
    const declared = new Map<string, { value: JsonObject; pointer: string }>();
    const collect = (list: unknown, at: string) => {
      if (!Array.isArray(list)) return;
      list.forEach((entry, i) => {
        const param = deref(this.document, entry, `${at}/${i}`);
        if (param && typeof param.value.name === 'string' && typeof param.value.in === 'string') declared.set(`${param.value.in}:${param.value.name}`, param);
      });
    };
    if (item) collect(item.value.parameters, `${item.pointer}/parameters`);
    collect(operation.parameters, `${pointer}/parameters`);

    const params: Record<ParamLocation, LocationParams | null> = { path: null, query: null, header: null, cookie: null };
    const queryNames = new Set<string>();
    const deepObjectPrefixes: string[] = [];
    let spreadsQuery = false;
    for (const location of LOCATIONS) {
      const entries: { param: CompiledParam; schemaPointer: string | null; required: boolean }[] = [];
      for (const { value, pointer: at } of declared.values()) {
        if (value.in !== location) continue;
        const name = value.name as string;
        if (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
        let schemaPointer: string | null = isObject(value.schema) || typeof value.schema === 'boolean' ? `${at}/schema` : null;
        let json = false;
        if (!schemaPointer && isObject(value.content)) {
          const [mediaType, media] = Object.entries(value.content)[0] ?? [];
          if (mediaType !== undefined && isJsonRange(mediaType.split(';')[0]!.trim().toLowerCase()) && isObject(media) && media.schema !== undefined) {
            schemaPointer = `${at}/content/${pointerToken(mediaType)}/schema`;
            json = true;
          }
        }
        const style = typeof value.style === 'string' ? value.style : location === 'query' || location === 'cookie' ? 'form' : 'simple';
        const param: CompiledParam = {
          name,
          key: location === 'header' ? name.toLowerCase() : name,
          shape: json ? 'primitive' : shapeOf(this.document, value.schema),
          style,
          explode: typeof value.explode === 'boolean' ? value.explode : style === 'form',
          json,
        };
        if (location === 'query') {
          queryNames.add(name);
          if (param.shape === 'object' && style === 'deepObject') deepObjectPrefixes.push(`${name}[`);
          else if (param.shape === 'object' && param.explode && !json) spreadsQuery = true;
        }
        entries.push({ param, schemaPointer, required: value.required === true || location === 'path' });
      }
      if (entries.length === 0) continue;
      const build = (variant: Variant): AnySchemaObject => ({
        type: 'object',
        properties: Object.fromEntries(entries.map((e) => [e.param.key, e.schemaPointer ? this.rootSchema(e.schemaPointer, variant) : {}])),
        required: entries.filter((e) => e.required).map((e) => e.param.key),
      });
      params[location] = { params: entries.map((e) => e.param), validate: this.compile('params', build, `${location} parameters of ${label}`) };
    }

    let body: CompiledBody | null = null;
    const requestBody = operation.requestBody === undefined ? null : deref(this.document, operation.requestBody, `${pointer}/requestBody`);
    if (requestBody) {
      const media: MediaBody[] = [];
      const content = isObject(requestBody.value.content) ? requestBody.value.content : {};
      for (const [key, value] of Object.entries(content)) {
        const range = key.split(';')[0]!.trim().toLowerCase();
        const schemaPointer = `${requestBody.pointer}/content/${pointerToken(key)}/schema`;
        const validate =
          isJsonRange(range) && isObject(value) && value.schema !== undefined
            ? this.compile('body', (variant) => this.rootSchema(schemaPointer, variant), `${range} body of ${label}`)
            : { standard: null, strict: null };
        media.push({ range, validate });
      }
      body = { required: requestBody.value.required === true, media };
    }
    return { label, params, spreadsQuery, deepObjectPrefixes, queryNames, body };
  }
}

/** Compiles an enforcer for an OpenAPI 3.0/3.1 document (YAML or JSON text). */
export async function compileSchemaEnforcer(text: string): Promise<SchemaEnforcer> {
  const { document, openapi30 } = readDocument(text);
  return new Compiler(document, openapi30).build();
}

/** One compiled enforcer per document version; concurrent requests for a hash share one compilation. */
const enforcers = new LRUCache<string, Promise<SchemaEnforcer>>({ max: 64 });

export async function getSchemaEnforcer(hash: string, text: string): Promise<SchemaEnforcer> {
  let pending = enforcers.get(hash);
  if (!pending) {
    const compiling = compileSchemaEnforcer(text);
    enforcers.set(hash, compiling);
    // A failure is not cached: the next load of the site tries again.
    compiling.catch(() => {
      if (enforcers.peek(hash) === compiling) enforcers.delete(hash);
    });
    pending = compiling;
  }
  return pending;
}
