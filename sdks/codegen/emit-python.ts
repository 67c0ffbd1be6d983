// The Python SDK's generated layer (sdks/python/aegis_sdk/_generated/): TypedDicts for every named
// type of the model and one resource class per namespace with one method per operation. The
// hand-written layer (transport, retries, pagination, errors, streams, webhooks) lives beside it in
// sdks/python/aegis_sdk/ and is never touched here. Output must be deterministic: the stale-SDK
// test renders again and compares byte for byte.
import type { Field, NamedType, Operation, Param, SdkModel, TypeRef } from './model.ts';
import { snakeCase, pascalCase } from './names.ts';
import type { EmitterOutput } from './output.ts';

const DIR = 'sdks/python/aegis_sdk/_generated';

const PY_KEYWORDS = new Set([
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else',
  'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise',
  'return', 'try', 'while', 'with', 'yield',
]);
/** Names the generated modules import; a model type of the same name would shadow them. */
const RESERVED_TYPE_NAMES = new Set(['Any', 'Callable', 'Dict', 'List', 'Literal', 'Optional', 'Union', 'TypedDict', 'SyncPage', 'EventStream', 'RequestOptions']);

/** A Python identifier for a wire name: snake_case, `_` appended to keywords (`import` → `import_`). */
export function pyIdentifier(name: string): string {
  const snake = snakeCase(name);
  const safe = /^[0-9]/.test(snake) ? `_${snake}` : snake;
  return PY_KEYWORDS.has(safe) ? `${safe}_` : safe;
}

