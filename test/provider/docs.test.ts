// The Registry docs under docs/provider/ are generated (npm run provider:docs) from the provider's
// own schema: the committed pages must be exactly the generator's output, and cover every
// resource, data source and attribute.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_DIR, existingPages, importIdFormat, renderAttributeType, renderProviderDocs, renderType, topLevelBlocks } from '../../provider/docs/generate.ts';
import { aegisProvider } from '../../provider/main.ts';

const pages = renderProviderDocs();
const provider = aegisProvider({ env: {} });

describe('provider docs', () => {
  it('the committed pages are the generator output (run `npm run provider:docs` after a schema change)', () => {
    expect(existingPages()).toEqual([...pages.keys()].sort());
    for (const [path, text] of pages) expect(readFileSync(join(DOCS_DIR, path), 'utf8'), `docs/provider/${path} is stale`).toBe(text);
  });

  it('has one page per resource and data source, in the Registry layout', () => {
    for (const r of provider.resources) {
      const page = pages.get(`resources/${r.typeName.replace(/^aegis_/, '')}.md`);
      expect(page, r.typeName).toBeDefined();
      expect(page).toMatch(/^---\npage_title: .+\nsubcategory: .*\ndescription: \|-\n {2}.+\n---\n/);
      expect(page).toContain(`# ${r.typeName} (Resource)`);
      expect(page).toContain(`resource "${r.typeName}" "`);
      expect(page).toContain(`terraform import ${r.typeName}.example ${importIdFormat(r.typeName, r.schema)}\n`);
    }
    for (const d of provider.dataSources) {
      const page = pages.get(`data-sources/${d.typeName.replace(/^aegis_/, '')}.md`);
      expect(page, d.typeName).toContain(`# ${d.typeName} (Data Source)`);
      expect(page).toContain(`data "${d.typeName}" "`);
    }
    expect(pages.get('index.md')).toContain('provider "aegis" {}');
  });

  it('lists every attribute under the right heading with its type', () => {
    const check = (page: string | undefined, attributes: typeof provider.schema.attributes) => {
      expect(page).toBeDefined();
      const text = page ?? '';
      for (const a of attributes) {
        const heading = a.required ? '### Required' : a.optional ? '### Optional' : '### Read-Only';
        const writeOnly = a.writeOnly ? ', [Write-only](https://developer.hashicorp.com/terraform/language/resources/ephemeral#write-only-arguments)' : '';
        const line = `- \`${a.name}\` (${renderAttributeType(a)}${a.sensitive ? ', Sensitive' : ''}${writeOnly}) `;
        expect(text, a.name).toContain(line);
        const section = text.slice(text.indexOf(heading));
        expect(section.slice(0, section.indexOf('\n### ', 4) === -1 ? undefined : section.indexOf('\n### ', 4)), `${a.name} under ${heading}`).toContain(line);
      }
    };
    check(pages.get('index.md'), provider.schema.attributes);
    for (const r of provider.resources) check(pages.get(`resources/${r.typeName.slice(6)}.md`), r.schema.attributes);
    for (const d of provider.dataSources) check(pages.get(`data-sources/${d.typeName.slice(6)}.md`), d.schema.attributes);
  });

  it('import ids: SITE_ID/RULE_ID for rules, SITE_ID for the schema and the certificate, ID otherwise', () => {
    const formats = Object.fromEntries(provider.resources.map((r) => [r.typeName, importIdFormat(r.typeName, r.schema)]));
    expect(formats).toEqual({
      aegis_shield_site: 'ID',
      aegis_virtual_patch: 'SITE_ID/RULE_ID',
      aegis_ip_access_rule: 'SITE_ID/RULE_ID',
      aegis_rate_limit_rule: 'SITE_ID/RULE_ID',
      aegis_shield_schema: 'SITE_ID',
      aegis_shield_certificate: 'SITE_ID',
      aegis_scan_schedule: 'ID',
      aegis_webhook: 'ID',
    });
  });

  it('types render as the Registry writes them', () => {
    expect([renderType('string'), renderType('number'), renderType('bool'), renderType(['list', 'string']), renderType(['set', 'string']), renderType(['map', 'string'])]).toEqual([
      'String',
      'Number',
      'Bool',
      'List of String',
      'Set of String',
      'Map of String',
    ]);
  });

  it('documents nested attributes as the Registry does: Attributes / Attributes List, a section each with their own groups', () => {
    const page = pages.get('resources/shield_site.md') ?? '';
    const site = provider.resources.find((r) => r.typeName === 'aegis_shield_site');
    const managed = site?.schema.attributes.find((a) => a.name === 'managed_rules');
    expect(managed && renderAttributeType(managed)).toBe('Attributes');
    const exclusions = managed?.nested?.attributes.find((a) => a.name === 'exclusions');
    expect(exclusions && renderAttributeType(exclusions)).toBe('Attributes List');
    expect(page).toMatch(/### Optional\n\n(- .*\n)*- `managed_rules` \(Attributes\) .*\(see \[below for nested schema\]\(#nestedatt--managed_rules\)\)\n/);
    const section = (title: string) => page.slice(page.indexOf(`### Nested Schema for \`${title}\``)).split('\n### ')[0] ?? '';
    expect(section('managed_rules')).toMatch(/Optional:\n\n- `enabled` \(Bool\) .*\n- `exclusions` \(Attributes List\) .*#nestedatt--managed_rules--exclusions.*\n- `paranoia_level` \(Number\) /);
    expect(page).toContain('<a id="nestedatt--managed_rules--exclusions"></a>');
    expect(section('managed_rules.exclusions')).toMatch(/Required:\n\n- `rules` \(List of String\) .*\n\nOptional:\n\n- `parameter` \(String\) .*\n- `url_pattern` \(String\) /);
    // The data source reads the same field as a plain (read-only) object type.
    expect(pages.get('data-sources/shield_site.md')).toContain('- `managed_rules` (Object) ');
    expect(pages.get('data-sources/shield_site.md')).toContain('### Nested Schema for `managed_rules.exclusions`\n\nRead-Only:\n\n- `parameter` (String)\n- `rules` (List of String)\n- `url_pattern` (String)\n');
  });

  it('reads top-level HCL blocks, one-line ones included', () => {
    const blocks = topLevelBlocks('provider "aegis" {}\n\nresource "aegis_x" "a" {\n  labels = { a = "b" }\n  nested {\n  }\n}\n# note\ndata "aegis_y" "b" {\n}\n');
    expect(blocks.map((b) => [b.keyword, ...b.labels])).toEqual([['provider', 'aegis'], ['resource', 'aegis_x', 'a'], ['data', 'aegis_y', 'b']]);
    expect(blocks[1]?.text).toBe('resource "aegis_x" "a" {\n  labels = { a = "b" }\n  nested {\n  }\n}');
  });
});
