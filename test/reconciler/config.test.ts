// Loading a config repository: the valid example becomes exactly the expected objects, and the
// broken one reports every mistake with its file, line and column.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigDir } from '../../reconciler/config/load.ts';
import { loadAndValidate } from '../../reconciler/config/validate.ts';
import { formatProblem, type DesiredObject } from '../../reconciler/model.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url));
const VALID = `${FIXTURES}valid`;
const INVALID = `${FIXTURES}invalid`;

const where = (o: DesiredObject) => `${o.location.file}:${o.location.line}:${o.location.column}`;
const summary = (o: DesiredObject) => [o.kind, o.site ?? null, o.name, where(o)];
const find = (objects: DesiredObject[], kind: string, name: string, site?: string) => {
  const found = objects.find((o) => o.kind === kind && o.name === name && o.site === site);
  if (!found) throw new Error(`${kind}/${name} not loaded`);
  return found;
};

describe('loading the valid example repository', () => {
  it('finds every object, nested or flat, at its place, and nothing else', async () => {
    const { objects, problems } = await loadAndValidate(VALID);
    expect(problems.map(formatProblem)).toEqual([]);
    // Files in sorted order; .github/ (a dot-directory), README.md, the comments-only file and
    // openapi/shop.yaml (a document_file, so not config) contribute nothing.
    expect(objects.map(summary)).toEqual([
      ['ScanSchedule', null, 'nightly-shop', 'ops/schedule.yaml:1:1'],
      ['Webhook', null, 'security-channel', 'ops/schedule.yaml:13:1'],
      ['VirtualPatch', 'blog', 'comment-xss', 'rules/blog.yml:1:1'],
      ['IpAccessRule', 'blog', 'scanners', 'rules/blog.yml:13:1'],
      ['RateLimitRule', 'blog', 'api-per-key', 'rules/blog.yml:24:1'],
      ['ShieldSchema', 'blog', 'blog-api', 'rules/blog.yml:38:1'],
      ['ShieldSite', null, 'shop', 'sites.yaml:2:1'],
      // Nested rules point at their item; the nested schema at its `schema:` key.
      ['VirtualPatch', 'shop', 'search-sqli', 'sites.yaml:13:7'],
      ['IpAccessRule', 'shop', 'office', 'sites.yaml:20:7'],
      ['IpAccessRule', 'shop', 'ip-2001-db8--1', 'sites.yaml:25:7'],
      ['RateLimitRule', 'shop', 'login', 'sites.yaml:29:7'],
      ['ShieldSchema', 'shop', 'shop', 'sites.yaml:36:3'],
      ['ShieldSite', null, 'blog', 'sites.yaml:40:1'],
    ]);
  });

  it('gives each object the API fields with the schema defaults filled in', async () => {
    const { objects } = await loadConfigDir(VALID);
    expect(find(objects, 'ShieldSite', 'shop').spec).toEqual({
      domain: 'shop.example.com',
      origin_url: 'https://origin.shop.example.com',
      mode: 'block',
      path_case: 'insensitive',
      labels: { team: 'payments' },
    });
    // managed_rules has no default of its own: left out, it stays out (the live value is left alone).
    expect(find(objects, 'ShieldSite', 'blog').spec).toEqual({ domain: 'blog.example.com', origin_url: 'http://10.0.0.5:8080', mode: 'challenge', path_case: 'insensitive', labels: {} });
    expect(find(objects, 'VirtualPatch', 'search-sqli', 'shop').spec).toEqual({
      url_pattern: '/search',
      method: 'GET',
      match_param: 'q',
      match_regex: '(?i)union\\s+select',
      expires_in_days: 30,
      action: 'block',
      labels: {},
    });
    expect(find(objects, 'IpAccessRule', 'ip-2001-db8--1', 'shop').spec).toEqual({ type: 'ip', value: '2001:DB8::1', action: 'deny', note: '', labels: {} });
    expect(find(objects, 'IpAccessRule', 'scanners', 'blog').spec).toEqual({
      type: 'asn',
      value: 'AS64500',
      action: 'challenge',
      expires_at: '2999-01-01T00:00:00Z',
      note: '',
      labels: {},
    });
    expect(find(objects, 'RateLimitRule', 'login', 'shop').spec).toMatchObject({ escalate_to_deny_minutes: 0, labels: {} });
    expect(find(objects, 'RateLimitRule', 'api-per-key', 'blog').spec).toMatchObject({ identity: 'header:X-Api-Key', escalate_to_deny_minutes: 15 });
    // No `site`, `name` or `document_file` in any spec: they are identity, not API fields.
    for (const object of objects) {
      expect(Object.keys(object.spec), `${object.kind}/${object.name}`).not.toContain('site');
      expect(Object.keys(object.spec)).not.toContain('document_file');
      if (object.kind !== 'ScanSchedule') expect(Object.keys(object.spec)).not.toContain('name');
    }
  });

  it('reads document_file into the schema document, relative to the YAML file', async () => {
    const { objects } = await loadConfigDir(VALID);
    expect(find(objects, 'ShieldSchema', 'shop', 'shop').spec).toEqual({
      document: readFileSync(`${VALID}/openapi/shop.yaml`, 'utf8'),
      strictness: 'strict',
      labels: {},
    });
    const blogSchema = find(objects, 'ShieldSchema', 'blog-api', 'blog').spec;
    expect(blogSchema.strictness).toBe('standard');
    expect(String(blogSchema.document)).toMatch(/^openapi: 3\.1\.0\n/);
  });

  it('names a scan schedule after metadata.name unless spec.name says otherwise', async () => {
    const { objects } = await loadConfigDir(VALID);
    expect(find(objects, 'ScanSchedule', 'nightly-shop').spec).toEqual({
      name: 'nightly-shop',
      scan_type: 'dast',
      target: 'https://shop.example.com',
      cron: '0 3 * * *',
      timezone: 'Europe/Amsterdam',
      enabled: true,
      config: {},
      labels: {},
    });
    expect(find(objects, 'Webhook', 'security-channel').spec).toEqual({
      url: 'https://hooks.example.com/aegis',
      events: ['vulnerability.created', 'shield.block'],
      description: '',
      enabled: true,
      labels: {},
    });
  });
});