const isPlainIdentifier = (name: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !PY_KEYWORDS.has(name);

/** A Python string literal (JSON's escapes are valid Python). */
const pyStr = (value: string): string => JSON.stringify(value);

function pyType(ref: TypeRef): string {
  switch (ref.kind) {
    case 'string':
      return ref.enum?.length ? `Literal[${ref.enum.map(pyStr).join(', ')}]` : 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'unknown':
      return 'Any';
    case 'array':
      return `List[${pyType(ref.items)}]`;
    case 'map':
      return `Dict[str, ${pyType(ref.values)}]`;
    case 'named':
      return ref.name;
    case 'union': {
      const nonNull = ref.variants.filter((v) => v.kind !== 'null');
      const nullable = nonNull.length !== ref.variants.length;
      const inner = nonNull.length === 1 ? pyType(nonNull[0]!) : `Union[${nonNull.map(pyType).join(', ')}]`;
      return nullable ? `Optional[${inner}]` : inner;
    }
  }
}

/** Body of a docstring: backslashes and triple quotes escaped, no trailing quote touching the closing ones. */
function docText(text: string): string {
  let out = text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"').replace(/[ \t]+$/gm, '').trim();
  if (out.endsWith('"')) out += ' ';
  return out;
}

function docstring(text: string, indent: string): string {
  const body = docText(text);
  const lines = body.split('\n');
  if (lines.length === 1) return `${indent}"""${body}"""\n`;
  return `${indent}"""${lines.map((l, i) => (i === 0 || l === '' ? l : indent + l)).join('\n')}\n${indent}"""\n`;
}

const commentLines = (text: string, indent: string): string =>
  text
    .trim()
    .split('\n')
    .map((l) => `${indent}#: ${l}`.trimEnd())
    .join('\n') + '\n';

function fieldNote(field: Field): string {
  const notes: string[] = [];
  if (field.readOnly) notes.push('Read-only: set by the server.');
  if (field.writeOnly) notes.push('Write-only: sent in requests, never returned.');
  if (field.default !== undefined) notes.push(`Default: \`${JSON.stringify(field.default)}\`.`);
  return [field.description ?? '', ...notes].filter(Boolean).join(' ');
}

function classBody(fields: Field[], indent: string): string {
  if (!fields.length) return `${indent}pass\n`;
  return fields
    .map((f) => {
      const note = fieldNote(f);
      return `${note ? commentLines(note, indent) : ''}${indent}${f.name}: ${pyType(f.type)}\n`;
    })
    .join('');
}

function functionalDict(name: string, fields: Field[], total: boolean): string {
  const entries = fields.map((f) => {
    const note = fieldNote(f);
    return `${note ? commentLines(note, '        ') : ''}        ${pyStr(f.name)}: ${pyStr(pyType(f.type))},\n`;
  });
  return `${name} = TypedDict(\n    ${pyStr(name)},\n    {\n${entries.join('')}    },\n    total=${total ? 'True' : 'False'},\n)\n`;
}

/**
 * A TypedDict per named type. Python 3.9 has no NotRequired, so a type with both kinds of keys is a
 * total base holding the required ones and a `total=False` subclass adding the rest. Keys that are
 * not identifiers (`from`) force the functional syntax for the part holding them.
 */
function renderType(type: NamedType): string {
  if (RESERVED_TYPE_NAMES.has(type.name)) throw new Error(`python emitter: type name ${type.name} collides with an import`);
  const required = type.fields.filter((f) => f.required);
  const optional = type.fields.filter((f) => !f.required);
  const doc = docstring(type.description ?? `${type.name}.`, '    ');
  const plain = type.fields.every((f) => isPlainIdentifier(f.name));
  if (plain) {
    if (!optional.length) return `class ${type.name}(TypedDict):\n${doc}\n${classBody(required, '    ')}`;
    if (!required.length) return `class ${type.name}(TypedDict, total=False):\n${doc}\n${classBody(optional, '    ')}`;
    return (
      `class _${type.name}Required(TypedDict):\n${classBody(required, '    ')}\n\n` +
      `class ${type.name}(_${type.name}Required, total=False):\n${doc}\n${classBody(optional, '    ')}`
    );
  }
  const bases: string[] = [];
  let out = '';
  if (required.length) {
    out += `${functionalDict(`_${type.name}Required`, required, true)}\n\n`;
    bases.push(`_${type.name}Required`);
  }
  if (optional.length) {
    out += `${functionalDict(`_${type.name}Optional`, optional, false)}\n\n`;
    bases.push(`_${type.name}Optional`);
  }
  return `${out}class ${type.name}(${bases.join(', ')}):\n${doc}`;
}

/** The first lines of every generated module. */
const generatedBanner = (model: SdkModel): string =>
  `# Generated by sdks/codegen/emit-python.ts from the Aegis OpenAPI document (${model.title} ${model.version}).\n` +
  '# Do not edit: run `npm run sdks:generate`.\n';

function renderModels(model: SdkModel): string {
  const header =
    generatedBanner(model) +
    '"""Typed shapes of every object the Aegis API sends or accepts (TypedDicts: plain dicts at run time)."""\n' +
    'from __future__ import annotations\n\n' +
    'from typing import Any, Dict, List, Literal, Optional, TypedDict, Union\n\n' +
    `__all__ = [\n${model.types.map((t) => `    ${pyStr(t.name)},\n`).join('')}]\n`;
  return `${header}\n\n${model.types.map(renderType).join('\n\n')}`;
}

// ---------------------------------------------------------------------------------------------
// Resources

const resourceClass = (resource: string): string => `${pascalCase(resource)}Resource`;

function paramDoc(name: string, description: string | undefined, fallback: string): string {
  return `${name}: ${(description ?? fallback).replace(/\s*\n\s*/g, ' ')}`;
}

function methodDoc(op: Operation, pathArgs: [Param, string][], queryArgs: [Param, string][], headerArgs: [Param, string][]): string {
  const parts: string[] = [];
  parts.push(op.summary ? (/[.!?]$/.test(op.summary) ? op.summary : `${op.summary}.`) : `${op.id}.`);
  if (op.description) parts.push(op.description);
  parts.push(`\`${op.httpMethod} ${op.path}\`${op.scope ? ` — required scope: \`${op.scope}\`` : ''}.`);
  const args: string[] = [];
  for (const [p, name] of pathArgs) args.push(paramDoc(name, p.description, `The \`${p.name}\` path parameter.`));
  if (op.body?.json) args.push(paramDoc('body', op.body.description, 'The JSON request body.'));
  if (op.body?.raw) {
    args.push(paramDoc('content', op.body.raw.description ?? op.body.description, 'The raw request body.') + ' (`str` is sent as UTF-8.)');
    args.push(`content_type: One of ${op.body.raw.contentTypes.map((t) => `\`${t}\``).join(', ')}${op.body.json ? '' : ` (default \`${op.body.raw.contentTypes[0]}\`)`}.`);
  }
  for (const [p, name] of [...queryArgs, ...headerArgs]) {
    const extra = p.default !== undefined ? ` Default: \`${JSON.stringify(p.default)}\`.` : '';
    args.push(paramDoc(name, p.description ? p.description + extra : undefined, `The \`${p.name}\` parameter.${extra}`));
  }
  if (op.response.kind === 'sse') args.push('on_dropped: Called with `{"count": N}` when the server reports decisions dropped for reading too slowly.');
  if (op.mutating) args.push('idempotency_key: Sent as `Idempotency-Key` (a random one is generated otherwise) and reused on retries.');
  args.push('request_id, timeout, extra_headers, request_options: Per-request options (see `RequestOptions`).');
  parts.push(`Args:\n${args.map((a) => `    ${a}`).join('\n')}`);
  if (op.pagination) parts.push('Returns:\n    The first page; iterating over it yields every item of every page, fetched lazily.');
  if (op.response.kind === 'sse') parts.push('Returns:\n    A closable iterator of decisions that reconnects with `Last-Event-ID` when the connection breaks.');
  return parts.join('\n\n');
}

