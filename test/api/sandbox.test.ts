// The sandbox (issue 22): `svc_test_` keys work in an isolated test environment of the same
// organisation. One world of objects is made in each environment through the API (the same Shield
// domain in both), then every route of the served OpenAPI document that names an object is called
// with a key of one environment on the other's objects (404, both ways), lists never mix, creates
// land in the key's environment, test webhooks arrive signed with `livemode: false`, test URL
// scans are held to the sandbox's targets and the demo target, and emptying the sandbox leaves
// every live row of every table where it was.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { ENVIRONMENT_TABLES, KEPT_TABLES } from '../../api/sandbox/reset.ts';
import { verifyServiceSignature } from '../../api/webhooks/signature.ts';
import { runAegis } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { request, startTestServer, type CallOptions, type Response, type TestServer } from '../support/server.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { asUser, signInWithMagicLink } from '../support/sessions.ts';
import { startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { BODIES, ORGANISATION_LEVEL, populateWorld, probeRoutes, RAW_BODIES, startWorldFixtures, type World, type WorldFixtures } from '../support/object-world.ts';

type Env = 'live' | 'test';

let t: TestServer;
let smtp: SmtpCapture;
let fixtures: WorldFixtures;
let github: GithubStandIn;
const worlds = {} as Record<Env, World>;

const other = (env: Env): Env => (env === 'live' ? 'test' : 'live');
const call = <T = any>(env: Env, method: string, path: string, options: CallOptions = {}): Promise<Response<T>> =>
  request<T>(t.url, method, path, { key: worlds[env]?.key ?? t.adminKey, ...options });

async function waitForScan(env: Env, id: string): Promise<void> {
  await eventually(async () => ['completed', 'failed', 'canceled'].includes((await call(env, 'GET', `/api/v1/scans/${id}`)).body.status), 60_000, 100);
  expect((await call(env, 'GET', `/api/v1/scans/${id}`)).body).toMatchObject({ status: 'completed' });
}

beforeAll(async () => {
  fixtures = await startWorldFixtures();
  smtp = await startSmtpServer();
  github = await startGithubStandIn();
  t = await startTestServer({ allowLocalSources: true, allowPrivateTargets: true, rateLimitPerMinute: 1_000_000, smtpUrl: smtp.url, providers: { ...loadProviderSettings({}), github: github.settings } });
  const me = await t.call('GET', '/api/v1/me');
  await setPlan(t.server.database.db, undefined, me.body.organization.id, 'pro');
  const testKey = await t.call('POST', '/api/v1/api-keys', { body: { name: 'sandbox admin', scopes: ['admin'], environment: 'test' } });
  expect(testKey.status, testKey.text).toBe(201);
  worlds.live = await populateWorld(t, fixtures, t.adminKey, { label: 'live', github });
  worlds.test = await populateWorld(t, fixtures, testKey.body.key, { label: 'test', github });
  expect((await call('live', 'GET', `/api/v1/shield/sites/${worlds.live.site}`)).body.livemode).toBe(true);
  expect((await call('test', 'GET', `/api/v1/shield/sites/${worlds.test.site}`)).body.livemode).toBe(false);
}, 240_000);

afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await github?.close();
  await fixtures?.close();
});

describe('keys and sessions choose the environment', () => {
  it('a test key is svc_test_, says livemode false, and /me names the environment', async () => {
    expect(worlds.test.key).toMatch(/^svc_test_[A-Za-z0-9]{40}$/);
    const me = await call('test', 'GET', '/api/v1/me');
    expect(me.body).toMatchObject({ environment: 'test', livemode: false });
    expect(me.body.organization.id).toMatch(/^org_/);
    expect((await call('live', 'GET', '/api/v1/me')).body).toMatchObject({ environment: 'live', livemode: true });
    const keys = (await call('test', 'GET', '/api/v1/api-keys')).body.data;
    expect(keys.every((k: { prefix: string; livemode: boolean }) => k.prefix === 'svc_test_' && k.livemode === false)).toBe(true);
    expect((await call('live', 'GET', '/api/v1/api-keys')).body.data.every((k: { livemode: boolean }) => k.livemode)).toBe(true);
  });

  it('the sandbox cannot make live keys or change the organisation', async () => {
    const key = await call('test', 'POST', '/api/v1/api-keys', { body: { name: 'escape', scopes: ['admin'], environment: 'live' } });
    expect(key.status).toBe(403);
    expect(key.body.error.code).toBe('live_mode_required');
    const invite = await call('test', 'POST', '/api/v1/orgs/current/invite', { body: { email: 'new@example.com', role: 'member' } });
    expect(invite.status).toBe(403);
    expect(invite.body.error.code).toBe('live_mode_required');
    const targets = await call('test', 'PUT', '/api/v1/sandbox/targets', { body: { targets: ['example.com'] } });
    expect(targets.status).toBe(403);
  });
});

