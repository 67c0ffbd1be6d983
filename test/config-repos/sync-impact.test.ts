// A config repository's syncs preview their plans' impact on recorded traffic (issue 43): a real
// server with its in-process worker, a bare git repository on disk (AEGIS_ALLOW_LOCAL_SOURCES),
// traffic sent through the real gateway to a real origin and recorded; then a commit adding a
// virtual patch is synced and its record says exactly how many of those requests the patch would
// have blocked. max_new_blocks below that count refuses the sync (nothing made) until forced.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, viaGateway, recordingGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Repo {
  id: string;
  status: string;
  impact_window: string | null;
  max_new_blocks: number | null;
}
interface Sync {
  id: string;
  status: string;
  result: string | null;
  changes: string[];
  impact: string[];
  errors: string[];
}

let t: TestServer;
let origin: { url: string; close(): Promise<void> };
let root: string;
let bare: string;
let work: string;
let repo: Repo;
const HOST = 'shop.sync-impact.test';
/** Requests the patch blocks: 5, from two clients. */
const BLOCKED = 5;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { stdio: 'pipe' }).toString().trim();

async function commit(files: Record<string, string>, message: string): Promise<void> {
  for (const [name, content] of Object.entries(files)) await writeFile(join(work, name), content);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', message);
  git(work, 'push', '-q', 'origin', 'main');
}

const siteYaml = () => `apiVersion: aegis/v1
kind: ShieldSite
metadata: { name: shop }
spec: { domain: ${HOST}, origin_url: '${origin.url}', mode: block }
`;
const patchYaml = `apiVersion: aegis/v1
kind: VirtualPatch
metadata: { name: search-probe }
spec: { site: shop, url_pattern: /search, method: GET, match_param: q, match_regex: '^probe', action: block }
`;

async function finished(syncId: string): Promise<Sync> {
  let sync!: Sync;
  await eventually(async () => {
    sync = (await t.call<Sync>('GET', `/api/v1/config-repos/${repo.id}/syncs/${syncId}`)).body;
    return sync.status === 'completed';
  }, 30_000);
  return sync;
}

async function syncNow(force = false): Promise<Sync> {
  const res = await t.call<Sync>('POST', `/api/v1/config-repos/${repo.id}/sync${force ? '?force=true' : ''}`);
  expect(res.status, res.text).toBe(202);
  return finished(res.body.id);
}

async function patches(): Promise<{ match_regex: string }[]> {
  const site = (await t.call('GET', `/api/v1/shield/sites?domain=${HOST}`)).body.data[0] as { id: string };
  return (await t.call('GET', `/api/v1/shield/sites/${site.id}/virtual-patches`)).body.data as { match_regex: string }[];
}

