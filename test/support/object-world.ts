// One of every kind of object a caller can name in a path, made through the API with one key (a
// "world"), and a probe that calls every route of the served OpenAPI document that names an object
// with another caller's key on that world. Isolation tests use it both ways: the sandbox (a test
// key against live objects, test/api/sandbox.test.ts) and organisations (test/security/cross-org).
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { recordDiscovery } from '../../api/attack-surface/inventory.ts';
import { eventually } from './gateway.ts';
import type { GithubStandIn } from './providers/github/index.ts';
import { request, type CallOptions, type Response, type TestServer } from './server.ts';

export interface World {
  key: string;
  extraKey: string;
  site: string;
  patch: string;
  ipRule: string;
  rateLimit: string;
  schedule: string;
  webhook: string;
  webhookSecret: string;
  delivery: string;
  repo: string;
  sync: string;
  scan: string;
  vulnerability: string;
  event: string;
  integration: string;
  asset: string;
  /** Organisation-level objects (only for worlds made with `people: true`). */
  member?: string;
  invite?: string;
  domain?: string;
}

export interface Delivered {
  body: string;
  headers: IncomingMessage['headers'];
}

/** What a world's objects point at: a git repository on disk and a webhook receiver. */
export interface WorldFixtures {
  repoDir: string;
  receiverUrl: string;
  delivered: Delivered[];
  close(): Promise<void>;
}