function renderOperation(op: Operation): string {
  const method = pyIdentifier(op.name);
  const pathArgs: [Param, string][] = op.pathParams.map((p) => [p, pyIdentifier(p.name)]);
  const queryArgs: [Param, string][] = op.query.map((p) => [p, pyIdentifier(p.name)]);
  const headerArgs: [Param, string][] = op.headers.map((p) => [p, pyIdentifier(p.name)]);
  const sig: string[] = ['self'];
  for (const [p, name] of pathArgs) sig.push(`${name}: ${pyType(p.type)}`);
  const body = op.body;
  const rawOnly = !!body?.raw && !body.json;
  if (body?.json) {
    // With a raw form too, the JSON body is optional: the caller sends one or the other.
    const optional = !body.required || !!body.raw;
    sig.push(optional ? `body: Optional[${pyType(body.json)}] = None` : `body: ${pyType(body.json)}`);
  }
  if (rawOnly) sig.push(body!.required ? 'content: Union[str, bytes]' : 'content: Optional[Union[str, bytes]] = None');
  sig.push('*');
  if (body?.raw && !rawOnly) sig.push('content: Optional[Union[str, bytes]] = None', 'content_type: Optional[str] = None');
  if (rawOnly) sig.push(`content_type: str = ${pyStr(body!.raw!.contentTypes[0]!)}`);
  for (const [p, name] of [...queryArgs, ...headerArgs]) {
    if (op.pagination && p.name === 'cursor') {
      sig.push(`${name}: Optional[str] = None`);
      continue;
    }
    sig.push(`${name}: Optional[${pyType(p.type)}] = None`);
  }
  if (op.response.kind === 'sse') sig.push('on_dropped: Optional[Callable[[Dict[str, Any]], None]] = None');
  if (op.mutating) sig.push('idempotency_key: Optional[str] = None');
  sig.push('request_id: Optional[str] = None', 'timeout: Optional[float] = None', 'extra_headers: Optional[Dict[str, str]] = None', 'request_options: Optional[RequestOptions] = None');

  let returns: string;
  const item = op.pagination ? pyType(op.pagination.item) : undefined;
  if (op.pagination) returns = `SyncPage[${item}]`;
  else if (op.response.kind === 'sse') returns = `EventStream[${op.response.type ? pyType(op.response.type) : 'Dict[str, Any]'}]`;
  else if (op.response.kind === 'empty') returns = 'None';
  else if (op.response.kind === 'document') returns = 'Any';
  else returns = op.response.type ? pyType(op.response.type) : 'Any';

  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => `{_path(${pathArgs.find(([p]) => p.name === name)![1]})}`);
  const lines: string[] = [];
  lines.push(`    def ${method}(\n${sig.map((s) => `        ${s},\n`).join('')}    ) -> ${returns}:\n`);
  lines.push(docstring(methodDoc(op, pathArgs, queryArgs, headerArgs), '        '));
  lines.push(
    `        options = merge_options(request_options, ${op.mutating ? 'idempotency_key=idempotency_key, ' : ''}request_id=request_id, timeout=timeout, headers=extra_headers)\n`,
  );
  const query = queryArgs.length ? `{${queryArgs.map(([p, name]) => `${pyStr(p.name)}: ${name}`).join(', ')}}` : 'None';
  const headers = headerArgs.length ? `{${headerArgs.map(([p, name]) => `${pyStr(p.name)}: ${name}`).join(', ')}}` : 'None';
  const path_ = pathArgs.length ? `f${pyStr(path)}` : pyStr(path);
  if (op.pagination) {
    lines.push(`        return self._client._get_page(${path_}, ${query}, options)\n`);
  } else if (op.response.kind === 'sse') {
    lines.push(`        return self._client._stream(${path_}, ${query}, ${headers}, options, on_dropped=on_dropped)\n`);
  } else {
    const args = [pyStr(op.httpMethod), path_, `query=${query}`];
    if (headerArgs.length) args.push(`headers=${headers}`);
    if (body?.json && body.raw) args.push('json=body', 'content=content', 'content_type=content_type');
    else if (body?.json) args.push('json=body');
    else if (rawOnly) args.push('content=content', 'content_type=content_type');
    args.push('options=options', `mutating=${op.mutating ? 'True' : 'False'}`);
    if (body?.json && body.raw && body.required) args.push('body_required=True');
    lines.push(`        ${op.response.kind === 'empty' ? '' : 'return '}self._client._request(${args.join(', ')})\n`);
  }
  return lines.join('');
}

