// Writes live state as config files in the canonical layout, which each kind's registry entry
// describes (KindEntry.dump): a file per site with its rules nested (or beside it when config
// cannot nest them), plus one file per top-level kind (scan-schedules.yaml, webhooks.yaml). Names
// come from the ownership labels where present, so `dump` then `plan` with the same source shows
// no changes.
//
// Without a source, everything is written (adopting a live account). With one, only that source's
// objects, and an aegis.yaml naming the source so that a plan of the directory needs no flag.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TOP_LEVEL, childrenOf, type Entry } from '../kinds/index.ts';
import type { LiveObject, LiveState } from '../live/model.ts';
import { NAME_LABEL, SOURCE_LABEL, normaliseSource } from '../plan/ownership.ts';
import { PROJECT_FILE, writeProjectFile } from '../project/project-file.ts';

export { slug } from '../kinds/names.ts';

const API_VERSION = 'aegis/v1';

interface ConfigDocument {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

const document = (kind: string, name: string, spec: Record<string, unknown>): ConfigDocument => ({ apiVersion: API_VERSION, kind, metadata: { name }, spec });
const yamlOf = (documents: readonly ConfigDocument[]) => documents.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');

function nameOf(object: LiveObject, fallback: string): string {
  const label = object.labels[NAME_LABEL];
  if (!label) return fallback;
  const slash = label.lastIndexOf('/');
  return slash >= 0 ? label.slice(slash + 1) : label;
}

/** The environment variable a dumped secret reference names: `AEGIS_SHOP_PRIVATE_KEY` for site `shop`. */
export const secretVariable = (siteName: string, field: string): string => `AEGIS_${siteName}_${field}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_');

/** `<prefix>-<last 8 characters of the id>`, for an object without a name label. */
const generatedName = (object: LiveObject, prefix: string) => `${prefix}-${object.id.slice(-8)}`;

interface SchemaNode {
  default?: unknown;
  properties?: Record<string, SchemaNode>;
}

/** Drops nested fields that are null where null is their default (`tls.hsts`): config says as much by leaving them out. */
function withoutDefaultNulls(value: unknown, schema: SchemaNode | undefined): unknown {
  const properties = schema?.properties;
  if (!properties || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => !(v === null && properties[key]?.default === null))
      .map(([key, v]) => [key, withoutDefaultNulls(v, properties[key])]),
  );
}

/**
 * The config spec of a live object: its writable fields, without ownership labels or nulls. A
 * field config can give as a file (a schema's document) is left to the caller.
 */
function specOf(entry: Entry, object: LiveObject): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  const properties = entry.definition.spec.properties as Record<string, SchemaNode>;
  for (const field of Object.keys(properties)) {
    if (field === 'labels' || field === entry.config.fileField?.field) continue;
    const value = object.fields[field];
    if (value !== null && value !== undefined) spec[field] = withoutDefaultNulls(value, properties[field]);
  }
  const labels = Object.fromEntries(Object.entries(object.labels).filter(([k]) => k !== SOURCE_LABEL && k !== NAME_LABEL));
  if (Object.keys(labels).length > 0) spec.labels = labels;
  return spec;
}

export interface DumpOptions {
  /** Only the objects this source owns (its ownership labels), and an aegis.yaml naming it. Unset or empty: everything. */
  source?: string | undefined;
}

export interface DumpResult {
  /** Files written, relative to the output directory. */
  files: string[];
  /** Objects left out, and why: an owned rule on a site the source does not own cannot be written as config. */
  warnings: string[];
}

export async function dumpConfig(live: LiveState, outDir: string, options: DumpOptions = {}): Promise<DumpResult> {
  // Normalised as plans normalise it, so that `--source https://host/repo.git` finds `host/repo`. Empty means unset.
  const source = options.source ? normaliseSource(options.source) : undefined;
  const owned = (o: LiveObject) => source === undefined || (o.labels[SOURCE_LABEL] === source && Boolean(o.labels[NAME_LABEL]));
  const objects = live.objects.filter(owned);
  const warnings: string[] = [];
  if (source !== undefined) {
    const ownedTop = new Set(objects.filter((o) => o.siteId === undefined).map((o) => o.id));
    for (const orphan of objects.filter((o) => o.siteId !== undefined && !ownedTop.has(o.siteId))) {
      warnings.push(
        `skipped ${orphan.kind} ${orphan.labels[NAME_LABEL]} (${orphan.id}): it is labelled for source "${source}" but its site ${orphan.siteId} is not, ` +
          'and config can only hold rules of its own sites (plans of this source leave it alone)',
      );
    }
  }

  await mkdir(outDir, { recursive: true });
  const files: string[] = [];
  const write = async (file: string, text: string) => {
    await writeFile(join(outDir, file), text);
    files.push(file);
  };
  const usedNames = new Set<string>();

  for (const entry of TOP_LEVEL) {
    const layout = entry.dump;
    const ofKind = objects.filter((o) => o.kind === entry.kind);
    if (layout.placement === 'shared-file') {
      if (ofKind.length === 0) continue;
      await write(layout.file, yamlOf(ofKind.map((o) => document(entry.kind, nameOf(o, generatedName(o, layout.namePrefix)), specOf(entry, o)))));
      continue;
    }
    if (layout.placement !== 'own-file') throw new Error(`${entry.kind}: a top-level kind cannot be dumped with a parent`);
    for (const parent of ofKind) {
      let name = nameOf(parent, layout.fallbackName(parent.fields));
      while (usedNames.has(name)) name = `${name}-${parent.id.slice(-4)}`;
      usedNames.add(name);
      const spec = specOf(entry, parent);
      const documents = [document(entry.kind, name, spec)];
      for (const child of childrenOf(entry.kind)) {
        const childLayout = child.dump;
        if (childLayout.placement !== 'with-parent') throw new Error(`${child.kind}: a site-level kind is dumped with its site`);
        const nesting = child.config.nested;
        const items: Record<string, unknown>[] = [];
        for (const object of objects.filter((o) => o.kind === child.kind && o.siteId === parent.id)) {
          // A singleton is named after its parent, as config nests it.
          const childName = nameOf(object, child.singleton ? name : generatedName(object, childLayout.namePrefix));
          let childSpec = specOf(child, object);
          const fileField = child.config.fileField;
          if (fileField && childLayout.sideFileSuffix !== undefined) {
            const sideFile = `${child.singleton ? name : `${name}.${childName}`}${childLayout.sideFileSuffix}`;
            await write(sideFile, String(object.fields[fileField.field] ?? ''));
            childSpec = { [fileField.fileField]: sideFile, ...childSpec };
          }
          // A write-only secret cannot be read back: name a variable to put it in.
          const secretField = child.config.secretField;
          if (secretField) childSpec = { ...childSpec, [secretField.field]: { env: secretVariable(name, secretField.field) } };
          if (nesting?.form === 'list') items.push({ name: childName, ...childSpec });
          // Nested, a singleton is named after its site; one named otherwise keeps its own document.
          else if (nesting?.form === 'single' && childName === name) spec[nesting.field] = childSpec;
          else documents.push(document(child.kind, childName, { site: name, ...childSpec }));
        }
        if (nesting?.form === 'list' && items.length > 0) spec[nesting.field] = items;
      }
      await write(`${name}.yaml`, yamlOf(documents));
    }
  }

  if (source !== undefined) {
    await writeProjectFile(outDir, { source });
    files.push(PROJECT_FILE);
  }
  return { files, warnings };
}
