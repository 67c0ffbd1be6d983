// Reads a config directory: every `*.yaml` / `*.yml` file (several documents per file allowed),
// each document checked against the config document schema and expanded into DesiredObjects.
// Nothing stops at the first mistake: every problem of every file is collected, with its position.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import type { ConfigProblem, Kind, LoadResult } from '../model.ts';
import { PROJECT_FILE } from '../project/project-file.ts';
import { documentFileTarget } from './document-file.ts';
import { ALL_KINDS, NESTED_SCHEMA_FIELD } from './envelope-schema.ts';
import { expandDocument, type ConfigDocument } from './expand.ts';
import { documentPositions } from './positions.ts';
import { sortProblems } from './problems.ts';
import { checkConfigDocument } from './schema-check.ts';
import { errorMessage, isObject } from '../../schemas/json-value.ts';

/** A document that could not be loaded, as far as it could be read: later checks treat its name as taken, not as missing. */
export interface RejectedDocument {
  kind: Kind;
  name: string;
}

export interface DetailedLoad extends LoadResult {
  rejected: RejectedDocument[];
}

/** YAML anchors/aliases beyond this count are refused (the `yaml` package's guard against alias bombs). */
const MAX_YAML_ALIASES = 100;
const CONFIG_EXTENSION = /\.ya?ml$/i;

interface ParsedFile {
  /** Relative to the config directory, with forward slashes. */
  file: string;
  absolute: string;
  lineCounter: LineCounter;
  documents: Document.Parsed[];
}

const toSlashes = (path: string): string => path.split(sep).join('/');

function parseFile(text: string, file: string, absolute: string): ParsedFile {
  const lineCounter = new LineCounter();
  // YAML 1.2 core schema (`no` and `on` are strings), duplicate keys are errors, and explicit 1.1
  // tags (!!binary, !!timestamp) are not turned into Buffers and Dates no schema would accept.
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true, resolveKnownTags: false });
  return { file, absolute, lineCounter, documents: Array.isArray(documents) ? documents : [] };
}

/** The JS value of a document, or why it has none. */
function valueOf(doc: Document.Parsed): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) };
  } catch (error) {
    return { ok: false, reason: errorMessage(error) };
  }
}

