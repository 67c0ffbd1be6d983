// The checks one by one, on small config texts: schema messages and positions, checks across
// documents, document_file confinement and the OpenAPI document check.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfigText, loadConfigTextDetailed } from '../../reconciler/config/load.ts';
import { sortProblems } from '../../reconciler/config/problems.ts';
import { validateConfig } from '../../reconciler/config/validate.ts';
import { formatProblem } from '../../reconciler/model.ts';

/** Strips the indentation of the first line from every line, so YAML can be written in place. */
function yaml(text: string): string {
  const lines = text.replace(/^\n/, '').split('\n');
  const indent = /^ */.exec(lines[0] ?? '')?.[0].length ?? 0;
  return lines.map((line) => line.slice(indent)).join('\n');
}

const NOW = Date.parse('2030-01-01T00:00:00Z');
const workDirs: string[] = [];
afterAll(() => {
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
});

function workDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-config-'));
  workDirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** Load + validate one text as `config.yaml`, formatted. */
async function problemsOf(text: string, baseDir = workDir()): Promise<string[]> {
  const loaded = await loadConfigTextDetailed(text, 'config.yaml', baseDir);
  return sortProblems([...loaded.problems, ...validateConfig(loaded.objects, { rejected: loaded.rejected, now: NOW })]).map(formatProblem);
}

const SHOP = yaml(`
  apiVersion: aegis/v1
  kind: ShieldSite
  metadata:
    name: shop
  spec:
    domain: shop.example.com
    origin_url: https://origin.example.com
    mode: block
`);

describe('document schema', () => {
  it('accepts a minimal site', async () => {
    expect(await problemsOf(SHOP)).toEqual([]);
  });

  it('checks the envelope', async () => {
    const text = yaml(`
      apiVersion: aegis/v2
      kind: Shieldsite
      metadata:
        name: Shop_1
        labels: {}
      spec: {}
      status: {}
      ---
      - just a list
      ---
      apiVersion: aegis/v1
      kind: Webhook
    `);
    expect(await problemsOf(text)).toEqual([
      'config.yaml:1:13: apiVersion: must be aegis/v1',
      'config.yaml:2:7: kind: must be one of ShieldSite, VirtualPatch, IpAccessRule, RateLimitRule, ShieldSchema, ShieldCertificate, ScanSchedule, Webhook',
      'config.yaml:4:9: metadata.name: must match pattern "^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$"',
      'config.yaml:5:3: metadata.labels: unknown field',
      'config.yaml:7:1: status: unknown field',
      'config.yaml:9:1: a config document must be a mapping with apiVersion, kind, metadata and spec',
      'config.yaml:11:1 Webhook/?: metadata: is required',
      'config.yaml:11:1 Webhook/?: spec: is required',
    ]);
  });

  it('reports nested items by their path, and every field of them', async () => {
    const text = yaml(`
      ${SHOP.trimEnd().split('\n').join('\n      ')}
        labels:
          Team: x
          owner: 7
        virtual_patches:
          - name: p1
            url_pattern: search
            method: get
            match_param: q
        rate_limits:
          - identity: ip
            url_pattern: /login
            method: POST
            budget: 0
            window_seconds: 60
            action: block
        schema:
          strictness: strict
    `);
    expect(await problemsOf(text)).toEqual([
      'config.yaml:10:5 ShieldSite/shop: spec.labels: key "Team" must match pattern "^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$"',
      'config.yaml:11:12 ShieldSite/shop: spec.labels.owner: must be string',
      'config.yaml:13:7 ShieldSite/shop: spec.virtual_patches[0].match_regex: is required',
      'config.yaml:14:20 ShieldSite/shop: spec.virtual_patches[0].url_pattern: must match pattern "^/[\\x21-\\x7e]*$"',
      'config.yaml:15:15 ShieldSite/shop: spec.virtual_patches[0].method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, ANY',
      'config.yaml:18:7 ShieldSite/shop: spec.rate_limits[0].name: is required',
      'config.yaml:21:15 ShieldSite/shop: spec.rate_limits[0].budget: must be >= 1',
      'config.yaml:24:3 ShieldSite/shop: spec.schema: one of document or document_file is required',
    ]);
  });

  it('wants exactly one of document and document_file', async () => {
    const text = yaml(`
      ${SHOP.trimEnd().split('\n').join('\n      ')}
      ---
      apiVersion: aegis/v1
      kind: ShieldSchema
      metadata:
        name: both
      spec:
        site: shop
        document: "openapi: 3.1.0"
        document_file: api.yaml
    `);
    expect(await problemsOf(text)).toEqual(['config.yaml:14:1 ShieldSchema/both: spec: give only one of document or document_file']);
  });

  it('reports YAML syntax errors and duplicate keys with their position, and ignores empty documents', async () => {
    const text = yaml(`
      ---
      # nothing here
      ---
      apiVersion: aegis/v1
      kind: ShieldSite
      kind: ShieldSite
      metadata: { name: x }
      spec: {}
    `);
    expect(await problemsOf(text)).toEqual(['config.yaml:6:1: invalid YAML: Map keys must be unique']);
    expect(await loadConfigText('', 'empty.yaml')).toEqual({ objects: [], problems: [] });
  });

  it('keeps YAML 1.2 scalars as written: `no` is not false, a date stays text', async () => {
    const text = yaml(`
      apiVersion: aegis/v1
      kind: IpAccessRule
      metadata:
        name: norway
      spec:
        site: shop
        type: country
        value: NO
        action: deny
        expires_at: 2099-01-01T00:00:00Z
    `);
    const { objects, problems } = await loadConfigText(text, 'config.yaml');
    expect(problems).toEqual([]);
    expect(objects[0]?.spec).toMatchObject({ value: 'NO', expires_at: '2099-01-01T00:00:00Z' });
  });
});