export async function startWorldFixtures(): Promise<WorldFixtures> {
  const delivered: Delivered[] = [];
  const receiver: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      delivered.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const repoDir = await mkdtemp(join(tmpdir(), 'aegis-world-'));
  await cp('test/fixtures/scanners/secrets/repo', join(repoDir, 'secrets'), { recursive: true });
  // An empty config directory: syncs run (and are recorded) without making objects.
  await mkdir(join(repoDir, 'config'));
  await writeFile(join(repoDir, 'config', '.keep'), '');
  const git = (...args: string[]) => execFileSync('git', ['-C', repoDir, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return {
    repoDir,
    receiverUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    delivered,
    async close() {
      await new Promise((resolve) => receiver.close(resolve));
      await rm(repoDir, { recursive: true, force: true });
    },
  };
}

export const SCHEMA_DOCUMENT = { openapi: '3.0.3', info: { title: 'shop', version: '1' }, paths: { '/items': { get: { responses: { '200': { description: 'ok' } } } } } };

async function created<T = any>(res: Response<T>, status = 201): Promise<T> {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

export interface WorldOptions {
  /** Names the webhook receiver's path, so deliveries tell worlds apart. */
  label: string;
  github: GithubStandIn;
  /** Also a member, an invite and a domain claim (organisation-level objects: live keys only). */
  people?: boolean;
}

/** Makes one of every object with `key` (on a server run with allowLocalSources and allowPrivateTargets). */
export async function populateWorld(t: TestServer, fixtures: WorldFixtures, key: string, options: WorldOptions): Promise<World> {
  const as = (method: string, path: string, body?: unknown) => request<any>(t.url, method, path, { key, ...(body !== undefined ? { body } : {}) });
  const w = { key } as World;
  w.extraKey = (await created(await as('POST', '/api/v1/api-keys', { name: `${options.label} extra`, scopes: ['scans:read'] }))).id;
  // The same domain in every world: uniqueness is per organisation and environment.
  w.site = (await created(await as('POST', '/api/v1/shield/sites', { domain: 'shop.example.com', origin_url: 'https://origin.example.com', mode: 'block' }))).id;
  w.patch = (await created(await as('POST', `/api/v1/shield/sites/${w.site}/virtual-patches`, { url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: 'attack' }))).id;
  w.ipRule = (await created(await as('POST', `/api/v1/shield/sites/${w.site}/ip-access`, { type: 'ip', value: '203.0.113.5', action: 'deny' }))).id;
  w.rateLimit = (await created(await as('POST', `/api/v1/shield/sites/${w.site}/rate-limits`, { identity: 'ip', url_pattern: '/login', method: 'POST', budget: 5, window_seconds: 60, action: 'block' }))).id;
  expect((await request(t.url, 'PUT', `/api/v1/shield/sites/${w.site}/schema`, { key, body: SCHEMA_DOCUMENT })).status).toBeLessThan(300);
  w.schedule = (await created(await as('POST', '/api/v1/scan-schedules', { name: 'nightly', scan_type: 'secrets', target: `file://${fixtures.repoDir}`, cron: '0 3 * * *' }))).id;
  const webhook = await created(await as('POST', '/api/v1/webhooks', { url: `${fixtures.receiverUrl}/${options.label}`, events: ['*'] }));
  w.webhook = webhook.id;
  w.webhookSecret = webhook.secret;
  w.repo = (await created(await as('POST', '/api/v1/config-repos', { name: 'config', url: `file://${fixtures.repoDir}`, path: 'config', auto_sync: false }))).id;
  await created(await as('POST', `/api/v1/config-repos/${w.repo}/sync`, {}), 202);
  await eventually(async () => ((await as('GET', `/api/v1/config-repos/${w.repo}/syncs`)).body.data?.length ?? 0) > 0, 30_000, 100);
  w.sync = (await as('GET', `/api/v1/config-repos/${w.repo}/syncs`)).body.data[0].id;
  const scan = await created(await as('POST', '/api/v1/secrets/scans', { target: `file://${fixtures.repoDir}` }), 202);
  w.scan = scan.id;
  await eventually(async () => ['completed', 'failed', 'canceled'].includes((await as('GET', `/api/v1/scans/${scan.id}`)).body.status), 60_000, 100);
  expect((await as('GET', `/api/v1/scans/${scan.id}`)).body).toMatchObject({ status: 'completed' });
  const findings = (await as('GET', `/api/v1/vulnerabilities?scan_id=${scan.id}`)).body.data;
  expect(findings.length).toBeGreaterThan(0);
  w.vulnerability = findings[0].id;
  await eventually(async () => ((await as('GET', `/api/v1/webhooks/${w.webhook}/deliveries`)).body.data?.length ?? 0) > 0, 30_000, 100);
  w.delivery = (await as('GET', `/api/v1/webhooks/${w.webhook}/deliveries`)).body.data[0].id;
  w.event = (await as('GET', '/api/v1/events')).body.data[0].id;
  w.integration = (await created(await as('POST', '/api/v1/integrations/github/connect', { token: options.github.issueToken(`octo-${options.label}`) }))).id;
  // Cloud discovery needs AWS; one discovered asset is written as a discovery would write it.
  const { org_id: space } = await t.server.database.db.selectFrom('integrations').select('org_id').where('id', '=', w.integration).executeTakeFirstOrThrow();
  const asset = await recordDiscovery(t.server.database.db, { orgId: space, integrationId: w.integration, provider: 'aws' }, [{ scope: 'elbv2:us-east-1', assets: [{ kind: 'load_balancer', host: 'shop-lb.us-east-1.elb.amazonaws.com', resourceId: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/shop/1', resourceName: 'shop', region: 'us-east-1', details: {} }] }], new Date());
  expect(asset.added).toBe(1);
  w.asset = (await as('GET', '/api/v1/attack-surface')).body.data[0].id;
  if (options.people) {
    w.invite = (await created(await as('POST', '/api/v1/orgs/current/invite', { email: `invited-${options.label}@example.com`, role: 'member' }))).id;
    w.domain = (await created(await as('POST', '/api/v1/orgs/current/domains', { domain: `${options.label}.example` }))).id;
    w.member = (await as('GET', '/api/v1/orgs/current/members')).body.data[0]?.user_id;
    expect(w.member, 'a world with people needs a member').toBeTruthy();
  }
  return w;
}

/** Bodies that pass validation, so that what answers is the object lookup. */
export const BODIES: Record<string, unknown> = {
  'PATCH /api/v1/shield/sites/{id}': { mode: 'log' },
  'PUT /api/v1/shield/sites/{id}/schema': SCHEMA_DOCUMENT,
  'PATCH /api/v1/shield/sites/{id}/schema-config': { strictness: 'lenient' },
  // Shaped right for the schema, so only the organisation check can stop them (their content is checked after it).
  'PUT /api/v1/shield/sites/{id}/certificate': { certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' },
  'POST /api/v1/shield/sites/{id}/verify-domain': { method: 'dns' },
  'PATCH /api/v1/scan-schedules/{id}': { enabled: false },
  'PATCH /api/v1/webhooks/{id}': { description: 'moved' },
  'POST /api/v1/shield/sites/{id}/ip-access': { type: 'ip', value: '203.0.113.6', action: 'deny' },
  'PATCH /api/v1/shield/sites/{id}/ip-access/{rule_id}': { note: 'moved' },
  'POST /api/v1/shield/sites/{id}/virtual-patches': { url_pattern: '/x', method: 'GET', match_param: 'q', match_regex: 'x' },
  'PATCH /api/v1/shield/sites/{id}/virtual-patches/{patch_id}': { labels: { moved: 'yes' } },
  'POST /api/v1/shield/sites/{id}/rate-limits': { identity: 'ip', url_pattern: '/x', method: 'GET', budget: 1, window_seconds: 60, action: 'block' },
  'PATCH /api/v1/shield/sites/{id}/rate-limits/{rule_id}': { budget: 9 },
  'POST /api/v1/shield/sites/{id}/rules/batch': { operations: [{ op: 'create', kind: 'ip_access_rule', spec: { type: 'ip', value: '203.0.113.7', action: 'deny' } }] },
  'POST /api/v1/shield/sites/{id}/impact': { operations: [{ op: 'create', kind: 'ip_access_rule', spec: { type: 'ip', value: '203.0.113.9', action: 'deny' } }] },
  'PATCH /api/v1/vulnerabilities/{id}': { status: 'acknowledged' },
  'POST /api/v1/vulnerabilities/{id}/virtual-patch': {},
  'PATCH /api/v1/config-repos/{id}': { auto_sync: false },
  'POST /api/v1/config-repos/{id}/sync': {},
  'POST /api/v1/vulnerabilities/{id}/ticket': { connection: 'int_x', project: 'SEC' },
  'PATCH /api/v1/integrations/{id}': { settings: { pull_requests: { enabled: false } } },
  'POST /api/v1/attack-surface/{id}/scan-schedule': {},
  'POST /api/v1/attack-surface/{id}/shield-site': {},
  'PATCH /api/v1/orgs/current/members/{user_id}': { role: 'viewer' },
};
export const HEADERS: Record<string, Record<string, string>> = { 'GET /api/v1/shield/sites/{id}/live': { accept: 'text/event-stream' } };
export const RAW_BODIES: Record<string, { raw: string; type: string }> = {
  'POST /api/v1/shield/sites/{id}/ip-access/import': { raw: 'type,value,action,note\nip,203.0.113.8,deny,x\n', type: 'text/csv' },
};
/** Organisation-level routes: people and the organisation, not an environment's data. */
export const ORGANISATION_LEVEL = /^\/api\/v1\/(me\/sessions|orgs\/current)\//;
/** Path parameters that name a provider, not an object (connect, the OAuth callback). */
const NO_OBJECT = /\{provider\}/;

/** The route template with the world's objects in it. */
export function fillRoute(template: string, w: World): string {
  const base = template.split('/{')[0]!;
  const first: Record<string, keyof World> = {
    '/api/v1/api-keys': 'extraKey',
    '/api/v1/shield/sites': 'site',
    '/api/v1/scan-schedules': 'schedule',
    '/api/v1/webhooks': 'webhook',
    '/api/v1/events': 'event',
    '/api/v1/scans': 'scan',
    '/api/v1/vulnerabilities': 'vulnerability',
    '/api/v1/config-repos': 'repo',
    '/api/v1/integrations': 'integration',
    '/api/v1/attack-surface': 'asset',
    '/api/v1/orgs/current/invites': 'invite',
    '/api/v1/orgs/current/domains': 'domain',
  };
  const named: Record<string, keyof World> = { delivery_id: 'delivery', syncId: 'sync', patch_id: 'patch', user_id: 'member' };
  const value = (field: keyof World | undefined, name: string): string => {
    const v = field && w[field];
    if (typeof v !== 'string') throw new Error(`no object for {${name}} in ${template}`);
    return v;
  };
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name === 'id') return value(first[base], name);
    if (name === 'rule_id') return template.includes('/ip-access/') ? w.ipRule : w.rateLimit;
    return value(named[name], name);
  });
}

export interface Probe {
  /** `METHOD template` of every route called. */
  checked: string[];
  /** Every answer that was not 404, described. */
  leaks: string[];
}

/**
 * Calls every route of the served OpenAPI document that names an object with `call` (another
 * caller) on `world`'s objects; each must answer 404. Organisation-level routes are included only
 * when `organisationLevel` is set (the sandbox shares them with live).
 */
export async function probeRoutes(t: TestServer, world: World, call: (method: string, path: string, options: CallOptions) => Promise<Response>, { organisationLevel = false } = {}): Promise<Probe> {
  const document = (await t.call('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const probe: Probe = { checked: [], leaks: [] };
  for (const [template, operations] of Object.entries(document.paths)) {
    if (!template.startsWith('/api/v1/') || !template.includes('{') || NO_OBJECT.test(template)) continue;
    if (ORGANISATION_LEVEL.test(template) && (!organisationLevel || template.startsWith('/api/v1/me/'))) continue;
    for (const method of Object.keys(operations).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
      const op = `${method.toUpperCase()} ${template}`;
      const raw = RAW_BODIES[op];
      const body = raw ? { raw: raw.raw, headers: { 'content-type': raw.type } } : op in BODIES ? { body: BODIES[op] } : {};
      const res = await call(method.toUpperCase(), fillRoute(template, world), { ...body, ...(HEADERS[op] ? { headers: HEADERS[op] } : {}) });
      if (res.status !== 404) probe.leaks.push(`${op} → ${res.status} ${res.text.slice(0, 160)}`);
      probe.checked.push(op);
    }
  }
  return probe;
}
