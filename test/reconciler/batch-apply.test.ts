// Apply sends a site's many rule changes through the rule batch endpoint (≤ 1 000 a request), still
// reports every change, and after a failed batch says which change failed, applies none of that
// batch, and converges on the next run. Against a real server, through the real client.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlan, type StepOutcome } from '../../reconciler/apply/apply.ts';
import { createAegisClient, type AegisClient } from '../../client/client.ts';
import { preparePlan, type PlanInputs, type PlanSession } from '../../reconciler/sync/session.ts';
import { restResources } from '../../reconciler/live/rest-resources.ts';
import type { ResourceApi } from '../../reconciler/live/resources.ts';
import { summarise } from '../../reconciler/plan/plan.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let client: AegisClient;
let api: ResourceApi;
const dirs: string[] = [];
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  client = createAegisClient({ baseUrl: t.url, apiKey: t.adminKey });
  api = restResources(client);
});
afterAll(async () => {
  await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A site with `rules` nested rules: every 10, 7 IP rules, 2 virtual patches and 1 rate limit. */
function siteFile(name: string, rules: number, action = 'deny', skip = new Set<number>()): string {
  const ip: string[] = [];
  const patches: string[] = [];
  const limits: string[] = [];
  for (let r = 0; r < rules; r++) {
    if (skip.has(r)) continue;
    const slot = r % 10;
    if (slot < 7) ip.push(`    - name: ip${r}\n      type: ip\n      value: 10.1.${r >> 8}.${r & 255}\n      action: ${action}`);
    else if (slot < 9) patches.push(`    - name: vp${r}\n      url_pattern: /s/${r}\n      method: GET\n      match_param: q\n      match_regex: "x${r}"`);
    else limits.push(`    - name: rl${r}\n      identity: ip\n      url_pattern: /a/${r}\n      method: POST\n      budget: 10\n      window_seconds: 60\n      action: block`);
  }
  const section = (field: string, items: string[]) => (items.length > 0 ? `  ${field}:\n${items.join('\n')}\n` : '');
  return (
    `apiVersion: aegis/v1\nkind: ShieldSite\nmetadata:\n  name: ${name}\nspec:\n  domain: ${name}.batch.example.com\n  origin_url: http://127.0.0.1:9\n  mode: block\n` +
    section('ip_access', ip) +
    section('virtual_patches', patches) +
    section('rate_limits', limits)
  );
}

function repoWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-batch-apply-'));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

const inputs = (path: string, source: string): PlanInputs => ({ path, source, adopt: false, prune: true, denyWeakening: false });

async function plan(path: string, source: string): Promise<PlanSession> {
  const prepared = await preparePlan(api, inputs(path, source));
  if ('configErrors' in prepared) throw new Error(prepared.configErrors.join('\n'));
  expect(prepared.errors).toEqual([]);
  return prepared;
}

async function siteIdOf(domain: string): Promise<string> {
  return (await client.GET('/api/v1/shield/sites', { params: { query: { domain } } })).data[0]!.id;
}

const count = async (siteId: string) => ({
  ip: (await client.listAll('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: siteId } } })).items.length,
  patches: (await client.listAll('/api/v1/shield/sites/{id}/virtual-patches', { params: { path: { id: siteId } } })).items.length,
  limits: (await client.listAll('/api/v1/shield/sites/{id}/rate-limits', { params: { path: { id: siteId } } })).items.length,
});

describe('apply through rule batches', () => {
  it('applies a plan with many rules in a few requests, reports every change, and then has nothing to do', async () => {
    const repo = repoWith({ 'a.yaml': siteFile('batch-a', 1200), 'b.yaml': siteFile('batch-b', 300) });
    const first = await plan(repo, 'batch-src');
    expect(summarise(first.plan).create).toBe(2 + 1500);
    client.resetStats();
    const reported: StepOutcome[] = [];
    const result = await applyPlan(first.plan, api, { onStep: (o, error) => (error ? undefined : reported.push(o)) });
    expect(result.failed).toEqual([]);
    expect(result.notAttempted).toEqual([]);
    // Every change is reported applied, with the id the server gave it.
    expect(result.applied).toHaveLength(1502);
    expect(reported).toHaveLength(1502);
    expect(result.applied.every((o) => typeof o.id === 'string' && o.id.length > 0)).toBe(true);
    // Two sites, then site a in two batches (1 000 + 200) and site b in one.
    expect(client.stats.writes).toBe(2 + 2 + 1);
    const a = await siteIdOf('batch-a.batch.example.com');
    expect(await count(a)).toEqual({ ip: 840, patches: 240, limits: 120 });
    const ipId = result.applied.find((o) => o.change.name === 'batch-a/ip0')!.id!;
    expect((await client.GET('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: a, rule_id: ipId } } })).value).toBe('10.1.0.0');
    expect((await plan(repo, 'batch-src')).plan.changes).toEqual([]);

    // Updates (action of every IP rule) and prunes (every 5th rule of site a, all IP rules) go in
    // batches too: one per site for the updates, one for site a's deletions.
    const skip = new Set(Array.from({ length: 300 }, (_, i) => i * 5));
    writeFileSync(join(repo, 'a.yaml'), siteFile('batch-a', 1200, 'challenge', skip));
    writeFileSync(join(repo, 'b.yaml'), siteFile('batch-b', 300, 'challenge'));
    const second = await plan(repo, 'batch-src');
    expect(summarise(second.plan)).toMatchObject({ update: 600 + 210, delete: 240 });
    client.resetStats();
    const changed = await applyPlan(second.plan, api);
    expect(changed.failed).toEqual([]);
    expect(changed.applied).toHaveLength(second.plan.changes.length);
    expect(client.stats.writes).toBe(3);
    expect(await count(a)).toEqual({ ip: 600, patches: 240, limits: 120 });
    expect((await plan(repo, 'batch-src')).plan.changes).toEqual([]);
  });

  it('a small plan still sends one request per change', async () => {
    const repo = repoWith({ 'small.yaml': siteFile('batch-small', 20) });
    const first = await plan(repo, 'small-src');
    client.resetStats();
    const result = await applyPlan(first.plan, api);
    expect(result.applied).toHaveLength(21);
    expect(client.stats.writes).toBe(21);
  });

  it('a failed batch names the failing change, applies none of the batch, and a re-run converges', async () => {
    const repo = repoWith({ 'c.yaml': siteFile('batch-c', 120) });
    // The site exists first, so the next plan has only its rules to create.
    await applyPlan((await plan(repoWith({ 'c.yaml': siteFile('batch-c', 0) }), 'fail-src')).plan, api);
    const siteId = await siteIdOf('batch-c.batch.example.com');
    const pending = await plan(repo, 'fail-src');
    expect(summarise(pending.plan).create).toBe(120);
    // Between plan and apply someone adds by hand the rule that ip61 will create: the batch clashes on it.
    await client.POST('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: siteId } }, body: { type: 'ip', value: '10.1.0.61', action: 'deny' } });

    const failures: { outcome: StepOutcome; error: string }[] = [];
    const result = await applyPlan(pending.plan, api, { onStep: (outcome, error) => (error ? failures.push({ outcome, error }) : undefined) });
    expect(result.applied).toEqual([]);
    expect(result.failed).toHaveLength(1);
    expect(result.failed[0]!.change.name).toBe('batch-c/ip61');
    expect(result.failed[0]!.error).toMatch(/409 conflict: operation \d+ \(create ip_access_rule\).*10\.1\.0\.61/);
    expect(result.failed[0]!.error).toMatch(/batch of 120 change\(s\).*none applied/);
    expect(failures.map((f) => f.outcome.change.name)).toEqual(['batch-c/ip61']);
    expect(result.notAttempted).toHaveLength(119);
    expect(result.notAttempted.map((o) => o.change.name)).not.toContain('batch-c/ip61');
    // Nothing of the batch reached the server: only the hand-made rule is there.
    expect(await count(siteId)).toEqual({ ip: 1, patches: 0, limits: 0 });

    // The cause removed, the same command converges.
    const manual = (await client.listAll('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: siteId } } })).items[0]!;
    await client.DELETE('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: siteId, rule_id: manual.id } } });
    const rerun = await applyPlan((await plan(repo, 'fail-src')).plan, api);
    expect(rerun.failed).toEqual([]);
    expect(rerun.applied).toHaveLength(120);
    expect(await count(siteId)).toEqual({ ip: 84, patches: 24, limits: 12 });
    expect((await plan(repo, 'fail-src')).plan.changes).toEqual([]);
  });

  it('the old path (batch: false) still applies change by change', async () => {
    const repo = repoWith({ 'd.yaml': siteFile('batch-d', 60) });
    const first = await plan(repo, 'single-src');
    client.resetStats();
    const result = await applyPlan(first.plan, api, { batch: false });
    expect(result.applied).toHaveLength(61);
    expect(client.stats.writes).toBe(61);
    expect((await plan(repo, 'single-src')).plan.changes).toEqual([]);
  });
});