describe('checks across documents', () => {
  const site = (name: string, domain: string) =>
    yaml(`
      apiVersion: aegis/v1
      kind: ShieldSite
      metadata:
        name: ${name}
      spec:
        domain: ${domain}
        origin_url: https://origin.example.com
        mode: block
    `);

  it('reports duplicate names (second occurrence, naming the first), domains and IP rules', async () => {
    const text = [
      site('shop', 'shop.example.com'),
      site('shop', 'other.example.com'),
      site('shop2', 'shop.example.com'),
      yaml(`
        apiVersion: aegis/v1
        kind: ShieldSite
        metadata:
          name: blog
        spec:
          domain: blog.example.com
          origin_url: https://origin.example.com
          mode: block
          ip_access:
            - type: ip
              value: 2001:db8::1
              action: deny
            - name: same-but-upper-case
              type: ip
              value: 2001:DB8:0::1
              action: allow
            - type: cidr
              value: 192.0.2.0/24
              action: deny
            - type: cidr
              value: 192.0.2.0/24
              action: deny
          virtual_patches:
            - { name: a, url_pattern: /a, method: GET, match_param: q, match_regex: x }
      `),
      // The same name on another site is a different object.
      yaml(`
        apiVersion: aegis/v1
        kind: VirtualPatch
        metadata:
          name: a
        spec: { site: shop, url_pattern: /a, method: GET, match_param: q, match_regex: x }
      `),
    ].join('---\n');
    expect(await problemsOf(text)).toEqual([
      'config.yaml:10:1 ShieldSite/shop: ShieldSite "shop" is already defined at config.yaml:1',
      'config.yaml:24:11 ShieldSite/shop2: spec.domain: "shop.example.com" is already the domain of ShieldSite/shop at config.yaml:1',
      'config.yaml:42:14 IpAccessRule/same-but-upper-case: spec.ip_access[1].value: site blog already has a rule for ip 2001:db8::1 (IpAccessRule/ip-2001-db8--1 at config.yaml:37)',
      'config.yaml:47:7 IpAccessRule/cidr-192.0.2.0-24: IpAccessRule "cidr-192.0.2.0-24" of site blog is already defined at config.yaml:44',
    ]);
  });

  it('allows one ShieldSchema per site, nested or flat', async () => {
    const text = [
      yaml(`
        ${SHOP.trimEnd().split('\n').join('\n        ')}
          schema:
            document: "openapi: 3.0.3"
      `),
      yaml(`
        apiVersion: aegis/v1
        kind: ShieldSchema
        metadata:
          name: shop-api
        spec:
          site: shop
          document: "openapi: 3.0.3"
      `),
    ].join('---\n');
    expect(await problemsOf(text)).toEqual([
      'config.yaml:12:1 ShieldSchema/shop-api: site shop already has a ShieldSchema (ShieldSchema/shop at config.yaml:9); a site has at most one',
    ]);
  });

  it('checks IP values, expiry, schedules, webhook URLs and reserved labels', async () => {
    const text = [
      yaml(`
        ${SHOP.trimEnd().split('\n').join('\n        ')}
          labels:
            aegis.dev/source: mine
          ip_access:
            - { type: asn, value: "64500", action: deny }
            - { type: country, value: XX, action: deny }
            - { type: ip, value: 10.0.0.1, action: deny, expires_at: "2020-01-01T00:00:00Z" }
      `),
      yaml(`
        apiVersion: aegis/v1
        kind: ScanSchedule
        metadata:
          name: weekly
        spec:
          name: Weekly SAST
          scan_type: sast
          target: https://shop.example.com/not-a-repo with space
          cron: "0 3 * * * *"
          timezone: Mars/Olympus
      `),
      yaml(`
        apiVersion: aegis/v1
        kind: Webhook
        metadata:
          name: leaky
        spec:
          url: https://user:secret@hooks.example.com/x
          events: [scan.failed]
      `),
    ].join('---\n');
    expect(await problemsOf(text)).toEqual([
      'config.yaml:10:5 ShieldSite/shop: spec.labels: key "aegis.dev/source" is reserved: labels under aegis.dev/ record the reconciler\'s ownership',
      'config.yaml:12:27 IpAccessRule/asn-64500: spec.ip_access[0].value: "64500" is not an autonomous system of the form AS<number> (AS64500)',
      'config.yaml:13:31 IpAccessRule/country-xx: spec.ip_access[1].value: "XX" is not an ISO 3166-1 alpha-2 country code (NL, US, …)',
      'config.yaml:14:62 IpAccessRule/ip-10.0.0.1: spec.ip_access[2].expires_at: must be in the future',
      'config.yaml:23:11 ScanSchedule/weekly: spec.target: must not contain whitespace',
      'config.yaml:24:9 ScanSchedule/weekly: spec.cron: must have 5 fields (minute hour day-of-month month day-of-week), got 6; seconds and @-macros are not supported',
      'config.yaml:25:13 ScanSchedule/weekly: spec.timezone: is not an IANA time zone (such as Europe/Amsterdam or UTC)',
      'config.yaml:32:8 Webhook/leaky: spec.url: must not contain credentials (user:password@); authenticate deliveries with the signing secret',
    ]);
  });

  it('does not report references to a site that exists but failed to load', async () => {
    const text = yaml(`
      apiVersion: aegis/v1
      kind: ShieldSite
      metadata:
        name: shop
      spec:
        domain: shop.example.com
      ---
      apiVersion: aegis/v1
      kind: VirtualPatch
      metadata:
        name: p
      spec: { site: shop, url_pattern: /a, method: GET, match_param: q, match_regex: x }
    `);
    expect(await problemsOf(text)).toEqual([
      'config.yaml:5:1 ShieldSite/shop: spec.origin_url: is required',
      'config.yaml:5:1 ShieldSite/shop: spec.mode: is required',
    ]);
  });
});