/** kind and metadata.name of a document, if it says them plainly (even when the rest is wrong). */
function identityOf(value: unknown): { kind?: Kind; name?: string } {
  if (!isObject(value)) return {};
  const kind = ALL_KINDS.find((k) => k === value.kind);
  const name = isObject(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : undefined;
  return { ...(kind ? { kind } : {}), ...(name !== undefined ? { name } : {}) };
}

function rejectedOf(value: unknown): RejectedDocument[] {
  const { kind, name } = identityOf(value);
  return kind && name !== undefined ? [{ kind, name }] : [];
}

async function loadDocument(doc: Document.Parsed, parsed: ParsedFile, baseDir: string): Promise<DetailedLoad> {
  const { file, lineCounter } = parsed;
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  if (doc.errors.length > 0) {
    const partial = valueOf(doc);
    return {
      objects: [],
      problems: doc.errors.map((error) => ({ location: at(error.pos[0]), message: `invalid YAML: ${error.message}` })),
      rejected: partial.ok ? rejectedOf(partial.value) : [],
    };
  }
  // `---` with nothing after it, or a file of comments only.
  if (doc.contents === null) return { objects: [], problems: [], rejected: [] };
  const positions = documentPositions(doc, lineCounter, file, doc.range[0]);
  const read = valueOf(doc);
  if (!read.ok) return { objects: [], problems: [{ location: positions.start(), message: `invalid YAML: ${read.reason}` }], rejected: [] };
  if (read.value === null) return { objects: [], problems: [], rejected: [] };
  if (!isObject(read.value)) {
    return { objects: [], problems: [{ location: positions.start(), message: 'a config document must be a mapping with apiVersion, kind, metadata and spec' }], rejected: [] };
  }
  const issues = checkConfigDocument(read.value);
  if (issues.length > 0) {
    const identity = identityOf(read.value);
    const problems: ConfigProblem[] = issues.map((issue) => ({
      location: positions.locate(issue.path, issue.anchor),
      ...(identity.kind ? { kind: identity.kind, name: identity.name ?? '?' } : {}),
      message: issue.message,
    }));
    return { objects: [], problems, rejected: rejectedOf(read.value) };
  }
  const document = read.value as unknown as ConfigDocument;
  const expansion = await expandDocument(document, { file, baseDir, positions });
  // A site whose nested rule failed still exists; one whose own fields failed is rejected.
  const rejected = expansion.objects.some((o) => o.kind === document.kind && o.name === document.metadata.name) ? [] : rejectedOf(read.value);
  return { ...expansion, rejected };
}

async function loadParsedFile(parsed: ParsedFile, baseDir: string): Promise<DetailedLoad> {
  const result: DetailedLoad = { objects: [], problems: [], rejected: [] };
  for (const doc of parsed.documents) {
    const loaded = await loadDocument(doc, parsed, baseDir);
    result.objects.push(...loaded.objects);
    result.problems.push(...loaded.problems);
    result.rejected.push(...loaded.rejected);
  }
  return result;
}

/** Every config file under `dir`, sorted, skipping dot-files, dot-directories and node_modules. */
async function configFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (current: string): Promise<void> => {
    const entries = (await readdir(current, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      // Dot-files too: `.pre-commit-config.yaml` or `.gitlab-ci.yml` are not Aegis config.
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(current, entry.name);
      // Symbolic links are not followed: a link could loop or lead outside the repository.
      if (entry.isDirectory()) await walk(path);
      // The project file at the root holds settings of the directory (reconciler/project), not objects.
      else if (current === dir && entry.name === PROJECT_FILE) continue;
      else if (entry.isFile() && CONFIG_EXTENSION.test(entry.name)) found.push(path);
    }
  };
  await walk(dir);
  return found;
}

/**
 * Absolute paths named by `document_file:` anywhere in the parsed files. Those files hold OpenAPI
 * documents, not config, even when they sit in the directory with a `.yaml` name.
 */
function referencedDocumentFiles(files: readonly ParsedFile[], baseDir: string): Set<string> {
  const targets = new Set<string>();
  for (const parsed of files) {
    for (const doc of parsed.documents) {
      const read = valueOf(doc);
      if (!read.ok || !isObject(read.value) || !isObject(read.value.spec)) continue;
      const spec = read.value.spec;
      for (const holder of [spec, spec[NESTED_SCHEMA_FIELD]]) {
        if (!isObject(holder) || typeof holder.document_file !== 'string') continue;
        const target = documentFileTarget(holder.document_file, parsed.file, baseDir);
        if (target.ok) targets.add(target.path);
      }
    }
  }
  return targets;
}

/** Everything `loadConfigDir` finds, plus the documents that were rejected (for checks across documents). */
export async function loadConfigDirDetailed(dir: string): Promise<DetailedLoad> {
  const baseDir = resolve(dir);
  if (!(await stat(baseDir)).isDirectory()) throw new Error(`${dir} is not a directory`);
  const parsed: ParsedFile[] = [];
  for (const absolute of await configFiles(baseDir)) {
    parsed.push(parseFile(await readFile(absolute, 'utf8'), toSlashes(relative(baseDir, absolute)), absolute));
  }
  const documentFiles = referencedDocumentFiles(parsed, baseDir);
  const result: DetailedLoad = { objects: [], problems: [], rejected: [] };
  for (const file of parsed) {
    if (documentFiles.has(file.absolute)) continue;
    const loaded = await loadParsedFile(file, baseDir);
    result.objects.push(...loaded.objects);
    result.problems.push(...loaded.problems);
    result.rejected.push(...loaded.rejected);
  }
  return { ...result, problems: sortProblems(result.problems) };
}

/** Loads every `*.yaml` / `*.yml` under `dir`; locations are relative to `dir`. */
export async function loadConfigDir(dir: string): Promise<LoadResult> {
  const { objects, problems } = await loadConfigDirDetailed(dir);
  return { objects, problems };
}

/**
 * Loads one file's text. `file` is its path relative to `baseDir` (the config directory, by default
 * the working directory), which `document_file:` paths are resolved against and confined to.
 */
export async function loadConfigText(text: string, file: string, baseDir: string = process.cwd()): Promise<LoadResult> {
  const { objects, problems } = await loadConfigTextDetailed(text, file, baseDir);
  return { objects, problems };
}

export async function loadConfigTextDetailed(text: string, file: string, baseDir: string = process.cwd()): Promise<DetailedLoad> {
  const loaded = await loadParsedFile(parseFile(text, toSlashes(file), resolve(baseDir, file)), baseDir);
  return { ...loaded, problems: sortProblems(loaded.problems) };
}