describe('a session toggles test mode', () => {
  it('switches its environment; what it makes in test is 404 from live; organisation changes wait for live', async () => {
    const cookie = await signInWithMagicLink(t, smtp, 'toggle@example.com');
    expect((await asUser(t, cookie, 'GET', '/api/v1/me')).body).toMatchObject({ environment: 'live', livemode: true });
    const toTest = await asUser(t, cookie, 'PUT', '/api/v1/me/current-environment', { body: { environment: 'test' } });
    expect(toTest.status, toTest.text).toBe(200);
    expect((await asUser(t, cookie, 'GET', '/api/v1/me')).body).toMatchObject({ environment: 'test', livemode: false });
    const site = await asUser(t, cookie, 'POST', '/api/v1/shield/sites', { body: { domain: 'toggle.example.com', origin_url: 'https://origin.example.com', mode: 'log' } });
    expect(site.status, site.text).toBe(201);
    expect(site.body.livemode).toBe(false);
    const invite = await asUser(t, cookie, 'POST', '/api/v1/orgs/current/invite', { body: { email: 'friend@example.com', role: 'member' } });
    expect(invite.status).toBe(403);
    expect((await asUser(t, cookie, 'GET', '/api/v1/me/sessions')).body.data[0].environment).toBe('test');
    await asUser(t, cookie, 'PUT', '/api/v1/me/current-environment', { body: { environment: 'live' } });
    expect((await asUser(t, cookie, 'GET', `/api/v1/shield/sites/${site.body.id}`)).status).toBe(404);
    expect((await asUser(t, cookie, 'GET', '/api/v1/shield/sites')).body.data).toEqual([]);
    expect((await asUser(t, cookie, 'POST', '/api/v1/orgs/current/invite', { body: { email: 'friend@example.com', role: 'member' } })).status).toBe(201);
  });
});

describe('isolation, route by route', () => {
  it("every route that names an object answers 404 for the other environment's object, both ways", async () => {
    const leaks: string[] = [];
    let checked: string[] = [];
    for (const env of ['live', 'test'] as const) {
      const probe = await probeRoutes(t, worlds[other(env)], (method, path, options) => call(env, method, path, options));
      leaks.push(...probe.leaks.map((leak) => `${env} key: ${leak}`));
      checked = probe.checked;
    }
    expect(leaks).toEqual([]);
    // Nothing with a body was left untested by accident.
    for (const op of [...Object.keys(BODIES), ...Object.keys(RAW_BODIES)].filter((op) => !ORGANISATION_LEVEL.test(op.split(' ')[1]!))) expect(checked).toContain(op);
    expect(checked.length).toBeGreaterThan(50);
  }, 120_000);

  it("the other environment's objects are still there, unchanged by those calls", async () => {
    for (const env of ['live', 'test'] as const) {
      const w = worlds[env];
      const site = await call(env, 'GET', `/api/v1/shield/sites/${w.site}`);
      expect(site.body).toMatchObject({ mode: 'block', livemode: env === 'live' });
      expect((await call(env, 'GET', `/api/v1/shield/sites/${w.site}/ip-access`)).body.data).toHaveLength(1);
      expect((await call(env, 'GET', `/api/v1/scan-schedules/${w.schedule}`)).body.enabled).toBe(true);
      expect((await call(env, 'GET', `/api/v1/vulnerabilities/${w.vulnerability}`)).body).toMatchObject({ status: 'open', livemode: env === 'live' });
    }
  });

  it('lists show only the caller’s environment, and every object says so', async () => {
    const lists = ['/api/v1/shield/sites', '/api/v1/scan-schedules', '/api/v1/webhooks', '/api/v1/scans', '/api/v1/vulnerabilities', '/api/v1/config-repos', '/api/v1/events', '/api/v1/audit-log', '/api/v1/api-keys'];
    for (const env of ['live', 'test'] as const) {
      const theirs = new Set(Object.values(worlds[other(env)]));
      for (const list of lists) {
        const res = await call(env, 'GET', `${list}?limit=200`);
        expect(res.status, `${list}: ${res.text}`).toBe(200);
        expect(res.body.data.length, list).toBeGreaterThan(0);
        for (const item of res.body.data as { id: string; livemode: boolean }[]) {
          expect(theirs.has(item.id), `${env} ${list} shows ${item.id}`).toBe(false);
          expect(item.livemode, `${env} ${list} ${item.id}`).toBe(env === 'live');
        }
      }
    }
  });

  it('events and their deliveries say livemode; a test delivery verifies with the webhook secret', async () => {
    await eventually(async () => fixtures.delivered.some((d) => d.headers['x-service-delivery-id'] !== undefined && JSON.parse(d.body).livemode === false), 30_000, 50);
    for (const d of fixtures.delivered) {
      const event = JSON.parse(d.body) as { livemode: boolean; organization_id: string };
      const env: Env = event.livemode ? 'live' : 'test';
      expect(verifyServiceSignature(d.body, String(d.headers['x-service-signature']), worlds[env].webhookSecret)).toBe(true);
      expect(verifyServiceSignature(d.body, String(d.headers['x-service-signature']), worlds[other(env)].webhookSecret)).toBe(false);
      expect(event.organization_id).toMatch(/^org_/);
    }
    const event = await call('test', 'GET', `/api/v1/events/${worlds.test.event}`);
    expect(event.body.livemode).toBe(false);
  });
});

