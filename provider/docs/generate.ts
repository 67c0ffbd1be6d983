// Terraform Registry documentation for the Aegis provider (`npm run provider:docs`): docs/provider/
// index.md, resources/<name>.md and data-sources/<name>.md in the layout tfplugindocs produces and
// the Registry renders. Everything about attributes comes from the provider's own schema
// (aegisProvider(), itself derived from schemas/); examples are the blocks of
// examples/terraform/main.tf, so the example that the end-to-end test applies is the one users read.
// test/provider/docs.test.ts fails when the committed pages differ from this output.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AttributeSchema, BlockSchema, TfType } from '../framework/contract.ts';
import { entryForTerraformType } from '../../reconciler/kinds/index.ts';
import { aegisProvider } from '../main.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DOCS_DIR = join(ROOT, 'docs/provider');
export const EXAMPLE_FILE = join(ROOT, 'examples/terraform/main.tf');
/**
 * Configurations of their own beside it (examples/terraform/<name>/main.tf), for resources the main
 * example cannot hold: a certificate needs a key and a certificate for its site's domain. They
 * give the examples of the types the main file lacks.
 */
export const EXTRA_EXAMPLES_DIR = join(ROOT, 'examples/terraform');

/** The main example, then the blocks of the extra configurations whose resource types it does not show. */
export function exampleBlocks(mainHcl: string = readFileSync(EXAMPLE_FILE, 'utf8')): HclBlock[] {
  const blocks = topLevelBlocks(mainHcl);
  const shown = (b: HclBlock) => blocks.some((m) => m.keyword === b.keyword && m.labels[0] === b.labels[0]);
  const extra = readdirSync(EXTRA_EXAMPLES_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .flatMap((name) => {
      try {
        return topLevelBlocks(readFileSync(join(EXTRA_EXAMPLES_DIR, name, 'main.tf'), 'utf8'));
      } catch {
        return [];
      }
    })
    .filter((b) => (b.keyword === 'resource' || b.keyword === 'data') && !shown(b));
  return [...blocks, ...extra];
}
const PREFIX = 'aegis_';

/** Registry sub-categories (the navigation groups) of data sources not named like a resource. */
const DATA_SOURCE_SUBCATEGORIES: Record<string, string> = { aegis_shield_sites: 'Shield' };

/** A resource's group comes from its kind's registry entry; a data source named like a resource shares it. */
const subcategoryOf = (typeName: string): string => entryForTerraformType(typeName)?.provider.subcategory ?? DATA_SOURCE_SUBCATEGORIES[typeName] ?? '';

/** One top-level block of an HCL file: `resource "aegis_x" "name" { … }`. */
export interface HclBlock {
  keyword: string;
  labels: string[];
  text: string;
}

/**
 * Splits an HCL file into its top-level blocks. Deliberately simple: a block starts with a line
 * `keyword "label" … {` at column 0 and ends at the next line that is exactly `}` (the layout
 * `terraform fmt` writes), or is a one-line `keyword "label" {}`.
 */
export function topLevelBlocks(hcl: string): HclBlock[] {
  const lines = hcl.split('\n');
  const blocks: HclBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = /^([a-z_]+)((?:\s+"[^"]*")*)\s*\{\s*(\}\s*)?$/.exec(lines[i] ?? '');
    if (!start) continue;
    let end = i;
    if (!start[3]) while (end < lines.length && lines[end] !== '}') end++;
    const labels = [...(start[2] ?? '').matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
    blocks.push({ keyword: start[1] ?? '', labels, text: lines.slice(i, end + 1).join('\n') });
    i = end;
  }
  return blocks;
}

/** `String`, `Number`, `Bool`, `List of String`, `Map of Number`, `Set of Object`, … */
export function renderType(type: TfType): string {
  if (typeof type === 'string') return type === 'bool' ? 'Bool' : type === 'dynamic' ? 'Dynamic' : type.charAt(0).toUpperCase() + type.slice(1);
  const [wrapper, inner] = type;
  if (wrapper === 'object') return 'Object';
  return `${wrapper.charAt(0).toUpperCase()}${wrapper.slice(1)} of ${renderType(inner)}`;
}

/** An attribute's type as the Registry shows it: nested attributes are `Attributes` (single) or `Attributes List`. */
export function renderAttributeType(attribute: AttributeSchema): string {
  if (attribute.nested) return attribute.nested.nesting === 'single' ? 'Attributes' : 'Attributes List';
  return renderType(attribute.type);
}

function objectFields(type: TfType): Record<string, TfType> | undefined {
  if (typeof type === 'string') return undefined;
  if (type[0] === 'object') return type[1] as Record<string, TfType>;
  return objectFields(type[1] as TfType);
}

/** The anchor tfplugindocs gives a nested schema section: `nestedatt--a--b` (nested attributes), `nestedobjatt--a--b` (object types). */
const anchorOf = (prefix: 'nestedatt' | 'nestedobjatt', path: readonly string[]): string => `${prefix}--${path.join('--')}`;

function attributeLine(a: AttributeSchema, path: readonly string[] = []): string {
  const flags = [renderAttributeType(a), ...(a.sensitive ? ['Sensitive'] : []), ...(a.writeOnly ? ['[Write-only](https://developer.hashicorp.com/terraform/language/resources/ephemeral#write-only-arguments)'] : [])].join(', ');
  const full = [...path, a.name];
  const below = a.nested ? ` (see [below for nested schema](#${anchorOf('nestedatt', full)}))` : objectFields(a.type) ? ` (see [below for nested schema](#${anchorOf('nestedobjatt', full)}))` : '';
  return `- \`${a.name}\` (${flags}) ${a.description.replace(/\s*\n\s*/g, ' ').trim()}${below}`;
}

/** Required / Optional / Read-Only groups of attributes, each sorted by name. */
function attributeGroups(attributes: readonly AttributeSchema[]): [string, AttributeSchema[]][] {
  const sorted = (list: AttributeSchema[]) => [...list].sort((x, y) => x.name.localeCompare(y.name));
  return [
    ['Required', sorted(attributes.filter((a) => a.required))],
    ['Optional', sorted(attributes.filter((a) => !a.required && a.optional))],
    ['Read-Only', sorted(attributes.filter((a) => !a.required && !a.optional && a.computed))],
  ];
}

/** The sections below the top-level lists: one per nested attribute or object type, depth first. */
function nestedSections(attributes: readonly AttributeSchema[], path: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of attributes) {
    const full = [...path, a.name];
    if (a.nested) {
      out.push(`<a id="${anchorOf('nestedatt', full)}"></a>`, `### Nested Schema for \`${full.join('.')}\``, '');
      for (const [title, group] of attributeGroups(a.nested.attributes)) {
        if (group.length === 0) continue;
        out.push(`${title}:`, '', ...group.map((sub) => attributeLine(sub, full)), '');
      }
      out.push(...nestedSections(a.nested.attributes, full));
      continue;
    }
    out.push(...objectTypeSections(a.type, full));
  }
  return out;
}

/** Computed object types (data sources, `operations`) are read-only throughout: names and types. */
function objectTypeSections(type: TfType, path: readonly string[]): string[] {
  const fields = objectFields(type);
  if (!fields) return [];
  const entries = Object.entries(fields).sort(([x], [y]) => x.localeCompare(y));
  const out = [`<a id="${anchorOf('nestedobjatt', path)}"></a>`, `### Nested Schema for \`${path.join('.')}\``, '', 'Read-Only:', ''];
  for (const [name, fieldType] of entries) {
    const below = objectFields(fieldType) ? ` (see [below for nested schema](#${anchorOf('nestedobjatt', [...path, name])}))` : '';
    out.push(`- \`${name}\` (${renderType(fieldType)})${below}`);
  }
  out.push('');
  for (const [name, fieldType] of entries) out.push(...objectTypeSections(fieldType, [...path, name]));
  return out;
}

function schemaSection(block: BlockSchema): string {
  const out = ['## Schema', ''];
  for (const [title, attributes] of attributeGroups(block.attributes)) {
    if (attributes.length === 0) continue;
    out.push(`### ${title}`, '', ...attributes.map((a) => attributeLine(a)), '');
  }
  out.push(...nestedSections(block.attributes, []));
  return out.join('\n');
}

function frontMatter(pageTitle: string, subcategory: string, description: string): string {
  const body = description.trim().split('\n').map((line) => `  ${line}`).join('\n');
  return ['---', `page_title: ${JSON.stringify(pageTitle)}`, `subcategory: ${JSON.stringify(subcategory)}`, 'description: |-', body, '---', ''].join('\n');
}

function examples(blocks: HclBlock[], keyword: string, typeName: string): string {
  const found = blocks.filter((b) => b.keyword === keyword && b.labels[0] === typeName);
  if (found.length === 0) throw new Error(`examples/terraform/main.tf has no ${keyword} "${typeName}" block to use as its example`);
  return ['## Example Usage', '', '```terraform', found.map((b) => b.text).join('\n\n'), '```', ''].join('\n');
}

/** The import id: a singleton (the schema) is one per site, site-level rules are addressed through their site. */
export function importIdFormat(typeName: string, block: BlockSchema): string {
  if (entryForTerraformType(typeName)?.singleton) return 'SITE_ID';
  return block.attributes.some((a) => a.name === 'site_id' && a.required) ? 'SITE_ID/RULE_ID' : 'ID';
}

/** Every page, by path relative to docs/provider/. */
export function renderProviderDocs(exampleHcl: string = readFileSync(EXAMPLE_FILE, 'utf8')): Map<string, string> {
  const provider = aegisProvider({ env: {} });
  const blocks = exampleBlocks(exampleHcl);
  const pages = new Map<string, string>();
  const providerHeader = blocks.filter((b) => b.keyword === 'terraform' || b.keyword === 'provider').map((b) => b.text).join('\n\n');

  pages.set(
    'index.md',
    [
      frontMatter('Aegis Provider', '', provider.schema.description),
      '# Aegis Provider',
      '',
      provider.schema.description,
      '',
      'The provider talks to the Aegis API with an API key whose scopes cover the kinds it manages. Every object it creates is one API request; an object deleted outside Terraform is planned for creation again, and fields the API cannot change in place force replacement.',
      '',
      '## Example Usage',
      '',
      '```terraform',
      providerHeader,
      '```',
      '',
      'With `api_url` and `api_key` left out, the provider reads `AEGIS_API_URL` and `AEGIS_API_KEY`.',
      '',
      schemaSection(provider.schema),
    ].join('\n'),
  );

  for (const resource of provider.resources) {
    const { typeName, schema } = resource;
    const idFormat = importIdFormat(typeName, schema);
    pages.set(
      `resources/${typeName.slice(PREFIX.length)}.md`,
      [
        frontMatter(`${typeName} Resource - terraform-provider-aegis`, subcategoryOf(typeName), schema.description),
        `# ${typeName} (Resource)`,
        '',
        schema.description,
        '',
        examples(blocks, 'resource', typeName),
        schemaSection(schema),
        '## Import',
        '',
        `Import is supported using the following syntax (the id is \`${idFormat}\`):`,
        '',
        '```shell',
        `terraform import ${typeName}.example ${idFormat}`,
        '```',
        '',
      ].join('\n'),
    );
  }

  for (const dataSource of provider.dataSources) {
    const { typeName, schema } = dataSource;
    pages.set(
      `data-sources/${typeName.slice(PREFIX.length)}.md`,
      [
        frontMatter(`${typeName} Data Source - terraform-provider-aegis`, subcategoryOf(typeName), schema.description),
        `# ${typeName} (Data Source)`,
        '',
        schema.description,
        '',
        examples(blocks, 'data', typeName),
        schemaSection(schema),
      ].join('\n'),
    );
  }
  for (const [path, text] of pages) pages.set(path, `${text.trimEnd()}\n`);
  return pages;
}

/** Markdown files currently under docs/provider/, relative to it. */
export function existingPages(dir: string = DOCS_DIR): string[] {
  const found: string[] = [];
  const walk = (sub: string) => {
    let entries;
    try {
      entries = readdirSync(join(dir, sub), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) found.push(rel);
    }
  };
  walk('');
  return found.sort();
}

export function writeProviderDocs(dir: string = DOCS_DIR): string[] {
  const pages = renderProviderDocs();
  for (const stale of existingPages(dir)) if (!pages.has(stale)) rmSync(join(dir, stale));
  for (const [path, text] of pages) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return [...pages.keys()];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const written = writeProviderDocs();
  console.log(`wrote ${written.length} pages to ${DOCS_DIR}`);
}
