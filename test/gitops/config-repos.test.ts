// Config repositories end to end: a real server with its in-process worker and poller, a bare git
// repository on disk (AEGIS_ALLOW_LOCAL_SOURCES) pushed to from a working clone, and push
// deliveries signed the way GitHub and GitLab sign them. What a sync did is read back through the
// API: the sync records, the repository's status and the Shield objects themselves.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let root: string;
let bare: string;
let work: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { stdio: 'pipe' }).toString().trim();

async function commit(files: Record<string, string | null>, message: string): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    if (content === null) await unlink(join(work, name));
    else await writeFile(join(work, name), content);
  }
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '--allow-empty', '-m', message);
  git(work, 'push', '-q', 'origin', 'main');
  return git(work, 'rev-parse', 'HEAD');
}

const site = `apiVersion: aegis/v1
kind: ShieldSite
metadata: { name: shop }
spec: { domain: shop.gitops.test, origin_url: 'http://127.0.0.1:9', mode: block }
`;
const patch = (regex: string) => `apiVersion: aegis/v1
kind: VirtualPatch
metadata: { name: search-sqli }
spec: { site: shop, url_pattern: /search, method: GET, match_param: q, match_regex: '${regex}', action: block }
`;
const office = `apiVersion: aegis/v1
kind: IpAccessRule
metadata: { name: office }
spec: { site: shop, type: cidr, value: 198.51.100.0/24, action: allow }
`;
const limits = (action: string) =>
  ['a', 'b', 'c', 'd']
    .map((n) => `apiVersion: aegis/v1
kind: RateLimitRule
metadata: { name: limit-${n} }
spec: { site: shop, identity: ip, url_pattern: /${n}/*, method: ANY, budget: 100, window_seconds: 60, action: ${action} }
`)
    .join('---\n');

interface Repo {
  id: string;
  status: string;
  last_synced_commit: string | null;
  status_message: string | null;
  webhook_secret?: string;
}
interface Sync {
  id: string;
  trigger: string;
  status: string;
  result: string | null;
  failure_stage: string | null;
  commit_sha: string | null;
  changes: string[];
  errors: string[];
}

let repo: Repo;
let secret: string;
let deliveries = 0;

