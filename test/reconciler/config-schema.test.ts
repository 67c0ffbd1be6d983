// The config document schema follows schemas/, nesting is only a way of writing, and
// `aegis validate` prints what the loader found.
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { configDocumentSchema, configSpecSchema, NAME_PATTERN } from '../../reconciler/config/envelope-schema.ts';
import { defaultIpRuleName } from '../../reconciler/config/expand.ts';
import { loadConfigText } from '../../reconciler/config/load.ts';
import { validateCommand } from '../../reconciler/config/validate-command.ts';
import { KINDS } from '../../schemas/index.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url));

function yaml(text: string): string {
  const lines = text.replace(/^\n/, '').split('\n');
  const indent = /^ */.exec(lines[0] ?? '')?.[0].length ?? 0;
  return lines.map((line) => line.slice(indent)).join('\n');
}

type ObjectSchema = { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };

describe('config document schema', () => {
  it('is a valid draft 2020-12 schema', () => {
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validateSchema(configDocumentSchema)).toBe(true);
  });

  it('follows every kind in schemas/: same fields, plus site for site kinds, all closed', () => {
    for (const { meta, spec } of KINDS) {
      const kind = meta.kind as Parameters<typeof configSpecSchema>[0];
      const config = configSpecSchema(kind) as ObjectSchema;
      expect(config.additionalProperties, kind).toBe(false);
      for (const field of Object.keys(spec.properties)) expect(Object.keys(config.properties), `${kind}.${field}`).toContain(field);
      expect(Object.keys(config.properties).includes('site'), kind).toBe(meta.parent === 'ShieldSite');
    }
    const site = configSpecSchema('ShieldSite') as ObjectSchema;
    const patches = site.properties.virtual_patches as { items: ObjectSchema };
    expect(patches.items.required).toEqual(['name', 'url_pattern', 'method', 'match_param', 'match_regex']);
    expect((site.properties.ip_access as { items: ObjectSchema }).items.required).toEqual(['type', 'value', 'action']);
  });

  it('makes unnamed nested IP rules a name of their own', () => {
    expect(defaultIpRuleName('cidr', '2001:DB8::/48')).toBe('cidr-2001-db8---48');
    expect(defaultIpRuleName('country', 'NL')).toBe('country-nl');
    expect(new RegExp(NAME_PATTERN).test(defaultIpRuleName('cidr', '198.51.100.0/24'))).toBe(true);
  });
});

describe('nesting', () => {
  it('expands into the same objects as separate documents', async () => {
    const nested = yaml(`
      apiVersion: aegis/v1
      kind: ShieldSite
      metadata: { name: shop }
      spec:
        domain: shop.example.com
        origin_url: https://origin.example.com
        mode: block
        virtual_patches:
          - { name: p, url_pattern: /a, method: GET, match_param: q, match_regex: x }
        ip_access:
          - { type: country, value: NL, action: allow }
        rate_limits:
          - { name: r, identity: api_key, url_pattern: /api/*, method: ANY, budget: 5, window_seconds: 1, action: challenge }
        schema:
          document: "openapi: 3.1.0"
          labels: { owner: api-team }
    `);
    const flat = yaml(`
      apiVersion: aegis/v1
      kind: ShieldSite
      metadata: { name: shop }
      spec: { domain: shop.example.com, origin_url: https://origin.example.com, mode: block }
      ---
      apiVersion: aegis/v1
      kind: VirtualPatch
      metadata: { name: p }
      spec: { site: shop, url_pattern: /a, method: GET, match_param: q, match_regex: x }
      ---
      apiVersion: aegis/v1
      kind: IpAccessRule
      metadata: { name: country-nl }
      spec: { site: shop, type: country, value: NL, action: allow }
      ---
      apiVersion: aegis/v1
      kind: RateLimitRule
      metadata: { name: r }
      spec: { site: shop, identity: api_key, url_pattern: /api/*, method: ANY, budget: 5, window_seconds: 1, action: challenge }
      ---
      apiVersion: aegis/v1
      kind: ShieldSchema
      metadata: { name: shop }
      spec: { site: shop, document: "openapi: 3.1.0", labels: { owner: api-team } }
    `);
    const strip = (r: Awaited<ReturnType<typeof loadConfigText>>) => r.objects.map(({ location: _location, ...rest }) => rest);
    const a = await loadConfigText(nested, 'nested.yaml');
    const b = await loadConfigText(flat, 'flat.yaml');
    expect(a.problems).toEqual([]);
    expect(b.problems).toEqual([]);
    expect(strip(a)).toEqual(strip(b));
    expect(strip(a)).toHaveLength(5);
  });
});

describe('aegis validate', () => {
  async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await validateCommand(args, { out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err };
  }

  it('passes the valid repository and its Terraform twin', async () => {
    expect(await run([`${FIXTURES}valid`])).toEqual({ code: 0, out: '13 objects, 0 errors, 0 warnings\n', err: '' });
    expect(await run([`${FIXTURES}terraform/cdk.tf.json`])).toEqual({ code: 0, out: '13 objects, 0 errors, 0 warnings\n', err: '' });
  });

  it('prints every problem and fails on errors', async () => {
    const { code, out } = await run([`${FIXTURES}invalid`]);
    expect(code).toBe(1);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe('broken.yaml:8:3: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]');
    expect(lines).toContain('sites.yaml:32:3 ShieldSite/blog: spec.colour: unknown field');
    expect(lines.at(-1)).toBe('6 objects, 10 errors, 0 warnings');
  });

  it('explains its usage', async () => {
    const { code, err } = await run([]);
    expect(code).toBe(2);
    expect(err).toMatch(/^usage: aegis validate DIR/);
  });
});
