// An uploaded OpenAPI document: parsed (YAML or JSON), checked (OpenAPI 3.0/3.1, valid per
// @readme/openapi-parser, references inside the document only) and reduced to the operations it
// declares. Everything here is a pure function of the text except `analyseInWorker`, which runs
// the same analysis on a worker thread with a time and memory limit.
//
// Why a worker: parsing a 5 MiB YAML file takes seconds, and the validator dereferences every
// `$ref` into a tree, so a one-kilobyte document whose schemas refer to each other ten times per
// level ("ref bomb") costs exponential time. On the request thread that would stall every other
// request of the process; on a worker it costs one core until the time limit and then fails.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { ValidationResult } from '@readme/openapi-parser';
import { parseDocument as parseYamlDocument } from 'yaml';
import { errorMessage, isObject, type JsonObject } from '../json-value.ts';
import { externalReferences, pointerToken, resolveRef } from './refs.ts';

export type DocumentFormat = 'yaml' | 'json';

export interface SchemaOperation {
  method: string;
  path: string;
  operation_id: string | null;
}

export interface AnalysedDocument {
  openapiVersion: string;
  operations: SchemaOperation[];
}

export type Analysis = { ok: true; document: AnalysedDocument } | { ok: false; reasons: string[] };

type Outcome<T> = { ok: true; value: T } | { ok: false; reasons: string[] };

/** HTTP methods a Path Item can hold in OpenAPI 3.0 and 3.1. */
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Beyond this many, further reasons are summarised in one line. */
const MAX_REASONS = 50;
/** YAML anchors/aliases beyond this count are refused (the `yaml` package's guard against alias bombs). */
const MAX_YAML_ALIASES = 100;

function capped(reasons: string[]): string[] {
  if (reasons.length <= MAX_REASONS) return reasons;
  return [...reasons.slice(0, MAX_REASONS), `… and ${reasons.length - MAX_REASONS} more`];
}

/** Parses the text as YAML or JSON into a plain object. Only JSON-compatible values come out. */
export function parseDocumentText(text: string, format: DocumentFormat): Outcome<JsonObject> {
  // PostgreSQL text cannot hold NUL, and no OpenAPI document needs one.
  if (text.includes('\u0000')) return { ok: false, reasons: ['the document contains a NUL character'] };
  let value: unknown;
  if (format === 'json') {
    try {
      value = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      return { ok: false, reasons: [`the document is not valid JSON: ${errorMessage(error)}`] };
    }
  } else {
    // YAML 1.2 core schema only: explicit 1.1 tags such as !!binary or !!timestamp would produce
    // Buffers and Dates, which no OpenAPI document contains.
    const doc = parseYamlDocument(text, { prettyErrors: true, uniqueKeys: true, resolveKnownTags: false });
    if (doc.errors.length > 0) {
      // The first line carries the message and its line/column; the rest is a source excerpt.
      return { ok: false, reasons: capped(doc.errors.map((e) => `the document is not valid YAML: ${e.message.split('\n')[0]}`)) };
    }
    try {
      value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    } catch (error) {
      return { ok: false, reasons: [`the document is not valid YAML: ${errorMessage(error)}`] };
    }
  }
  if (!isObject(value)) {
    const kind = value === null ? 'empty' : Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    return { ok: false, reasons: [`the document must be an object with an \`openapi\` field, but it is ${kind}`] };
  }
  return { ok: true, value };
}

/** The `openapi` version, when it is one we accept (3.0.x or 3.1.x). */
export function openApiVersionOf(document: JsonObject): Outcome<string> {
  if ('swagger' in document) {
    return { ok: false, reasons: ['Swagger 2.0 documents are not supported; convert the document to OpenAPI 3.0 or 3.1'] };
  }
  const version = document.openapi;
  if (version === undefined) return { ok: false, reasons: ['the document has no `openapi` field; it is not an OpenAPI document'] };
  if (typeof version !== 'string') {
    return { ok: false, reasons: [`\`openapi\` must be a string such as "3.1.0" (in YAML, quote it), not ${JSON.stringify(version)}`] };
  }
  if (!/^3\.[01]\.\d+(-.+)?$/.test(version)) return { ok: false, reasons: [`OpenAPI ${version} is not supported; use 3.0.x or 3.1.x`] };
  return { ok: true, value: version };
}

