// Reads the Terraform JSON that `cdktf synth` writes (cdk.tf.json) as config: each `aegis_*`
// resource becomes the DesiredObject its YAML twin would, so a CDKTF app can be validated, planned
// and diffed offline like a config directory. Site references must be the literal
// `${aegis_shield_site.NAME.id}` cdktf emits; anything else Terraform would only know at apply time.
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { KINDS } from '../../schemas/index.ts';
import { errorMessage, isObject, type JsonObject } from '../../schemas/json-value.ts';
import type { ConfigProblem, DesiredObject, Kind, SourceLocation } from '../model.ts';
import { kindEntry } from '../kinds/index.ts';
import { isSiteKind } from './envelope-schema.ts';
import type { DetailedLoad, RejectedDocument } from './load.ts';
import { recordOrigin } from './origins.ts';
import { documentPositions, type DocumentPositions } from './positions.ts';
import { sortProblems } from './problems.ts';
import { applySpecDefaults, checkTerraformAttributes, formatPath, type PathSegment } from './schema-check.ts';

/** Top-level blocks of Terraform JSON that hold no aegis resources (cdktf writes `//`, provider, terraform). */
const OTHER_BLOCKS = new Set(['//', 'provider', 'terraform', 'data', 'variable', 'output', 'locals', 'module', 'moved', 'import', 'check', 'removed']);
/** Resource meta-arguments that do not change what the resource is. */
const META_ARGUMENTS = new Set(['//', 'depends_on', 'lifecycle', 'provider']);
/** Meta-arguments that multiply a resource: the instances are only known to Terraform. */
const REPEATING_ARGUMENTS = new Set(['count', 'for_each']);

const SITE_TYPE = 'aegis_shield_site';
const SITE_REFERENCE = /^\$\{aegis_shield_site\.([A-Za-z_][A-Za-z0-9_-]*)\.id\}$/;

const KIND_BY_TYPE = new Map<string, Kind>(KINDS.map((k) => [k.meta.terraformType, k.meta.kind as Kind]));

/** Positions in the JSON text; without them (the text is JSON but not YAML-readable) everything points at 1:1. */
function positionsOf(text: string, file: string): DocumentPositions {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length === 0) return documentPositions(doc, lineCounter, file);
  const start: SourceLocation = { file, line: 1, column: 1 };
  return { start: () => start, locate: () => start };
}

function syntaxProblem(text: string, file: string, error: unknown): ConfigProblem {
  // V8 since Node 22 appends "(line L column C)"; the location is ours, so the message ends at the offset on every runtime.
  const message = errorMessage(error).replace(/ \(line \d+ column \d+\)$/, '');
  const offset = Number(/at position (\d+)/.exec(message)?.[1] ?? text.length);
  const before = text.slice(0, offset).split('\n');
  return { location: { file, line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 }, message: `invalid JSON: ${message}` };
}

/** The value with every null object member left out, at any depth (a null nested attribute is an unset one). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== null).map(([key, item]) => [key, withoutNulls(item)]));
}

/** Every string inside `value` that Terraform would interpolate, with its path. */
function* interpolations(value: unknown, path: PathSegment[]): Generator<PathSegment[]> {
  if (typeof value === 'string' && value.includes('${')) yield path;
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* interpolations(item, [...path, i]);
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) yield* interpolations(item, [...path, key]);
}

interface ResourceContext {
  positions: DocumentPositions;
  siteNames: ReadonlySet<string>;
}