function githubPush(after: string, options: { secret?: string | null; id?: string; ref?: string } = {}) {
  const body = JSON.stringify({
    ref: options.ref ?? 'refs/heads/main',
    before: '0'.repeat(40),
    after,
    repository: { clone_url: `file://${bare}`, html_url: 'https://github.com/acme/not-this-one' },
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': options.id ?? `delivery-${++deliveries}` };
  const key = options.secret === undefined ? secret : options.secret;
  if (key !== null) headers['x-hub-signature-256'] = `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
  return request<{ status: string; syncs: { repo_id: string; sync_id: string }[]; skipped: unknown[] }>(t.url, 'POST', '/api/v1/webhooks/github', { raw: body, headers });
}

async function finished(syncId: string, timeoutMs = 15_000): Promise<Sync> {
  let sync!: Sync;
  await eventually(async () => {
    sync = (await t.call<Sync>('GET', `/api/v1/config-repos/${repo.id}/syncs/${syncId}`)).body;
    return sync.status === 'completed';
  }, timeoutMs);
  return sync;
}

async function pushAndSync(after: string): Promise<Sync> {
  const res = await githubPush(after);
  expect(res.status, res.text).toBe(202);
  expect(res.body.syncs).toHaveLength(1);
  return finished(res.body.syncs[0]!.sync_id);
}

async function siteRules(): Promise<{ siteId: string; patches: Record<string, unknown>[]; ipRules: Record<string, unknown>[]; limits: Record<string, unknown>[] }> {
  const sites = (await t.call('GET', '/api/v1/shield/sites')).body.data as { id: string; domain: string }[];
  const shop = sites.find((s) => s.domain === 'shop.gitops.test');
  if (!shop) return { siteId: '', patches: [], ipRules: [], limits: [] };
  const list = async (path: string) => (await t.call('GET', `/api/v1/shield/sites/${shop.id}/${path}`)).body.data as Record<string, unknown>[];
  return { siteId: shop.id, patches: await list('virtual-patches'), ipRules: await list('ip-access'), limits: await list('rate-limits') };
}

const syncJobs = async () => Number((await t.server.database.db.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('kind', '=', 'config-repo-sync').executeTakeFirstOrThrow()).n);

beforeAll(async () => {
  t = await startTestServer({ allowLocalSources: true, rateLimitPerMinute: 100_000 });
  root = await mkdtemp(join(tmpdir(), 'aegis-gitops-'));
  bare = join(root, 'config.git');
  work = join(root, 'work');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  execFileSync('git', ['clone', '-q', bare, work], { stdio: 'pipe' });
  await commit({ 'README.md': '# config\n' }, 'empty config');
}, 60_000);

afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('config repositories', () => {
  it('registers a repository: the webhook secret is shown once, the first sync runs at once', async () => {
    const created = await t.call<Repo>('POST', '/api/v1/config-repos', { body: { name: 'shop-config', url: `file://${bare}`, branch: 'main', poll_interval_seconds: 3600 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.webhook_secret).toMatch(/^whsec_/);
    secret = created.body.webhook_secret!;
    repo = created.body;
    const fetched = await t.call('GET', `/api/v1/config-repos/${repo.id}`);
    expect(fetched.body).not.toHaveProperty('webhook_secret');
    expect(fetched.text).not.toContain(secret);
    expect(fetched.body.webhook_secret_last4).toBe(secret.slice(-4));
    // The poller's first look: an empty config syncs to nothing.
    await eventually(async () => (await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body.status === 'synced', 15_000);
    const keys = (await t.call('GET', '/api/v1/api-keys')).body.data as { id: string; name: string }[];
    expect(keys.find((k) => k.id === fetched.body.api_key_id)?.name).toBe('config-repo shop-config');
  });

  it('a signed push creates the objects', async () => {
    const sha = await commit({ 'shop.yaml': site, 'patches.yaml': patch('(?i)union\\s+select'), 'office.yaml': office }, 'shop site');
    const started = Date.now();
    const sync = await pushAndSync(sha);
    console.log(`push → applied: ${Date.now() - started} ms`);
    expect(sync).toMatchObject({ trigger: 'push', result: 'applied', commit_sha: sha, errors: [] });
    expect(sync.changes).toEqual(expect.arrayContaining(['create ShieldSite shop', 'create VirtualPatch shop/search-sqli', 'create IpAccessRule shop/office']));
    const live = await siteRules();
    expect(live.patches.map((p) => p.match_regex)).toEqual(['(?i)union\\s+select']);
    expect(live.ipRules.map((r) => r.value)).toEqual(['198.51.100.0/24']);
    const status = (await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body;
    expect(status).toMatchObject({ status: 'synced', last_synced_commit: sha });
  });

  it('an unsigned or wrongly signed delivery is refused with 401 and queues nothing', async () => {
    const sha = await commit({ 'office.yaml': office.replace('198.51.100.0/24', '203.0.113.0/24') }, 'move office');
    const before = await syncJobs();
    const unsigned = await githubPush(sha, { secret: null });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toMatchObject({ error: { code: 'unauthorized' } });
    const wrong = await githubPush(sha, { secret: 'whsec_not-the-secret-at-all-000000' });
    expect(wrong.status).toBe(401);
    const gitlabWrong = await request(t.url, 'POST', '/api/v1/webhooks/gitlab', {
      raw: JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', checkout_sha: sha, project: { git_http_url: `file://${bare}` } }),
      headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'wrong-token-wrong-token', 'idempotency-key': 'gl-1' },
    });
    expect(gitlabWrong.status).toBe(401);
    expect(await syncJobs()).toBe(before);
    expect((await siteRules()).ipRules.map((r) => r.value)).toEqual(['198.51.100.0/24']);
  });

  it('a GitLab push with the right token syncs, and a redelivery does nothing more', async () => {
    const sha = git(work, 'rev-parse', 'HEAD');
    const send = () =>
      request<{ status: string; syncs: { sync_id: string }[] }>(t.url, 'POST', '/api/v1/webhooks/gitlab', {
        raw: JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', checkout_sha: sha, project: { git_http_url: `file://${bare}`, web_url: 'https://gitlab.example/acme/config' } }),
        headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': secret, 'idempotency-key': 'gl-2' },
      });
    const first = await send();
    expect(first.status, first.text).toBe(202);
    const sync = await finished(first.body.syncs[0]!.sync_id);
    expect(sync).toMatchObject({ trigger: 'push', result: 'applied', commit_sha: sha });
    expect((await siteRules()).ipRules.map((r) => r.value)).toEqual(['203.0.113.0/24']);
    const jobs = await syncJobs();
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'duplicate', syncs: [] });
    expect(await syncJobs()).toBe(jobs);
  });

  it('a push to another branch, or of the commit already synced, queues nothing', async () => {
    const sha = git(work, 'rev-parse', 'HEAD');
    const other = await githubPush(sha, { ref: 'refs/heads/feature' });
    expect(other.status).toBe(202);
    expect(other.body.syncs).toEqual([]);
    const same = await githubPush(sha);
    expect(same.body.syncs).toEqual([]);
    expect(same.body.skipped).toEqual([{ repo_id: repo.id, reason: 'commit already synced' }]);
  });

  it("a signed ping is answered, and a push's sync is in the audit log", async () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1, repository: { clone_url: `file://${bare}` } });
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const ping = await request(t.url, 'POST', '/api/v1/webhooks/github', {
      raw: body,
      headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': 'ping-1', 'x-hub-signature-256': signature },
    });
    expect(ping.status, ping.text).toBe(200);
    expect(ping.body).toMatchObject({ status: 'ignored', event: 'ping' });
    const audit = (await t.call('GET', '/api/v1/audit-log?action=config_repo.push_received')).body.data as { actor: { type: string; id: string } }[];
    expect(audit.length).toBeGreaterThan(0);
    expect(audit[0]!.actor).toMatchObject({ type: 'system', id: 'webhook:github' });
  });

  it('a commit deleting a file prunes its objects', async () => {
    const sha = await commit({ 'office.yaml': null }, 'no more office rule');
    const sync = await pushAndSync(sha);
    expect(sync).toMatchObject({ result: 'applied', changes: ['delete IpAccessRule shop/office'] });
    expect((await siteRules()).ipRules).toEqual([]);
  });

  it('a commit with invalid YAML records a failed sync and changes nothing live', async () => {
    const before = await siteRules();
    const sha = await commit({ 'patches.yaml': `${patch('(?i)drop\\s+table')}  broken: [unclosed\n` }, 'broken yaml');
    const sync = await pushAndSync(sha);
    expect(sync).toMatchObject({ result: 'failed', failure_stage: 'validate', commit_sha: sha });
    expect(sync.errors.join('\n')).toMatch(/patches\.yaml/);
    expect(await siteRules()).toEqual(before);
    const status = (await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body;
    expect(status.status).toBe('error');
    expect(status.last_synced_commit).not.toBe(sha);

    // The failed sync is an event carrying the sync record.
    const failedEvents = (await t.call('GET', '/api/v1/events?type=config_repo.sync.failed')).body.data as { data: { object: { id: string; errors: string[] } } }[];
    expect(failedEvents.map((e) => e.data.object.id)).toContain(sync.id);

    const fixed = await commit({ 'patches.yaml': patch('(?i)union\\s+select') }, 'fix yaml');
    const recovered = await pushAndSync(fixed);
    expect(recovered).toMatchObject({ result: 'unchanged' });
    const completed = (await t.call('GET', '/api/v1/events?type=config_repo.sync.*')).body.data as { type: string; data: { object: { id: string } } }[];
    expect(completed[0]).toMatchObject({ type: 'config_repo.sync.completed', data: { object: { id: recovered.id } } });
    expect((await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body).toMatchObject({ status: 'synced', last_synced_commit: fixed });
  });

  it('a sync past the change threshold is refused until forced', async () => {
    await pushAndSync(await commit({ 'limits.yaml': limits('block') }, 'rate limits'));
    const patched = await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { max_changes: 2, max_change_percent: 10 } });
    expect(patched.status, patched.text).toBe(200);
    const sha = await commit({ 'limits.yaml': limits('log') }, 'all limits to log');
    const refused = await pushAndSync(sha);
    expect(refused.result).toBe('refused');
    expect(refused.errors.join('\n')).toMatch(/refusing to apply: 4 updates/);
    expect(refused.errors.join('\n')).toContain(`/api/v1/config-repos/${repo.id}/sync?force=true`);
    expect((await siteRules()).limits.map((l) => l.action)).toEqual(['block', 'block', 'block', 'block']);
    expect((await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body.status).toBe('out_of_sync');

    const forced = await t.call<Sync & { forced: boolean }>('POST', `/api/v1/config-repos/${repo.id}/sync?force=true`);
    expect(forced.status, forced.text).toBe(202);
    expect(forced.body).toMatchObject({ trigger: 'manual', forced: true, status: 'queued' });
    expect(await finished(forced.body.id)).toMatchObject({ result: 'applied', commit_sha: sha });
    expect((await siteRules()).limits.map((l) => l.action)).toEqual(['log', 'log', 'log', 'log']);
  });

  it('with auto_sync off a push only plans, and a manual sync applies', async () => {
    await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { auto_sync: false } });
    const sha = await commit({ 'office.yaml': office }, 'office again');
    const planned = await pushAndSync(sha);
    expect(planned).toMatchObject({ result: 'planned', changes: ['create IpAccessRule shop/office'] });
    expect((await siteRules()).ipRules).toEqual([]);
    expect((await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body).toMatchObject({ status: 'out_of_sync', status_message: '1 change(s) waiting: auto_sync is off' });
    const manual = await t.call<Sync>('POST', `/api/v1/config-repos/${repo.id}/sync`);
    expect(await finished(manual.body.id)).toMatchObject({ trigger: 'manual', result: 'applied', commit_sha: sha });
    expect((await siteRules()).ipRules).toHaveLength(1);
  });

  it('with deny_weakening a sync that removes protection waits for a forced sync', async () => {
    await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { auto_sync: true, deny_weakening: true } });
    const weaker = await pushAndSync(await commit({ 'office.yaml': null }, 'drop office'));
    expect(weaker.result).toBe('refused');
    expect(weaker.errors[0]).toBe('refusing to apply a weakening change: IpAccessRule/shop/office: deleted (protection removed)');
    expect((await siteRules()).ipRules).toHaveLength(1);
    const forced = await t.call<Sync>('POST', `/api/v1/config-repos/${repo.id}/sync?force=true`);
    expect(await finished(forced.body.id)).toMatchObject({ result: 'applied', changes: ['delete IpAccessRule shop/office'] });
    await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { deny_weakening: false } });
  });

  it('a rule edited by hand is reported as drift, and restored with self-heal', async () => {
    const healing = await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { self_heal: true, poll_interval_seconds: 5 } });
    expect(healing.status, healing.text).toBe(200);
    const { siteId, limits: live } = await siteRules();
    const rule = live.find((l) => l.url_pattern === '/a/*')!;
    const ruleUrl = `/api/v1/shield/sites/${siteId}/rate-limits/${String(rule.id)}`;
    const budgetOfA = async () => (await siteRules()).limits.find((l) => l.id === rule.id)!.budget;
    const edited = await t.call('PATCH', ruleUrl, { body: { budget: 100_000 } });
    expect(edited.status, edited.text).toBe(200);
    let healed: Sync | undefined;
    await eventually(async () => {
      const syncs = (await t.call<{ data: Sync[] }>('GET', `/api/v1/config-repos/${repo.id}/syncs?trigger=drift`)).body.data;
      healed = syncs.find((s) => s.result === 'applied');
      return healed !== undefined;
    }, 20_000, 200);
    expect(healed!.changes).toEqual(['update RateLimitRule shop/limit-a (budget)']);
    expect(await budgetOfA()).toBe(100);

    // Without self-heal the drift is reported, once, and left alone.
    await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { self_heal: false } });
    await t.call('PATCH', ruleUrl, { body: { budget: 5_000 } });
    await eventually(async () => (await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body.status === 'out_of_sync', 20_000, 200);
    const status = (await t.call<Repo>('GET', `/api/v1/config-repos/${repo.id}`)).body;
    expect(status.status_message).toMatch(/^drift: 1 change\(s\) would restore .*self_heal is off/);
    // A second check finds the same drift and records nothing new.
    await new Promise((r) => setTimeout(r, 6_000));
    const reported = (await t.call<{ data: Sync[] }>('GET', `/api/v1/config-repos/${repo.id}/syncs?trigger=drift&result=planned`)).body.data;
    expect(reported).toHaveLength(1);
    expect(reported[0]!.changes).toEqual(['update RateLimitRule shop/limit-a (budget)']);
    expect(await budgetOfA()).toBe(5_000);
    await t.call('PATCH', `/api/v1/config-repos/${repo.id}`, { body: { poll_interval_seconds: 3600 } });
  }, 60_000);

  it('is admin-only, per organisation, and refuses bad settings', async () => {
    const shieldKey = await keyInOrganization(t, 'default', ['shield:write']);
    expect((await t.call('GET', '/api/v1/config-repos', { key: shieldKey })).status).toBe(403);
    const otherAdmin = await keyInOrganization(t, 'other-org', ['admin']);
    expect((await t.call('GET', `/api/v1/config-repos/${repo.id}`, { key: otherAdmin })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/config-repos', { key: otherAdmin })).body.data).toEqual([]);

    const bad = async (body: Record<string, unknown>) => t.call('POST', '/api/v1/config-repos', { body: { name: 'bad', url: `file://${bare}`, ...body } });
    expect((await bad({ path: '../etc' })).status).toBe(422);
    expect((await bad({ path: 'config/../../etc' })).status).toBe(422);
    expect((await bad({ path: '/etc' })).status).toBe(422);
    expect((await bad({ branch: '--upload-pack=x' })).status).toBe(422);
    expect((await bad({ url: 'ext::sh -c touch% /tmp/pwned' })).status).toBe(422);
    const duplicate = await bad({ name: 'shop-config' });
    expect(duplicate.status).toBe(409);
    const sameSource = await bad({});
    expect(sameSource.status).toBe(409);
    expect(sameSource.body.error.message).toMatch(/source id/);
    expect((await t.call('GET', '/api/v1/config-repos')).body.data).toHaveLength(1);
  });

  it('refuses file:// repositories unless local sources are allowed', async () => {
    const strict = await startTestServer();
    try {
      const res = await strict.call('POST', '/api/v1/config-repos', { body: { name: 'local', url: `file://${bare}` } });
      expect(res.status).toBe(422);
      expect(res.body.error.details.fields[0].field).toBe('url');
    } finally {
      await strict.close();
    }
  });

  it('a path written as Argo CD users write it (".", "./sub/") names the root or the folder, and syncs', async () => {
    // A second repository: branch `flat` holds a site file at its root, `main` one under sub/.
    const other = join(root, 'dot.git');
    const otherWork = join(root, 'dot-work');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', other]);
    execFileSync('git', ['clone', '-q', other, otherWork], { stdio: 'pipe' });
    await mkdir(join(otherWork, 'sub'));
    await writeFile(join(otherWork, 'sub', 'site.yaml'), site.replace('name: shop', 'name: sub').replace('shop.gitops.test', 'sub.gitops.test'));
    git(otherWork, 'add', '-A');
    git(otherWork, 'commit', '-q', '-m', 'a site under sub/');
    git(otherWork, 'push', '-q', 'origin', 'main');
    git(otherWork, 'checkout', '-q', '--orphan', 'flat');
    git(otherWork, 'rm', '-rqf', '.');
    await writeFile(join(otherWork, 'site.yaml'), site.replace('name: shop', 'name: dot').replace('shop.gitops.test', 'dot.gitops.test'));
    git(otherWork, 'add', '-A');
    git(otherWork, 'commit', '-q', '-m', 'a site at the root');
    git(otherWork, 'push', '-q', 'origin', 'flat');

    const register = async (name: string, branch: string, path: string) => {
      const created = await t.call<Repo & { path: string; source: string }>('POST', '/api/v1/config-repos', { body: { name, url: `file://${other}`, branch, path, poll_interval_seconds: 3600 } });
      expect(created.status, created.text).toBe(201);
      await eventually(async () => (await t.call<Repo>('GET', `/api/v1/config-repos/${created.body.id}`)).body.status === 'synced', 15_000);
      return created.body;
    };
    const dot = await register('dot-root', 'flat', '.');
    expect(dot.path).toBe('');
    const sub = await register('dot-sub', 'main', './sub/');
    expect(sub.path).toBe('sub');
    expect(sub.source).toMatch(/\/sub$/);
    const domains = ((await t.call('GET', '/api/v1/shield/sites')).body.data as { domain: string }[]).map((s) => s.domain);
    expect(domains).toEqual(expect.arrayContaining(['dot.gitops.test', 'sub.gitops.test']));
    const patched = await t.call<{ path: string }>('PATCH', `/api/v1/config-repos/${sub.id}`, { body: { path: 'sub/.' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.path).toBe('sub');

    // A path that is a symbolic link out of the checkout is not followed (clones check links out as files).
    git(otherWork, 'checkout', '-q', '--orphan', 'escape');
    git(otherWork, 'rm', '-rqf', '.');
    await symlink(tmpdir(), join(otherWork, 'cfg'));
    git(otherWork, 'add', '-A');
    git(otherWork, 'commit', '-q', '-m', 'a link out');
    git(otherWork, 'push', '-q', 'origin', 'escape');
    const escape = await t.call<Repo>('POST', '/api/v1/config-repos', { body: { name: 'dot-escape', url: `file://${other}`, branch: 'escape', path: 'cfg', poll_interval_seconds: 3600 } });
    expect(escape.status, escape.text).toBe(201);
    let status!: Repo;
    await eventually(async () => (status = (await t.call<Repo>('GET', `/api/v1/config-repos/${escape.body.id}`)).body).status === 'error', 15_000);
    expect(status.status_message).toMatch(/the path "cfg" is not a directory/);
  }, 60_000);

  it('deleting a repository revokes its key and leaves its objects', async () => {
    const keyId = (await t.call('GET', `/api/v1/config-repos/${repo.id}`)).body.api_key_id as string;
    expect((await t.call('DELETE', `/api/v1/config-repos/${repo.id}`)).status).toBe(204);
    const keys = (await t.call('GET', '/api/v1/api-keys?status=revoked')).body.data as { id: string }[];
    expect(keys.map((k) => k.id)).toContain(keyId);
    expect((await siteRules()).limits).toHaveLength(4);
    expect((await githubPush(git(work, 'rev-parse', 'HEAD'))).status).toBe(401);
  });
});
