// The bundled template library: templates/*.yaml, one template per file named after its id, parsed
// and compiled once per process (the only module-level state) and selected by CVE id and tag.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Severity } from '../types.ts';
import { parseTemplateFile, TemplateError, type CveTemplate } from './template.ts';

export const TEMPLATES_DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'templates');

/** Parses every template of a directory, in file name order; any bad file is an error. */
export function loadTemplates(dir: string = TEMPLATES_DIR): CveTemplate[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  const seen = new Set<string>();
  return files.map((f) => {
    const template = parseTemplateFile(readFileSync(join(dir, f), 'utf8'), `templates/${f}`);
    if (f !== `${template.id}.yaml`) throw new TemplateError(`templates/${f}: the file must be named after the template id (${template.id}.yaml)`);
    if (seen.has(template.id)) throw new TemplateError(`templates/${f}: duplicate template id ${template.id}`);
    seen.add(template.id);
    return template;
  });
}

let bundled: readonly CveTemplate[] | undefined;

export function bundledTemplates(): readonly CveTemplate[] {
  return (bundled ??= Object.freeze(loadTemplates()));
}

export function templateById(id: string): CveTemplate | undefined {
  return bundledTemplates().find((t) => t.id === id);
}

export interface TemplateSelection {
  /** In library order, each once. */
  templates: CveTemplate[];
  /** Requested CVE ids no template covers (as given). */
  unknownCves: string[];
  /** Requested tags no template carries (as given). */
  unknownTags: string[];
}

/**
 * Templates covering any of `cves` (case-insensitive) plus those carrying any of `tags` — a union,
 * so `{cves: [X], tags: ['apache']}` runs X and every Apache template.
 */
export function selectTemplates(selection: { cves?: readonly string[]; tags?: readonly string[] }, from: readonly CveTemplate[] = bundledTemplates()): TemplateSelection {
  const cves = (selection.cves ?? []).map((c) => c.trim().toUpperCase());
  const tags = (selection.tags ?? []).map((t) => t.trim().toLowerCase());
  const templates = from.filter((t) => t.cveIds.some((c) => cves.includes(c)) || t.tags.some((tag) => tags.includes(tag)));
  return {
    templates,
    unknownCves: (selection.cves ?? []).filter((_, i) => !from.some((t) => t.cveIds.includes(cves[i]!))),
    unknownTags: (selection.tags ?? []).filter((_, i) => !from.some((t) => t.tags.includes(tags[i]!))),
  };
}

/** Every tag of the library, sorted. */
export function knownTags(from: readonly CveTemplate[] = bundledTemplates()): string[] {
  return [...new Set(from.flatMap((t) => t.tags))].sort();
}

export interface TemplateSummary {
  id: string;
  name: string;
  severity: Severity;
  cve_ids: string[];
  cwe_ids: string[];
  cvss_score: number | null;
  tags: string[];
  description: string;
  references: string[];
}

/** What the library holds, for a listing endpoint or the docs. */
export function templateCatalog(from: readonly CveTemplate[] = bundledTemplates()): TemplateSummary[] {
  return from.map((t) => ({
    id: t.id,
    name: t.name,
    severity: t.severity,
    cve_ids: [...t.cveIds],
    cwe_ids: [...t.cweIds],
    cvss_score: t.cvssScore,
    tags: [...t.tags],
    description: t.description,
    references: [...t.references],
  }));
}
