// One schema-valid config document → the flat objects it asks for. A ShieldSite's nested rules
// become VirtualPatch / IpAccessRule / RateLimitRule / ShieldSchema objects of that site, exactly
// as if they had been written as separate documents, so both forms plan identically.
import type { ConfigProblem, DesiredObject, Kind, SourceLocation } from '../model.ts';
import { readDocumentFile } from './document-file.ts';
import { isSiteKind, NESTED_RULES, NESTED_SCHEMA_FIELD } from './envelope-schema.ts';
import { recordOrigin, type FieldOrigin } from './origins.ts';
import type { DocumentPositions } from './positions.ts';
import { applySpecDefaults, formatPath, type PathSegment } from './schema-check.ts';

/** A document that passed the config document schema. */
export interface ConfigDocument {
  apiVersion: string;
  kind: Kind;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

export interface ExpandContext {
  /** The YAML file, relative to `baseDir`, with forward slashes. */
  file: string;
  /** The config directory: `document_file` paths must stay inside it. */
  baseDir: string;
  positions: DocumentPositions;
}

export interface Expansion {
  objects: DesiredObject[];
  problems: ConfigProblem[];
}

/** One object to be: its fields as written and where they are in the document. */
interface Piece {
  kind: Kind;
  name: string;
  site?: string;
  fields: Record<string, unknown>;
  /** Path of the mapping holding the fields (`spec`, `spec.virtual_patches[1]`). */
  at: PathSegment[];
  location: SourceLocation;
}

/**
 * `<type>-<value>` in the characters of a name: an unnamed nested IP rule needs an identity that
 * stays the same as long as the rule does.
 */
export function defaultIpRuleName(type: string, value: string): string {
  return `${type}-${value}`.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}

const omit = (fields: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).filter(([key]) => !keys.includes(key)));

const asRecord = (value: unknown): Record<string, unknown> => value as Record<string, unknown>;

function piecesOf(doc: ConfigDocument, positions: DocumentPositions): Piece[] {
  const name = doc.metadata.name;
  if (doc.kind !== 'ShieldSite') {
    const site = isSiteKind(doc.kind) ? String(doc.spec.site) : undefined;
    return [{ kind: doc.kind, name, ...(site === undefined ? {} : { site }), fields: omit(doc.spec, ['site']), at: ['spec'], location: positions.start() }];
  }
  const nestedFields = [...NESTED_RULES.map((r) => r.field), NESTED_SCHEMA_FIELD];
  const pieces: Piece[] = [{ kind: 'ShieldSite', name, fields: omit(doc.spec, nestedFields), at: ['spec'], location: positions.start() }];
  for (const { field, kind } of NESTED_RULES) {
    const items = (doc.spec[field] as unknown[] | undefined) ?? [];
    items.forEach((item, index) => {
      const fields = asRecord(item);
      const at = ['spec', field, index];
      const itemName = typeof fields.name === 'string' ? fields.name : defaultIpRuleName(String(fields.type), String(fields.value));
      pieces.push({ kind, name: itemName, site: name, fields: omit(fields, ['name']), at, location: positions.locate(at, 'container') });
    });
  }
  const schema = doc.spec[NESTED_SCHEMA_FIELD];
  if (schema !== undefined) {
    const at = ['spec', NESTED_SCHEMA_FIELD];
    // A site has at most one schema, so the site's name identifies it.
    pieces.push({ kind: 'ShieldSchema', name, site: name, fields: asRecord(schema), at, location: positions.locate(at, 'container') });
  }
  return pieces;
}

async function expandPiece(piece: Piece, doc: ConfigDocument, context: ExpandContext): Promise<Expansion> {
  const { positions } = context;
  const spec: Record<string, unknown> = { ...piece.fields };
  const problem = (location: SourceLocation, message: string): ConfigProblem => ({ location, kind: piece.kind, name: piece.name, message });
  const fieldAt = (field: string, sub: readonly PathSegment[] = []): FieldOrigin => ({ path: formatPath([...piece.at, field, ...sub]), location: positions.locate([...piece.at, field, ...sub]) });
  let documentOrigin: FieldOrigin | undefined;

  if (piece.kind === 'ShieldSchema' && typeof spec.document_file === 'string') {
    documentOrigin = fieldAt('document_file');
    const read = await readDocumentFile(spec.document_file, context.file, context.baseDir);
    if (!read.ok) return { objects: [], problems: [problem(documentOrigin.location, `${documentOrigin.path}: ${read.reason}`)] };
    delete spec.document_file;
    spec.document = read.text;
    // Problems inside the document point into the document's own file.
    documentOrigin = { ...documentOrigin, source: read.file };
  }
  if (piece.kind === 'ScanSchedule' && spec.name === undefined) spec.name = doc.metadata.name;

  const issues = applySpecDefaults(piece.kind, spec, piece.at);
  if (issues.length > 0) return { objects: [], problems: issues.map((i) => problem(positions.locate(i.path, i.anchor), i.message)) };

  const object: DesiredObject = { kind: piece.kind, name: piece.name, ...(piece.site === undefined ? {} : { site: piece.site }), spec, location: piece.location };
  recordOrigin(object, {
    field: (field, sub = []) => {
      if (field === 'document' && documentOrigin) return documentOrigin;
      // Nested objects take their site from the enclosing ShieldSite.
      if (field === 'site' && piece.at.length > 1) return { path: 'metadata.name', location: positions.locate(['metadata', 'name']) };
      return fieldAt(field, sub);
    },
  });
  return { objects: [object], problems: [] };
}

export async function expandDocument(doc: ConfigDocument, context: ExpandContext): Promise<Expansion> {
  const result: Expansion = { objects: [], problems: [] };
  for (const piece of piecesOf(doc, context.positions)) {
    const { objects, problems } = await expandPiece(piece, doc, context);
    result.objects.push(...objects);
    result.problems.push(...problems);
  }
  return result;
}