function renderResources(model: SdkModel): string {
  const typeNames = new Set(model.types.map((t) => t.name));
  for (const r of model.resources) if (typeNames.has(resourceClass(r.name))) throw new Error(`python emitter: ${resourceClass(r.name)} is both a model and a resource class`);
  const classes = model.resources.map((resource) => {
    const doc = `The \`${resource.name}\` operations: ${resource.operations.map((o) => `\`${pyIdentifier(o.name)}\``).join(', ')}.`;
    const methods = resource.operations.map(renderOperation).join('\n');
    return `class ${resourceClass(resource.name)}:\n${docstring(doc, '    ')}\n    def __init__(self, client: BaseClient) -> None:\n        self._client = client\n\n${methods}`;
  });
  const attach =
    'class Resources:\n' +
    docstring('Every namespace of the API as an attribute; the client inherits this.', '    ') +
    '\n' +
    model.resources.map((r) => `    ${snakeCase(r.name)}: ${resourceClass(r.name)}\n`).join('') +
    '\n    def _init_resources(self, client: BaseClient) -> None:\n' +
    model.resources.map((r) => `        self.${snakeCase(r.name)} = ${resourceClass(r.name)}(client)\n`).join('');
  const header =
    generatedBanner(model) +
    '"""One class per API namespace, one method per operation."""\n' +
    'from __future__ import annotations\n\n' +
    'from typing import TYPE_CHECKING, Any, Callable, Dict, List, Literal, Optional, Union\n\n' +
    'from .._options import RequestOptions, merge_options\n' +
    'from .._pagination import SyncPage\n' +
    'from .._streaming import EventStream\n' +
    'from .._util import path_segment as _path\n\n' +
    'from .models import *  # noqa: F401,F403 (the annotations name every model)\n\n' +
    'if TYPE_CHECKING:\n' +
    '    from .._base import BaseClient\n\n' +
    `__all__ = [\n${[...model.resources.map((r) => resourceClass(r.name)), 'Resources'].map((n) => `    ${pyStr(n)},\n`).join('')}]\n`;
  return `${header}\n\n${classes.join('\n\n')}\n\n${attach}`;
}

/** The operations, by id, with their Python namespace and method: what the tests check against. */
function renderOperationsIndex(model: SdkModel): string {
  const rows = model.resources.flatMap((r) => r.operations.map((o) => `    ${pyStr(o.id)}: (${pyStr(snakeCase(r.name))}, ${pyStr(pyIdentifier(o.name))}),\n`));
  return (
    generatedBanner(model) +
    '"""Generated layer of the Aegis SDK: models (TypedDicts) and resources."""\n' +
    'from typing import Dict, Tuple\n\n' +
    `API_VERSION = ${pyStr(model.version)}\n\n` +
    '#: Every operation id of the API → (client attribute, method name).\n' +
    `OPERATIONS: Dict[str, Tuple[str, str]] = {\n${rows.join('')}}\n`
  );
}

export function renderPython(model: SdkModel): EmitterOutput {
  return {
    owns: [DIR],
    files: [
      { path: `${DIR}/__init__.py`, content: renderOperationsIndex(model) },
      { path: `${DIR}/models.py`, content: renderModels(model) },
      { path: `${DIR}/resources.py`, content: renderResources(model) },
    ],
  };
}