describe('loading the broken example repository', () => {
  it('reports every mistake at once, each at its file, line and column', async () => {
    const { problems } = await loadAndValidate(INVALID);
    expect(problems.map(formatProblem)).toEqual([
      'broken.yaml:8:3: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
      'rules.yaml:6:9 VirtualPatch/admin-probe: site "shopp" is not defined by any ShieldSite',
      'rules.yaml:30:18 ShieldSchema/shop-api: spec.document_file: "../../../../package.json" points outside the config directory',
      'rules.yaml:38:18 ShieldSchema/blog-api: spec.document_file: must be a path relative to the YAML file, not an absolute path',
      'sites.yaml:14:20 VirtualPatch/search-sqli: spec.virtual_patches[0].match_regex: is not a valid RE2 pattern: invalid perl operator: (?<=',
      'sites.yaml:15:7 VirtualPatch/search-sqli: VirtualPatch "search-sqli" of site shop is already defined at sites.yaml:10',
      'sites.yaml:22:14 IpAccessRule/cidr-10.0.0.1-8: spec.ip_access[0].value: "10.0.0.1/8" has host bits set; the network is 10.0.0.0/8',
      // A mapping missing a field is pointed at by its key; an unknown field by itself.
      'sites.yaml:29:1 ShieldSite/blog: spec.origin_url: is required',
      'sites.yaml:31:9 ShieldSite/blog: spec.mode: must be one of log, block, challenge',
      'sites.yaml:32:3 ShieldSite/blog: spec.colour: unknown field',
    ]);
  });

  it('keeps the problems as data: location, kind, name and message', async () => {
    const { problems } = await loadAndValidate(INVALID);
    expect(problems.find((p) => p.message.endsWith('unknown field'))).toEqual({
      location: { file: 'sites.yaml', line: 32, column: 3 },
      kind: 'ShieldSite',
      name: 'blog',
      message: 'spec.colour: unknown field',
    });
    // A syntax error belongs to no object.
    expect(problems[0]).toEqual({ location: { file: 'broken.yaml', line: 8, column: 3 }, message: expect.stringMatching(/^invalid YAML: /) });
  });

  it('still loads the objects that are fine', async () => {
    const { objects } = await loadConfigDir(INVALID);
    expect(objects.map((o) => `${o.kind}/${o.name}`)).toEqual([
      'VirtualPatch/admin-probe',
      'VirtualPatch/blog-probe',
      'ShieldSite/shop',
      'VirtualPatch/search-sqli',
      'VirtualPatch/search-sqli',
      'IpAccessRule/cidr-10.0.0.1-8',
    ]);
  });

  it('refuses a directory that does not exist', async () => {
    await expect(loadConfigDir(`${FIXTURES}does-not-exist`)).rejects.toThrow(/ENOENT/);
  });
});