describe('test-mode URL scans', () => {
  it('may probe the demo target and listed hosts only; a live admin lists them', async () => {
    const refused = await call('test', 'POST', '/api/v1/scans', { body: { target: 'http://shop.example.com/' } });
    expect(refused.status).toBe(422);
    expect(refused.text).toMatch(/not a sandbox target/);
    // The same target is fine from live (it is only refused here for its private address policy: none).
    const sandbox = await call('test', 'GET', '/api/v1/sandbox');
    expect(sandbox.body).toMatchObject({ environment: 'test', targets: [], demo_target_url: `${t.url}/sandbox/demo/` });
    const listed = await call('live', 'PUT', '/api/v1/sandbox/targets', { body: { targets: ['Shop.Example.com'] } });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.targets).toEqual(['shop.example.com']);
    const allowed = await call('test', 'POST', '/api/v1/scans', { body: { target: 'http://shop.example.com/', max_requests: 1 } });
    expect(allowed.status, allowed.text).toBe(202);
    // Scope hosts beyond the target's must be listed too.
    const wider = await call('test', 'POST', '/api/v1/scans', { body: { target: 'http://shop.example.com/', scope: { hosts: ['shop.example.com', 'other.example.com'] } } });
    expect(wider.status).toBe(422);
    await call('test', 'DELETE', `/api/v1/scans/${allowed.body.id}`);
  });

  it('a DAST scan of the demo target runs the real scanner and finds its planted flaws', async () => {
    const started = await call('test', 'POST', '/api/v1/scans', { body: { target: `${t.url}/sandbox/demo/`, scope: { path_prefixes: ['/'] } } });
    expect(started.status, started.text).toBe(202);
    // Held to the demo's path whatever scope was asked for.
    expect(started.body.source).toMatchObject({ scope: { path_prefixes: ['/sandbox/demo/'] } });
    await waitForScan('test', started.body.id);
    const findings = (await call('test', 'GET', `/api/v1/vulnerabilities?scan_id=${started.body.id}&limit=200`)).body.data as { rule_id: string; livemode: boolean }[];
    const rules = new Set(findings.map((f) => f.rule_id));
    for (const rule of ['dast-xss-reflected', 'dast-sqli-error', 'dast-path-traversal']) expect(rules).toContain(rule);
    expect(findings.every((f) => f.livemode === false)).toBe(true);
  }, 90_000);
});

describe('the reconciler names the environment', () => {
  it('aegis plan with a test key says it plans against the sandbox', async () => {
    const plan = await runAegis(['plan', 'examples/gitops', '--json'], { AEGIS_API_URL: t.url, AEGIS_API_KEY: worlds.test.key });
    expect(JSON.parse(plan.stdout).environment).toBe('test');
    const text = await runAegis(['plan', 'examples/gitops'], { AEGIS_API_URL: t.url, AEGIS_API_KEY: worlds.live.key });
    expect(text.stdout).toMatch(/in the live environment/);
  }, 60_000);
});

