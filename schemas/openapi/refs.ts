// `$ref`s in an OpenAPI document: the one resolver the upload checks (document.ts), the gateway's
// schema enforcement and the API scanner use, and the refusal of references that leave the
// document. Only internal references (`#/…`) are ever followed: nothing a document names is read
// from disk or fetched. A chain of references is followed for at most MAX_REF_HOPS references,
// which also ends cycles (`A → B → A`).
import { isObject, type JsonObject } from '../json-value.ts';

/** References followed in one chain; a longer chain (or a cycle) resolves to nothing. */
export const MAX_REF_HOPS = 32;

/** `/` and `~` escaped as in a JSON Pointer (RFC 6901). */
export const pointerToken = (key: string | number): string => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** The decoded fragment of an internal reference (`#/a%20b` → `/a b`); undefined for another reference or a fragment that does not decode. */
export function refFragment(ref: string): string | undefined {
  if (!ref.startsWith('#')) return undefined;
  try {
    return decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
}

/** The unescaped tokens of a decoded JSON Pointer (`/a/b~1c` → `a`, `b/c`; `` → none). */
export function pointerTokens(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at a decoded JSON Pointer (`/components/schemas/Pet`) in the document, if there is one. */
export function valueAtPointer(document: JsonObject, pointer: string): unknown {
  if (pointer !== '' && !pointer.startsWith('/')) return undefined;
  let node: unknown = document;
  for (const token of pointerTokens(pointer)) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as JsonObject)[token];
  }
  return node;
}

/** Resolves one internal reference (`#/components/pathItems/x`) in the document, if it can. */
export function resolveRef(document: JsonObject, ref: string): unknown {
  const fragment = refFragment(ref);
  return fragment === undefined ? undefined : valueAtPointer(document, fragment);
}

/**
 * Follows the chain of `$ref`s from `value` (found at `pointer`) to the first value that is no
 * reference, with the decoded JSON Pointer it was found at. That value is undefined when the last
 * reference names nothing; the whole answer is undefined when a reference is not internal, does
 * not decode, or the chain is longer than MAX_REF_HOPS.
 */
export function followRefs(document: JsonObject, value: unknown, pointer = ''): { value: unknown; pointer: string } | undefined {
  let current = value;
  let at = pointer;
  for (let hops = 0; hops < MAX_REF_HOPS; hops += 1) {
    if (!isObject(current) || typeof current.$ref !== 'string') return { value: current, pointer: at };
    const fragment = refFragment(current.$ref);
    if (fragment === undefined) return undefined;
    at = fragment;
    current = valueAtPointer(document, at);
  }
  return undefined;
}

/** What `value`'s `$ref` chain names: the value itself when it is no reference; undefined when the chain resolves to nothing. */
export function deref(document: JsonObject, value: unknown): unknown {
  return followRefs(document, value)?.value;
}

/**
 * Every `$ref` that does not point inside the document (`#…`), as reasons. Such references would
 * make the validator read files or fetch URLs named by the uploader, so they are refused outright.
 */
export function externalReferences(document: JsonObject): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown, pointer: string): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (!Array.isArray(value) && typeof (value as JsonObject).$ref === 'string' && !((value as JsonObject).$ref as string).startsWith('#')) {
      found.push(`external $ref ${JSON.stringify((value as JsonObject).$ref)} at #${pointer}/$ref: only references inside the document (starting with #) are allowed`);
    }
    for (const [key, child] of Object.entries(value)) walk(child, `${pointer}/${pointerToken(key)}`);
  };
  walk(document, '');
  return found;
}