function loadResource(type: string, kind: Kind, name: string, body: unknown, context: ResourceContext): DetailedLoad {
  const { positions } = context;
  const base: PathSegment[] = ['resource', type, name];
  const problem = (path: PathSegment[], anchor: 'key' | 'value' | 'container', message: string): ConfigProblem => ({ location: positions.locate(path, anchor), kind, name, message });
  const rejected: RejectedDocument[] = [{ kind, name }];
  if (!isObject(body)) return { objects: [], problems: [problem(base, 'value', `${formatPath(base)}: must be an object`)], rejected };

  const problems: ConfigProblem[] = [];
  const attributes: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (META_ARGUMENTS.has(key)) continue;
    if (REPEATING_ARGUMENTS.has(key)) problems.push(problem([...base, key], 'key', `${formatPath([...base, key])}: ${key} cannot be expanded offline; declare each object as its own resource`));
    // Terraform treats a null attribute as unset, inside nested attributes (`managed_rules`) too.
    else if (value !== null) attributes[key] = withoutNulls(value);
  }
  let site: string | undefined;
  if (isSiteKind(kind) && typeof attributes.site_id === 'string') {
    const reference = SITE_REFERENCE.exec(attributes.site_id)?.[1];
    const path = [...base, 'site_id'];
    if (reference === undefined) {
      problems.push(problem(path, 'value', `${formatPath(path)}: must reference a site of this configuration as \${${SITE_TYPE}.NAME.id}`));
    } else if (!context.siteNames.has(reference)) {
      problems.push(problem(path, 'value', `${formatPath(path)}: ${SITE_TYPE}.${reference} is not defined in this configuration`));
    } else site = reference;
  }
  const expressions = [...interpolations(attributes, base)].filter((path) => path[3] !== 'site_id');
  for (const path of expressions) {
    problems.push(problem(path, 'value', `${formatPath(path)}: Terraform expressions cannot be resolved offline; write the value itself`));
  }
  // An expression is reported once, as an expression, not again as a value of the wrong shape.
  const isExpression = (path: readonly PathSegment[]) => expressions.some((e) => e.length === path.length && e.every((s, i) => s === path[i]));
  const issues = checkTerraformAttributes(kind, attributes, base).filter((i) => !isExpression(i.path));
  problems.push(...issues.map((i) => problem(i.path, i.anchor, i.message)));
  if (problems.length > 0) return { objects: [], problems, rejected };

  const { site_id: _siteId, ...spec } = attributes;
  const defaults = applySpecDefaults(kind, spec, base);
  if (defaults.length > 0) return { objects: [], problems: defaults.map((i) => problem(i.path, i.anchor, i.message)), rejected };

  // A kind owned through its site (a certificate) carries the site's name, whatever the resource is called.
  const identity = site !== undefined && kindEntry(kind).ownedWithParent ? site : name;
  const object: DesiredObject = { kind, name: identity, ...(site === undefined ? {} : { site }), spec, location: positions.locate(base, 'key') };
  recordOrigin(object, {
    field: (field, sub = []) => {
      const path = [...base, field === 'site' ? 'site_id' : field, ...sub];
      return { path: formatPath(path), location: positions.locate(path) };
    },
  });
  return { objects: [object], problems: [], rejected: [] };
}

/**
 * Reads Terraform JSON text; `file` is the name problems are reported under. Besides objects and
 * problems, the answer lists the resources that were rejected (for `validateConfig`).
 */
export function loadTerraformJsonText(text: string, file: string): DetailedLoad {
  let root: unknown;
  try {
    root = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    return { objects: [], problems: [syntaxProblem(text, file, error)], rejected: [] };
  }
  const positions = positionsOf(text, file);
  if (!isObject(root)) return { objects: [], problems: [{ location: positions.start(), message: 'Terraform JSON must be an object with a `resource` block' }], rejected: [] };

  const result: DetailedLoad = { objects: [], problems: [], rejected: [] };
  for (const key of Object.keys(root)) {
    if (key !== 'resource' && !OTHER_BLOCKS.has(key)) result.problems.push({ location: positions.locate([key], 'key'), message: `${key}: unknown top-level block` });
  }
  const resources = root.resource ?? {};
  if (!isObject(resources)) {
    result.problems.push({ location: positions.locate(['resource']), message: 'resource: must be an object' });
    return result;
  }
  const sites = resources[SITE_TYPE];
  const siteNames = new Set(isObject(sites) ? Object.keys(sites).filter((k) => k !== '//') : []);
  const context: ResourceContext = { positions, siteNames };
  for (const [type, byName] of Object.entries(resources)) {
    if (type === '//') continue;
    const kind = KIND_BY_TYPE.get(type);
    if (!kind) {
      // Other providers' resources may share the stack; an `aegis_` type we do not know is a mistake.
      if (type.startsWith('aegis_')) {
        result.problems.push({ location: positions.locate(['resource', type], 'key'), message: `resource.${type}: unknown resource type (known: ${[...KIND_BY_TYPE.keys()].join(', ')})` });
      }
      continue;
    }
    if (!isObject(byName)) {
      result.problems.push({ location: positions.locate(['resource', type]), message: `resource.${type}: must be an object of named resources` });
      continue;
    }
    for (const [name, body] of Object.entries(byName)) {
      if (name === '//') continue;
      const loaded = loadResource(type, kind, name, body, context);
      result.objects.push(...loaded.objects);
      result.problems.push(...loaded.problems);
      result.rejected.push(...loaded.rejected);
    }
  }
  return { ...result, problems: sortProblems(result.problems) };
}

/** Reads a `cdktf synth` output file (cdktf.out/stacks/NAME/cdk.tf.json). Locations use `file` as given. */
export async function loadTerraformJson(file: string): Promise<DetailedLoad> {
  return loadTerraformJsonText(await readFile(file, 'utf8'), file.split('\\').join('/'));
}
