// Config repositories that clone through a source-control connection: a real server with its
// in-process worker and poller, and the GitHub stand-in serving private repositories over smart
// HTTP. The repository URL carries no token; the connection's token goes into it only at clone time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { eventually } from '../support/gateway.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let github: GithubStandIn;
let t: TestServer;
let token: string;
let connection: string;
let shopRepo: string;

const site = (name: string) => `apiVersion: aegis/v1
kind: ShieldSite
metadata: { name: ${name} }
spec: { domain: ${name}.connection.test, origin_url: 'http://127.0.0.1:9', mode: block }
`;

interface Repo {
  id: string;
  url: string;
  status: string;
  status_message: string | null;
  connection: string | null;
  credentials_ref: string | null;
}
interface Sync {
  status: string;
  result: string | null;
  failure_stage: string | null;
  changes: string[];
  errors: string[];
}

async function syncNow(repoId: string): Promise<Sync> {
  const started = await t.call<{ id: string }>('POST', `/api/v1/config-repos/${repoId}/sync`);
  expect(started.status, started.text).toBe(202);
  let sync!: Sync;
  await eventually(async () => {
    sync = (await t.call<Sync>('GET', `/api/v1/config-repos/${repoId}/syncs/${started.body.id}`)).body;
    return sync.status === 'completed';
  }, 20_000);
  return sync;
}

const domains = async () => ((await t.call('GET', '/api/v1/shield/sites')).body.data as { domain: string }[]).map((s) => s.domain);
const create = (body: Record<string, unknown>) => t.call<Repo>('POST', '/api/v1/config-repos', { body: { poll_interval_seconds: 3600, ...body } });

beforeAll(async () => {
  github = await startGithubStandIn();
  // http://127.0.0.1 clones need no AEGIS_ALLOW_LOCAL_SOURCES (platform/git/url.ts allows http); the
  // stand-in's API on a loopback address needs allowPrivateTargets.
  t = await startTestServer({ providers: { ...loadProviderSettings({}), github: github.settings }, allowPrivateTargets: true, rateLimitPerMinute: 100_000 });
  await github.createRepository('acme', 'shop-config', { 'shop.yaml': site('shop') }, { private: true });
  await github.createRepository('acme', 'edge-config', { 'config/edge.yaml': site('edge') }, { private: true });
  token = github.issueToken('octo-config');
  const connected = await t.call<{ id: string }>('POST', '/api/v1/integrations/github/connect', { body: { token } });
  expect(connected.status, connected.text).toBe(201);
  connection = connected.body.id;
}, 60_000);

afterAll(async () => {
  await t?.close();
  await github?.close();
});

describe('config repositories through a connection', () => {
  it('syncs a private repository with the connection, the URL without a token', async () => {
    const created = await create({ name: 'shop', url: `${github.url}/acme/shop-config.git`, connection });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ url: `${github.url}/acme/shop-config.git`, connection, credentials_ref: null });
    shopRepo = created.body.id;
    const sync = await syncNow(created.body.id);
    expect(sync).toMatchObject({ result: expect.stringMatching(/^(applied|unchanged)$/), failure_stage: null, errors: [] });
    expect(await domains()).toContain('shop.connection.test');
    const repo = (await t.call<Repo>('GET', `/api/v1/config-repos/${created.body.id}`));
    expect(repo.body).toMatchObject({ status: 'synced', connection });
    // The token is nowhere in what the API shows.
    const syncs = await t.call('GET', `/api/v1/config-repos/${created.body.id}/syncs`);
    expect(repo.text + syncs.text).not.toContain(token);
    expect(github.rejected).toEqual([]);
  });

  it('the same kind of repository without the connection fails at fetch; adding it by update syncs', async () => {
    const created = await create({ name: 'edge', url: `${github.url}/acme/edge-config.git`, path: 'config' });
    expect(created.status, created.text).toBe(201);
    expect(created.body.connection).toBeNull();
    const failed = await syncNow(created.body.id);
    expect(failed).toMatchObject({ result: 'failed', failure_stage: 'fetch' });
    expect(failed.errors.join('\n')).toMatch(/could not read Username|Authentication failed/);
    expect((await t.call<Repo>('GET', `/api/v1/config-repos/${created.body.id}`)).body.status).toBe('error');
    expect(await domains()).not.toContain('edge.connection.test');

    const updated = await t.call<Repo>('PATCH', `/api/v1/config-repos/${created.body.id}`, { body: { connection } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.connection).toBe(connection);
    const synced = await syncNow(created.body.id);
    expect(synced).toMatchObject({ failure_stage: null, errors: [] });
    expect(await domains()).toContain('edge.connection.test');

    // A new URL must still suit the connection it keeps; null stops using it.
    const elsewhere = await t.call('PATCH', `/api/v1/config-repos/${created.body.id}`, { body: { url: 'https://git.example.org/acme/edge-config.git' } });
    expect(elsewhere.status, elsewhere.text).toBe(422);
    expect(elsewhere.body.error.details.fields).toEqual([expect.objectContaining({ field: 'connection' })]);
    const both = await t.call('PATCH', `/api/v1/config-repos/${created.body.id}`, { body: { credentials_ref: 'EDGE' } });
    expect(both.status, both.text).toBe(422);
    const cleared = await t.call<Repo>('PATCH', `/api/v1/config-repos/${created.body.id}`, { body: { connection: null, credentials_ref: 'EDGE' } });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ connection: null, credentials_ref: 'EDGE' });
  });

  it('refuses a connection that cannot clone the URL, or a second source of credentials (422)', async () => {
    const cases: Record<string, unknown>[] = [
      // Another host: the organisation's token must not be sent there.
      { name: 'other-host', url: 'https://git.example.org/acme/shop-config.git', connection },
      // Credentials in the URL and a connection.
      { name: 'url-token', url: `${github.url.replace('://', '://x-access-token:ghp_inline@')}/acme/shop-config.git`, connection, source: 'url-token' },
      // A worker-held credential and a connection.
      { name: 'two-sources', url: `${github.url}/acme/shop-config.git`, connection, credentials_ref: 'SHOP', source: 'two-sources' },
      // A connection of no such id.
      { name: 'unknown', url: `${github.url}/acme/shop-config.git`, connection: 'int_nope', source: 'unknown' },
    ];
    for (const body of cases) {
      const res = await create(body);
      expect(res.status, `${String(body.name)}: ${res.text}`).toBe(422);
      expect(res.body).toMatchObject({ error: { code: 'validation_failed', details: { fields: [expect.objectContaining({ field: 'connection' })] } } });
    }
    const names = ((await t.call('GET', '/api/v1/config-repos')).body.data as { name: string }[]).map((r) => r.name);
    expect(names.sort()).toEqual(['edge', 'shop']);
  });

  it('disconnecting leaves the repository without a connection: its next fetch fails', async () => {
    const removed = await t.call('DELETE', `/api/v1/integrations/${connection}`);
    expect(removed.status, removed.text).toBe(204);
    expect((await t.call<Repo>('GET', `/api/v1/config-repos/${shopRepo}`)).body.connection).toBeNull();
    const sync = await syncNow(shopRepo);
    expect(sync).toMatchObject({ result: 'failed', failure_stage: 'fetch' });
    // What it made stays.
    expect(await domains()).toContain('shop.connection.test');
    expect(github.rejected).toEqual([]);
  });
});