/**
 * The operations under `paths`: one per HTTP method of each Path Item, in document order. Keys that
 * are not methods (`parameters`, `summary`, `servers`, `x-…`) are skipped; a Path Item that is an
 * internal `$ref` contributes the operations of the item it points to.
 */
export function listOperations(document: JsonObject): SchemaOperation[] {
  const paths = document.paths;
  if (!isObject(paths)) return [];
  const operations: SchemaOperation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    const target = typeof item.$ref === 'string' ? resolveRef(document, item.$ref) : undefined;
    const sources = isObject(target) ? [item, target] : [item];
    const methods = new Set<string>();
    for (const source of sources) {
      for (const [key, operation] of Object.entries(source)) {
        if (!(OPERATION_METHODS as readonly string[]).includes(key) || !isObject(operation) || methods.has(key)) continue;
        methods.add(key);
        operations.push({ method: key.toUpperCase(), path, operation_id: typeof operation.operationId === 'string' ? operation.operationId : null });
      }
    }
  }
  return operations;
}

interface RenderedLine {
  pointer: string;
  text: string;
}

/**
 * For the wanted (1-based) line numbers of `JSON.stringify(value, null, 2)`: the JSON Pointer of
 * the value on that line and the line's text. The validator's messages quote that rendering of the
 * dereferenced document with line numbers, and this turns a quoted line back into a location.
 */
function renderedLines(value: unknown, wanted: ReadonlySet<number>): Map<number, RenderedLine> {
  const result = new Map<number, RenderedLine>();
  const last = Math.max(0, ...wanted);
  let line = 0;
  const note = (pointer: string, text: string) => {
    if (wanted.has(line)) result.set(line, { pointer, text });
  };
  const visit = (node: unknown, pointer: string, depth: number, prefix: string, comma: string): void => {
    if (line >= last) return;
    line += 1;
    const indent = '  '.repeat(depth);
    const entries: [string | number, unknown][] =
      typeof node === 'object' && node !== null ? (Array.isArray(node) ? node.map((v, i): [number, unknown] => [i, v]) : Object.entries(node)) : [];
    if (entries.length === 0) {
      note(pointer, `${indent}${prefix}${JSON.stringify(node) ?? 'null'}${comma}`);
      return;
    }
    const [open, close] = Array.isArray(node) ? ['[', ']'] : ['{', '}'];
    note(pointer, `${indent}${prefix}${open}`);
    entries.forEach(([key, child], index) => {
      const childPrefix = typeof key === 'number' ? '' : `${JSON.stringify(key)}: `;
      visit(child, `${pointer}/${pointerToken(key)}`, depth + 1, childPrefix, index < entries.length - 1 ? ',' : '');
    });
    if (line >= last) return;
    line += 1;
    note(pointer, `${indent}${close}${comma}`);
  };
  visit(value, '', 0, '', '');
  return result;
}

/** `> 15 |     "type": "strin"` and the caret line below it, in a validator message. */
const MARKED_LINE = /^>\s*(\d+)\s*\|\s?(.*)$/m;
const CARET_HINT = /^\s*\|\s*\^+\s*(.*)$/m;

/**
 * The validator's messages as one-line reasons. Schema errors arrive as a summary plus an excerpt
 * of the document rendered as JSON; the excerpt becomes the JSON Pointer of the offending value
 * (checked against the quoted text, so a location is only given when it is certain) and the
 * excerpt's hint ("description is missing here!").
 */
