// Writes live state as config files in the canonical layout: one file per site with its rules
// nested, plus scan-schedules.yaml and webhooks.yaml. Names come from the ownership labels where
// present, so `dump` then `plan` with the same source shows no changes.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KINDS } from '../../schemas/index.ts';
import type { Kind } from '../model.ts';
import type { LiveObject, LiveState } from '../live/model.ts';
import { NAME_LABEL, SOURCE_LABEL } from '../plan/ownership.ts';

const SPEC_FIELDS = new Map(KINDS.map((k) => [k.meta.kind as Kind, Object.keys(k.spec.properties)]));
const API_VERSION = 'aegis/v1';

/** A label-safe name: lowercase letters, digits, `.`, `_`, `-`. */
export function slug(text: string): string {
  const cleaned = text.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return (cleaned || 'object').slice(0, 63).replace(/[^a-z0-9]+$/, '');
}

function nameOf(object: LiveObject, fallback: string): string {
  const label = object.labels[NAME_LABEL];
  if (!label) return fallback;
  const slash = label.lastIndexOf('/');
  return slash >= 0 ? label.slice(slash + 1) : label;
}

/** The config spec of a live object: its writable fields, without ownership labels or nulls. */
function specOf(object: LiveObject): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  for (const field of SPEC_FIELDS.get(object.kind) ?? []) {
    if (field === 'labels' || field === 'document') continue;
    const value = object.fields[field];
    if (value !== null && value !== undefined) spec[field] = value;
  }
  const labels = Object.fromEntries(Object.entries(object.labels).filter(([k]) => k !== SOURCE_LABEL && k !== NAME_LABEL));
  if (Object.keys(labels).length > 0) spec.labels = labels;
  return spec;
}

export interface DumpResult {
  files: string[];
}

export async function dumpConfig(live: LiveState, outDir: string): Promise<DumpResult> {
  await mkdir(outDir, { recursive: true });
  const files: string[] = [];
  const write = async (file: string, text: string) => {
    await writeFile(join(outDir, file), text);
    files.push(file);
  };
  const byKind = (kind: Kind) => live.objects.filter((o) => o.kind === kind);
  const usedSiteNames = new Set<string>();

  for (const site of byKind('ShieldSite')) {
    let name = nameOf(site, slug(String(site.fields.domain)));
    while (usedSiteNames.has(name)) name = `${name}-${site.id.slice(-4)}`;
    usedSiteNames.add(name);
    const rules = (kind: Kind, prefix: string) =>
      live.objects.filter((o) => o.kind === kind && o.siteId === site.id).map((o) => ({ name: nameOf(o, `${prefix}-${o.id.slice(-8)}`), ...specOf(o) }));
    const spec: Record<string, unknown> = specOf(site);
    const patches = rules('VirtualPatch', 'patch');
    const ipAccess = rules('IpAccessRule', 'ip');
    const limits = rules('RateLimitRule', 'limit');
    if (patches.length > 0) spec.virtual_patches = patches;
    if (ipAccess.length > 0) spec.ip_access = ipAccess;
    if (limits.length > 0) spec.rate_limits = limits;
    const schema = live.objects.find((o) => o.kind === 'ShieldSchema' && o.siteId === site.id);
    const documents = [{ apiVersion: API_VERSION, kind: 'ShieldSite', metadata: { name }, spec }];
    if (schema) {
      const documentFile = `${name}.openapi.yaml`;
      await write(documentFile, String(schema.fields.document ?? ''));
      // Nested, a schema is named after its site; one named otherwise keeps its own document.
      const schemaName = nameOf(schema, name);
      if (schemaName === name) spec.schema = { document_file: documentFile, ...specOf(schema) };
      else documents.push({ apiVersion: API_VERSION, kind: 'ShieldSchema', metadata: { name: schemaName }, spec: { site: name, document_file: documentFile, ...specOf(schema) } });
    }
    await write(`${name}.yaml`, documents.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'));
  }

  for (const [kind, file, prefix] of [
    ['ScanSchedule', 'scan-schedules.yaml', 'schedule'],
    ['Webhook', 'webhooks.yaml', 'webhook'],
  ] as const) {
    const objects = byKind(kind);
    if (objects.length === 0) continue;
    const docs = objects.map((o) => stringify({ apiVersion: API_VERSION, kind, metadata: { name: nameOf(o, `${prefix}-${o.id.slice(-8)}`) }, spec: specOf(o) }, { lineWidth: 0 }));
    await write(file, docs.join('---\n'));
  }
  return { files };
}