describe('emptying the sandbox', () => {
  type Counts = Map<string, { live: number; test: number }>;
  let sandboxId: string;
  /** Rows of tables without an org_id belong to a parent that has one: the sandbox's parents, named before the reset. */
  interface SandboxParents {
    scans: string[];
    sites: string[];
    deliveries: string[];
  }

  async function sandboxParents(): Promise<SandboxParents> {
    const db = t.server.database.db;
    const ids = async (table: string) => (await sql<{ id: string }>`select id from ${sql.table(table)} where org_id = ${sandboxId}`.execute(db)).rows.map((r) => r.id);
    return { scans: await ids('scans'), sites: await ids('shield_sites'), deliveries: await ids('webhook_deliveries') };
  }

  /** Every table of the schema, its rows split into this sandbox's (`test`) and all others (`live`: live data, other organisations' sandboxes). */
  async function countEveryTable(parents: SandboxParents): Promise<Counts> {
    const db = t.server.database.db;
    const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`.execute(db);
    const withOrg = new Set(
      (await sql<{ table_name: string }>`select table_name from information_schema.columns where table_schema = current_schema() and column_name = 'org_id'`.execute(db)).rows.map((r) => r.table_name),
    );
    const among = (column: string, ids: string[]) => (ids.length === 0 ? sql<boolean>`false` : sql<boolean>`${sql.ref(column)} in (${sql.join(ids)})`);
    const testRows: Record<string, ReturnType<typeof among>> = {
      organizations: sql<boolean>`id = ${sandboxId}`,
      scan_findings: among('scan_id', parents.scans),
      scan_archives: among('scan_id', parents.scans),
      webhook_delivery_attempts: among('delivery_id', parents.deliveries),
      shield_config_versions: among('site_id', parents.sites),
      shield_event_rollups: among('site_id', parents.sites),
    };
    const counts: Counts = new Map();
    for (const { table_name: table } of tables.rows) {
      const isTest = withOrg.has(table) ? sql<boolean>`coalesce(org_id = ${sandboxId}, false)` : (testRows[table] ?? sql<boolean>`false`);
      const row = (await sql<{ test: string; live: string }>`select count(*) filter (where ${isTest}) as test, count(*) filter (where not ${isTest}) as live from ${sql.table(table)}`.execute(db)).rows[0]!;
      counts.set(table, { live: Number(row.live), test: Number(row.test) });
    }
    return counts;
  }

  it('every table with an org_id is either emptied or kept on purpose', async () => {
    const rows = await sql<{ table_name: string }>`select table_name from information_schema.columns where table_schema = current_schema() and column_name = 'org_id'`.execute(t.server.database.db);
    const known = new Set<string>([...ENVIRONMENT_TABLES, ...KEPT_TABLES]);
    expect(rows.rows.map((r) => r.table_name).filter((table) => !known.has(table))).toEqual([]);
  });

  it('is refused from live; from test it deletes the sandbox’s objects and leaves every live row of every table', async () => {
    sandboxId = `sbx_${String((await call('live', 'GET', '/api/v1/me')).body.organization.id).slice('org_'.length)}`;
    const fromLive = await call('live', 'DELETE', '/api/v1/sandbox/data');
    expect(fromLive.status).toBe(403);
    // Let deliveries and jobs settle so that nothing is written while counting.
    const busy = async () => (await sql<{ kind: string }>`select kind from jobs where state = 'running' or (state = 'queued' and run_at <= now())`.execute(t.server.database.db)).rows.map((r) => r.kind);
    await eventually(async () => (await busy()).length === 0, 60_000, 100).catch(async (err: Error) => {
      throw new Error(`${err.message}; still busy: ${(await busy()).join(', ')}`);
    });
    const parents = await sandboxParents();
    const before = await countEveryTable(parents);
    expect(before.get('shield_sites')!.test).toBe(1);
    const reset = await call('test', 'DELETE', '/api/v1/sandbox/data');
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.deleted).toMatchObject({ shield_sites: 1, webhooks: 1, scans: expect.any(Number) });
    const after = await countEveryTable(parents);
    for (const [table, was] of before) {
      const now = after.get(table)!;
      // Every row outside this sandbox, in every table, as it was; the sandbox keeps its keys and its own reset entry.
      expect(now.live, `${table} rows outside the sandbox`).toBe(was.live);
      if ((ENVIRONMENT_TABLES as readonly string[]).includes(table)) expect(now.test, `${table} test rows`).toBe(table === 'audit_events' ? 1 : 0);
    }
    expect(after.get('api_keys')!.test).toBe(before.get('api_keys')!.test);
    // The test key still works, on an empty sandbox; the live site is where it was.
    expect((await call('test', 'GET', '/api/v1/shield/sites')).body.data).toEqual([]);
    expect((await call('live', 'GET', `/api/v1/shield/sites/${worlds.live.site}`)).status).toBe(200);
  }, 90_000);
});
