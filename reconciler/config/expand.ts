// One schema-valid config document → the flat objects it asks for. A ShieldSite's nested rules
// (the kinds whose registry entry has `config.nested`) become objects of that site, exactly as if
// they had been written as separate documents, so both forms plan identically.
import { childrenOf, isParentKind, kindEntry } from '../kinds/index.ts';
import type { ConfigProblem, DesiredObject, Kind, SourceLocation } from '../model.ts';
import { isSecretReference, revealSecret, type SecretReference } from '../kinds/secret-reference.ts';
import { readDocumentFile } from './document-file.ts';
import { resolveSecretReference } from './secret-file.ts';
import { isSiteKind } from './envelope-schema.ts';
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

export { defaultIpRuleName } from '../kinds/ip-access-rule.ts';

const omit = (fields: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).filter(([key]) => !keys.includes(key)));

const asRecord = (value: unknown): Record<string, unknown> => value as Record<string, unknown>;

function piecesOf(doc: ConfigDocument, positions: DocumentPositions): Piece[] {
  const name = doc.metadata.name;
  if (!isParentKind(doc.kind)) {
    const site = isSiteKind(doc.kind) ? String(doc.spec.site) : undefined;
    return [{ kind: doc.kind, name, ...(site === undefined ? {} : { site }), fields: omit(doc.spec, ['site']), at: ['spec'], location: positions.start() }];
  }
  const children = childrenOf(doc.kind);
  const nestedFields = children.flatMap((child) => (child.config.nested ? [child.config.nested.field] : []));
  const pieces: Piece[] = [{ kind: doc.kind, name, fields: omit(doc.spec, nestedFields), at: ['spec'], location: positions.start() }];
  for (const { kind, config } of children) {
    const nesting = config.nested;
    if (nesting?.form === 'list') {
      const items = (doc.spec[nesting.field] as unknown[] | undefined) ?? [];
      items.forEach((item, index) => {
        const fields = asRecord(item);
        const at = ['spec', nesting.field, index];
        const itemName = typeof fields.name === 'string' ? fields.name : (nesting.defaultName?.of(fields) ?? String(fields.name));
        pieces.push({ kind, name: itemName, site: name, fields: omit(fields, ['name']), at, location: positions.locate(at, 'container') });
      });
    }
    const single = nesting?.form === 'single' ? doc.spec[nesting.field] : undefined;
    if (nesting && single !== undefined) {
      const at = ['spec', nesting.field];
      // A singleton of the site, so the site's name identifies it.
      pieces.push({ kind, name, site: name, fields: asRecord(single), at, location: positions.locate(at, 'container') });
    }
  }
  return pieces;
}

async function expandPiece(piece: Piece, doc: ConfigDocument, context: ExpandContext): Promise<Expansion> {
  const { positions } = context;
  const spec: Record<string, unknown> = { ...piece.fields };
  const problem = (location: SourceLocation, message: string): ConfigProblem => ({ location, kind: piece.kind, name: piece.name, message });
  const fieldAt = (field: string, sub: readonly PathSegment[] = []): FieldOrigin => ({ path: formatPath([...piece.at, field, ...sub]), location: positions.locate([...piece.at, field, ...sub]) });
  const entry = kindEntry(piece.kind);
  const { fileField, nameField, secretField } = entry.config;
  /** Where the value of a field given as a file (a schema's `document_file`) came from. */
  let fileOrigin: FieldOrigin | undefined;

  const reference = fileField ? spec[fileField.fileField] : undefined;
  if (fileField && typeof reference === 'string') {
    fileOrigin = fieldAt(fileField.fileField);
    const read = await readDocumentFile(reference, context.file, context.baseDir);
    if (!read.ok) return { objects: [], problems: [problem(fileOrigin.location, `${fileOrigin.path}: ${read.reason}`)] };
    delete spec[fileField.fileField];
    spec[fileField.field] = read.text;
    // Problems inside the document point into the document's own file.
    fileOrigin = { ...fileOrigin, source: read.file };
  }
  if (nameField && spec[nameField] === undefined) spec[nameField] = doc.metadata.name;
  // Owned through its site (no labels of its own), so it must carry the name plans give it.
  if (entry.ownedWithParent && piece.site !== undefined && piece.name !== piece.site) {
    return { objects: [], problems: [problem(positions.locate(['metadata', 'name'], 'value'), `metadata.name: a ${piece.kind} is named after its site: ${JSON.stringify(piece.site)}`)] };
  }

  // A secret stays a reference (the value is read when it is sent); the API's schema checks the value.
  let secret: { field: string; reference: SecretReference } | undefined;
  if (secretField && isSecretReference(spec[secretField.field])) {
    const origin = fieldAt(secretField.field);
    const resolved = await resolveSecretReference(spec[secretField.field] as SecretReference, context.file, context.baseDir);
    if (!resolved.ok) return { objects: [], problems: [problem(origin.location, `${origin.path}: ${resolved.reason}`)] };
    secret = { field: secretField.field, reference: resolved.reference };
    spec[secretField.field] = revealSecret(resolved.reference, origin.path);
  }

  const issues = applySpecDefaults(piece.kind, spec, piece.at);
  if (secret) spec[secret.field] = secret.reference;
  if (issues.length > 0) return { objects: [], problems: issues.map((i) => problem(positions.locate(i.path, i.anchor), i.message)) };

  const object: DesiredObject = { kind: piece.kind, name: piece.name, ...(piece.site === undefined ? {} : { site: piece.site }), spec, location: piece.location };
  recordOrigin(object, {
    field: (field, sub = []) => {
      if (field === fileField?.field && fileOrigin) return fileOrigin;
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
