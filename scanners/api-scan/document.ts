// The OpenAPI document an API scan works from: parsed and validated from text, and schemas bundled
// with the parts of the document they refer to. The `$ref` resolver itself is the shared one
// (schemas/openapi/refs.ts: `deref`), which the gateway's schema enforcement uses too.
//
// The document is kept with its internal references rather than dereferenced: a dereferenced
// document with circular schemas is a cyclic object (not JSON, so not storable), and one with many
// references to the same schema becomes exponentially large once written out. The scanner follows
// references itself where it reads (operations.ts) and hands ajv only the parts a schema refers to
// (schemaBundle).
import { isObject, type JsonObject } from '../../schemas/json-value.ts';
import { analyseDocument, analyseInWorker, DEFAULT_WORKER_LIMITS, openApiVersionOf, parseDocumentText, type DocumentFormat, type WorkerLimits } from '../../schemas/openapi/document.ts';
import { pointerTokens, refFragment, resolveRef } from '../../schemas/openapi/refs.ts';

/** The document cannot be scanned; `reasons` are one line each (the route answers 422 with them). */
export class ApiDocumentError extends Error {
  override readonly name = 'ApiDocumentError';
  constructor(readonly reasons: string[]) {
    // Callers prefix their own context ("… is not a valid OpenAPI document: "), so the message is the reasons.
    const [first = 'it is not a valid OpenAPI document', ...more] = reasons;
    super(`${first}${more.length > 0 ? ` (and ${more.length} more)` : ''}`);
  }
}

/**
 * A schema together with the parts of the document it refers to, placed where their references
 * point (`referenced.components.schemas.Pet` for `#/components/schemas/Pet`): self-contained JSON
 * that validates the same way as the schema inside its document, and small enough to keep in a
 * finding so its check can be re-run without the document.
 */
export interface SchemaBundle {
  schema: unknown;
  referenced: JsonObject;
}

export function schemaBundle(root: JsonObject, schema: unknown): SchemaBundle {
  const referenced: JsonObject = {};
  const done = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        if (!value.startsWith('#') || done.has(value)) continue;
        done.add(value);
        const target = resolveRef(root, value);
        if (target === undefined) continue;
        place(referenced, value, target);
        visit(target);
      } else if (key !== 'example' && key !== 'examples') {
        visit(value);
      }
    }
  };
  visit(schema);
  return { schema, referenced: structuredClone(referenced) };
}

/** Sets `target` at the JSON Pointer of `ref` inside `tree`, creating the objects on the way. */
function place(tree: JsonObject, ref: string, target: unknown): void {
  const fragment = refFragment(ref);
  if (fragment === undefined) return;
  const tokens = pointerTokens(fragment);
  if (tokens.length === 0) return;
  let node = tree;
  for (const token of tokens.slice(0, -1)) {
    const next = node[token];
    if (isObject(next)) node = next;
    else {
      const created: JsonObject = {};
      node[token] = created;
      node = created;
    }
  }
  const last = tokens.at(-1)!;
  // A reference into a schema already placed (`#/components/schemas/Pet/properties/id`) is
  // covered by its ancestor.
  if (!(last in node)) node[last] = target;
}

/** '3.0' or '3.1' for a document that declares a supported version; throws otherwise. */
export function dialectOf(document: unknown): { root: JsonObject; dialect: '3.0' | '3.1' } {
  if (!isObject(document)) throw new ApiDocumentError(['the document must be an object with an `openapi` field']);
  const version = openApiVersionOf(document);
  if (!version.ok) throw new ApiDocumentError(version.reasons);
  return { root: document, dialect: version.value.startsWith('3.0') ? '3.0' : '3.1' };
}

export interface ParseOptions {
  /**
   * Limits of the worker thread the document is validated on (the validator is exponential on
   * documents whose schemas refer to each other many times over); `false` validates in process,
   * for callers that only ever see trusted documents (tests).
   */
  worker?: WorkerLimits | false;
}

/**
 * JSON or YAML text → the OpenAPI 3.0/3.1 document, validated against the specification (internal
 * references only; nothing is read or fetched). Throws ApiDocumentError with one-line reasons.
 */
export async function parseApiDocument(text: string, options: ParseOptions = {}): Promise<JsonObject> {
  const format: DocumentFormat = /^\uFEFF?\s*[{[]/.test(text) ? 'json' : 'yaml';
  const limits = options.worker ?? DEFAULT_WORKER_LIMITS;
  const analysis = limits === false ? await analyseDocument(text, format) : await analyseInWorker(text, format, limits);
  if (!analysis.ok) throw new ApiDocumentError(analysis.reasons);
  // Valid, so this parse succeeds; it is repeated here because the worker cannot hand objects back
  // cheaper than it parsed them.
  const parsed = parseDocumentText(text, format);
  if (!parsed.ok) throw new ApiDocumentError(parsed.reasons);
  return parsed.value;
}