export function validationReasons(result: Extract<ValidationResult, { valid: false }>, dereferenced: unknown): string[] {
  const parts = result.errors.map(({ message }) => {
    const [summary = message, ...rest] = message.split(/\n\s*\n/);
    const excerpt = rest.join('\n\n');
    const marked = MARKED_LINE.exec(excerpt);
    return { summary: summary.replace(/\s*\n\s*/g, ' ').trim(), line: marked ? Number(marked[1]) : undefined, quoted: marked?.[2]?.trimEnd(), hint: CARET_HINT.exec(excerpt)?.[1]?.trim() };
  });
  const wanted = new Set(parts.flatMap((p) => (p.line === undefined ? [] : [p.line])));
  const lines = wanted.size > 0 ? renderedLines(dereferenced, wanted) : new Map<number, RenderedLine>();
  const reasons = parts.map(({ summary, line, quoted, hint }) => {
    const rendered = line === undefined ? undefined : lines.get(line);
    const where = rendered && quoted !== undefined && rendered.text.trim() === quoted.trim() ? ` at #${rendered.pointer}` : quoted ? ` near \`${quoted.trim()}\`` : '';
    return `${summary}${where}${hint ? ` (${hint})` : ''}`;
  });
  if (result.additionalErrors > 0) reasons.push(`… and ${result.additionalErrors} more errors`);
  return capped(reasons);
}

/** Validates against the OpenAPI 3.0/3.1 specification; an empty list means valid. */
async function specificationProblems(document: JsonObject): Promise<string[]> {
  // The validator dereferences the object it is given in place; keep the caller's copy intact.
  const subject = structuredClone(document);
  let result: ValidationResult;
  try {
    // No resolver may run: external references were refused above, and this makes sure that
    // nothing in a document can ever be read from disk or fetched. (The cast: the parameter type
    // claims a valid document, and proving that is what validate() is for.)
    // Loaded on first use (with its own ajv): the reconciler's config checks import this module for
    // openApiVersionOf and should not pay ~40 ms for a validator only schema documents need.
    const { validate } = await import('@readme/openapi-parser');
    result = await validate(subject as unknown as Parameters<typeof validate>[0], { resolve: { external: false, file: false } });
  } catch (error) {
    return [`the document could not be validated: ${errorMessage(error)}`];
  }
  return result.valid ? [] : validationReasons(result, subject);
}

/** The whole check, in process. Prefer `analyseInWorker` on a request path. */
export async function analyseDocument(text: string, format: DocumentFormat): Promise<Analysis> {
  try {
    return await analyse(text, format);
  } catch (error) {
    // Recursion (ours, the parser's, the validator's) runs out of stack on absurdly deep nesting.
    if (error instanceof RangeError) return { ok: false, reasons: [`the document is nested too deeply to analyse: ${error.message}`] };
    throw error;
  }
}

async function analyse(text: string, format: DocumentFormat): Promise<Analysis> {
  const parsed = parseDocumentText(text, format);
  if (!parsed.ok) return parsed;
  const document = parsed.value;
  const version = openApiVersionOf(document);
  if (!version.ok) return version;
  const external = externalReferences(document);
  if (external.length > 0) return { ok: false, reasons: capped(external) };
  const problems = await specificationProblems(document);
  if (problems.length > 0) return { ok: false, reasons: problems };
  const operations = listOperations(document);
  // jsonb cannot store NUL either; JSON text can smuggle one in as an escape.
  if (operations.some((op) => op.path.includes('\u0000') || op.operation_id?.includes('\u0000'))) {
    return { ok: false, reasons: ['paths and operationIds must not contain NUL characters'] };
  }
  return { ok: true, document: { openapiVersion: version.value, operations } };
}

// --- Running the analysis on a worker thread -------------------------------------------------

const JOB_MARK = 'aegis:openapi-analysis';

interface AnalysisJob {
  mark: typeof JOB_MARK;
  tsxApi: string;
  module: string;
  text: string;
  format: DocumentFormat;
}

type WorkerReply = { analysis: Analysis } | { crashed: string };