describe('OpenAPI documents', () => {
  const schemaDoc = (spec: string) =>
    `${SHOP}---\n${yaml(`
      apiVersion: aegis/v1
      kind: ShieldSchema
      metadata:
        name: api
      spec:
        site: shop
    `)}${spec}`;

  it('must parse and declare OpenAPI 3.x, inline or from a file', async () => {
    const dir = workDir({
      'openapi/broken.yaml': 'openapi: 3.0.3\npaths:\n  /x: [\n',
      'openapi/swagger.json': '{"swagger": "2.0", "paths": {}}',
    });
    expect(await problemsOf(schemaDoc('  document_file: openapi/broken.yaml\n'), dir)).toEqual([
      // A syntax error in a document file points into that file.
      'openapi/broken.yaml:4:1 ShieldSchema/api: spec.document_file: the OpenAPI document is not valid YAML or JSON: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    expect(await problemsOf(schemaDoc('  document_file: openapi/swagger.json\n'), dir)).toEqual([
      'config.yaml:16:18 ShieldSchema/api: spec.document_file: the OpenAPI document: Swagger 2.0 documents are not supported; convert the document to OpenAPI 3.0 or 3.1',
    ]);
    expect(await problemsOf(schemaDoc('  document: |\n    openapi: 3.0.3\n    paths: {\n'), dir)).toEqual([
      'config.yaml:16:13 ShieldSchema/api: spec.document: the OpenAPI document is not valid YAML or JSON (its line 3, column 1): Flow map in block collection must be sufficiently indented and end with a }',
    ]);
    expect(await problemsOf(schemaDoc('  document: just text\n'), dir)).toEqual([
      'config.yaml:16:13 ShieldSchema/api: spec.document: the OpenAPI document must be a mapping with an `openapi` field',
    ]);
  });

  it('keeps document_file inside the config directory', async () => {
    const outside = workDir({ 'secret.yaml': 'openapi: 3.0.3\n' });
    const dir = workDir({ 'nested/ok.yaml': 'openapi: 3.0.3\npaths: {}\n' });
    symlinkSync(join(outside, 'secret.yaml'), join(dir, 'link.yaml'));
    const at = (ref: string) => problemsOf(schemaDoc(`  document_file: ${ref}\n`), dir);
    expect(await at('nested/ok.yaml')).toEqual([]);
    expect(await at('./nested/../nested/ok.yaml')).toEqual([]);
    expect(await at('../secret.yaml')).toEqual(['config.yaml:16:18 ShieldSchema/api: spec.document_file: "../secret.yaml" points outside the config directory']);
    expect(await at(join(outside, 'secret.yaml'))).toEqual([
      'config.yaml:16:18 ShieldSchema/api: spec.document_file: must be a path relative to the YAML file, not an absolute path',
    ]);
    expect(await at('link.yaml')).toEqual(['config.yaml:16:18 ShieldSchema/api: spec.document_file: "link.yaml" leads outside the config directory through a symbolic link']);
    expect(await at('missing.yaml')).toEqual(['config.yaml:16:18 ShieldSchema/api: spec.document_file: missing.yaml does not exist']);
    expect(await at('nested')).toEqual(['config.yaml:16:18 ShieldSchema/api: spec.document_file: nested is not a file']);
  });
});