beforeAll(async () => {
  origin = await listenOnLoopback(createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok'))));
  t = await startTestServer({
    allowLocalSources: true,
    rateLimitPerMinute: 100_000,
    analyticsRateLimitPerMinute: 100_000,
    ...recordingGateway(),
  });
  root = await mkdtemp(join(tmpdir(), 'aegis-sync-impact-'));
  bare = join(root, 'config.git');
  work = join(root, 'work');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  execFileSync('git', ['clone', '-q', bare, work], { stdio: 'pipe' });
  await commit({ 'shop.yaml': siteYaml() }, 'the site');
}, 60_000);

afterAll(async () => {
  await t?.close();
  await origin?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('impact previews of config-repo syncs', { timeout: 120_000 }, () => {
  it('refuses impact settings that are not ones (422 naming the field)', async () => {
    const url = `file://${bare}`;
    for (const [body, field] of [
      [{ impact_window: '1w' }, 'impact_window'],
      [{ impact_window: '91d' }, 'impact_window'],
      [{ impact_window: '24 h' }, 'impact_window'],
      [{ max_new_blocks: -1 }, 'max_new_blocks'],
      [{ max_new_blocks: 1.5 }, 'max_new_blocks'],
      [{ impact_window: null, max_new_blocks: 3 }, 'max_new_blocks'],
    ] as const) {
      const res = await t.call('POST', '/api/v1/config-repos', { body: { name: 'bad', url, ...body } });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    }
  });

  it('registers a repository with the default window and no gate; the first sync makes the site', async () => {
    const created = await t.call<Repo>('POST', '/api/v1/config-repos', { body: { name: 'shop-config', url: `file://${bare}`, poll_interval_seconds: 3600 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ impact_window: '24h', max_new_blocks: null });
    repo = created.body;
    await eventually(async () => (await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body.status === 'synced', 30_000);

    const bad = await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { impact_window: 'soon' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields).toEqual([{ field: 'impact_window', message: expect.stringContaining('30m, 6h, 24h, 7d') }]);
    const gated = await t.call<Repo>('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { max_new_blocks: BLOCKED - 1 } });
    expect(gated.status, gated.text).toBe(200);
    expect(gated.body).toMatchObject({ impact_window: '24h', max_new_blocks: BLOCKED - 1 });
    // A gate needs its preview: the window cannot go while the gate stays.
    const off = await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { impact_window: null } });
    expect(off.status).toBe(422);
    expect(off.body.error.details.fields[0].field).toBe('max_new_blocks');
    expect((await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body).toMatchObject({ impact_window: '24h', max_new_blocks: BLOCKED - 1 });

    // Traffic through the real gateway, recorded: the probes the patch will match, and others.
    await t.server.gateway!.registry.refresh();
    const gateway = t.server.gateway!.url;
    const send = async (path: string, from: string) => expect((await viaGateway(gateway, path, { host: HOST, from })).status, path).toBe(200);
    for (let i = 0; i < 3; i++) await send(`/search?q=probe${i}`, '192.0.2.50');
    for (let i = 0; i < 2; i++) await send(`/search?q=probe-${i}`, '192.0.2.51');
    for (let i = 1; i <= 4; i++) await send('/search?q=shoes', `198.51.100.${i}`);
    await send('/products?q=probe', '198.51.100.9');
    await t.server.shieldEvents.traffic!.flush();
  });

  it('a sync past max_new_blocks is refused with the exact count, and nothing is made', async () => {
    await commit({ 'patch.yaml': patchYaml }, 'the patch');
    const sync = await syncNow();
    expect(sync.result, JSON.stringify(sync)).toBe('refused');
    expect(sync.changes).toEqual(['create VirtualPatch shop/search-probe']);
    expect(sync.errors[0]).toBe(`refusing to apply: shop would newly block ${BLOCKED} requests (limit ${BLOCKED - 1})`);
    expect(sync.impact).toEqual([
      'create VirtualPatch shop/search-probe',
      `    impact (last 24 h): would newly block ${BLOCKED} requests from 2 clients (${BLOCKED} answered 2xx by the origin); 0 newly allowed`,
      'Impact on recorded traffic (last 24 h), per site:',
      // The site is minutes old: its record covers only part of the window, and says so.
      expect.stringMatching(new RegExp(`^  shop: would newly block ${BLOCKED} requests from 2 clients \\(${BLOCKED} answered 2xx by the origin\\); 0 newly allowed; recorded only since \\S+$`)),
    ]);
    expect(await patches()).toEqual([]);
    const status = (await t.call<Repo & { status_message: string }>('GET', `/api/v1/config-repos/${repo.id}`)).body;
    expect(status.status).toBe('out_of_sync');
  });

  it('force=true applies it anyway, and the record keeps the preview', async () => {
    const sync = await syncNow(true);
    expect(sync.result, JSON.stringify(sync)).toBe('applied');
    expect(sync.impact[1]).toContain(`would newly block ${BLOCKED} requests`);
    expect((await patches()).map((p) => p.match_regex)).toEqual(['^probe']);
  });

  it('a repository without previews records none and has no gate', async () => {
    const off = await t.call<Repo>('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { impact_window: null, max_new_blocks: null } });
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ impact_window: null, max_new_blocks: null });
    await commit({ 'patch.yaml': patchYaml.replace("'^probe'", "'^probe|^shoes'") }, 'a wider patch');
    const sync = await syncNow();
    expect(sync.result, JSON.stringify(sync)).toBe('applied');
    expect(sync.changes).toEqual(['replace VirtualPatch shop/search-probe (match_regex)']);
    expect(sync.impact).toEqual([]);
  });
});