export interface WorkerLimits {
  /** Wall-clock limit for one analysis. */
  timeoutMs: number;
  /** V8 old-generation heap limit of the worker. */
  maxHeapMb: number;
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = { timeoutMs: 20_000, maxHeapMb: 1024 };
/** Analyses running at once per process; each may hold several hundred MiB. */
const MAX_CONCURRENT_ANALYSES = 2;

// This module is also the worker's entry point: a worker started by `analyseInWorker` imports it
// and finds its job in workerData.
if (!isMainThread && isObject(workerData) && workerData.mark === JOB_MARK) {
  const job = workerData as unknown as AnalysisJob;
  const reply = (message: WorkerReply) => parentPort?.postMessage(message);
  analyseDocument(job.text, job.format).then(
    (analysis) => reply({ analysis }),
    (error: unknown) => reply({ crashed: errorMessage(error) }),
  );
}

// The sources are TypeScript run through tsx (no build step), and a worker does not inherit the
// loader that `aegis` registered, so the worker registers it before importing this module.
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then((tsx) => { tsx.register(); return import(workerData.module); });
`;

/**
 * tsx's ESM API (`tsx/esm/api`, import condition). createRequire resolves the require condition,
 * which tsx ships beside it as index.cjs (its CommonJS register() cannot be used from a worker).
 */
const tsxEsmApi = (): string => pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;

let running = 0;
const waiting: (() => void)[] = [];

async function acquireSlot(): Promise<void> {
  if (running < MAX_CONCURRENT_ANALYSES) {
    running += 1;
    return;
  }
  await new Promise<void>((resolve) => waiting.push(resolve));
}

/** Hands the slot to the next waiter, or frees it. */
function releaseSlot(): void {
  const next = waiting.shift();
  if (next) next();
  else running -= 1;
}

function runWorker(text: string, format: DocumentFormat, limits: WorkerLimits): Promise<Analysis> {
  const job: AnalysisJob = {
    mark: JOB_MARK,
    tsxApi: tsxEsmApi(),
    module: import.meta.url,
    text,
    format,
  };
  const worker = new Worker(BOOTSTRAP, { eval: true, workerData: job, resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb } });
  return new Promise<Analysis>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: { analysis: Analysis } | { error: Error }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      if ('analysis' in outcome) resolve(outcome.analysis);
      else reject(outcome.error);
    };
    const tooExpensive = (what: string): Analysis => ({
      ok: false,
      reasons: [`the document ${what}; it is too large or too complex (for example deeply nested $ref chains) to validate`],
    });
    const timer = setTimeout(() => finish({ analysis: tooExpensive(`took longer than ${limits.timeoutMs / 1000} s to validate`) }), limits.timeoutMs);
    worker.on('message', (message: WorkerReply) => {
      if ('analysis' in message) finish({ analysis: message.analysis });
      else finish({ error: new Error(`OpenAPI analysis failed: ${message.crashed}`) });
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') finish({ analysis: tooExpensive(`needed more than ${limits.maxHeapMb} MiB of memory`) });
      else finish({ error });
    });
    worker.on('exit', (code) => finish({ error: new Error(`OpenAPI analysis worker exited with code ${code} before answering`) }));
  });
}

/**
 * `analyseDocument` on a worker thread, at most two at a time per process. A document that
 * exceeds the time or memory limit is answered as invalid; a failure of the worker itself rejects.
 */
export async function analyseInWorker(text: string, format: DocumentFormat, limits: WorkerLimits = DEFAULT_WORKER_LIMITS): Promise<Analysis> {
  await acquireSlot();
  try {
    return await runWorker(text, format, limits);
  } finally {
    releaseSlot();
  }
}

/**
 * OpenAPI 3.0's draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum`, rewritten in place as the
 * numeric keywords JSON Schema 2019+ validators know.
 */
export function numericExclusiveBounds(schema: JsonObject): void {
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof schema[flag] !== 'boolean') continue;
    if (schema[flag] === true && typeof schema[bound] === 'number') {
      schema[flag] = schema[bound];
      delete schema[bound];
    } else {
      delete schema[flag];
    }
  }
}
