// Continuous GitOps: `aegis watch DIR` and `aegis serve --config-dir DIR` as users run them, in
// child processes against a real server, plus the pieces whose timing a process cannot pin down.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { passScheduler, type PassKind } from '../../reconciler/sync/pass-scheduler.ts';
import type { ReconcileOutcome } from '../../reconciler/sync/reconcile.ts';
import { passReport, type PassEvent, type WatchEvent } from '../../reconciler/sync/watch-events.ts';
import { generateKey } from '../../api/accounts/keys/key-material.ts';
import { selfUrl, watcherApiKey } from '../../cli/serve-config-dir.ts';
import { cloneDatabase } from '../support/database-template.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

const AEGIS = resolve('bin/aegis.mjs');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A long-running `aegis` process whose output lines can be waited for, in order. */
interface Running {
  lines: string[];
  /** The first line after the previous match that satisfies `match`. */
  next(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

function start(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [AEGIS, ...args], { env: { ...process.env, AEGIS_SOURCE: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  let cursor = 0;
  let wake: () => void = () => {};
  const collect = (prefix: string) => {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts.map((line) => prefix + line));
      wake();
    };
  };
  child.stdout!.on('data', collect(''));
  child.stderr!.on('data', collect('stderr: '));
  const exited = new Promise<number | null>((done) =>
    child.once('exit', (code) => {
      wake();
      done(code);
    }),
  );
  return {
    lines,
    async next(match, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = lines.findIndex((line, i) => i >= cursor && match(line));
        if (index >= 0) {
          cursor = index + 1;
          return lines[index]!;
        }
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no matching line (exit ${child.exitCode}); output:\n${lines.join('\n')}`);
        await new Promise<void>((done) => {
          wake = done;
          setTimeout(done, 100);
        });
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A port nothing listens on (yet). */
const freePort = (): Promise<number> =>
  new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

const parse = (line: string): WatchEvent | null => (line.startsWith('{') ? (JSON.parse(line) as WatchEvent) : null);
/** The next JSON event of `kind` (and trigger), from `aegis watch --json`. */
async function nextEvent(w: Running, kind: WatchEvent['kind'], trigger?: PassEvent['trigger']): Promise<PassEvent> {
  const line = await w.next((l) => {
    const e = parse(l);
    return e?.kind === kind && (trigger === undefined || (e.kind !== 'watching' && e.trigger === trigger));
  });
  return parse(line) as PassEvent;
}

function site(name: string, regex: string): string {
  return `apiVersion: aegis/v1
kind: ShieldSite
metadata:
  name: ${name}
spec:
  domain: ${name}.example.com
  origin_url: https://origin.${name}.example.com
  mode: block
  virtual_patches:
    - name: search-sqli
      url_pattern: /search
      method: GET
      match_param: q
      match_regex: ${JSON.stringify(regex)}
      action: block
`;
}

function ipRule(siteName: string, action: string): string {
  return `apiVersion: aegis/v1
kind: IpAccessRule
metadata:
  name: office
spec:
  site: ${siteName}
  type: cidr
  value: 198.51.100.0/24
  action: ${action}
`;
}

function configDir(siteName: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-watch-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'sites'));
  writeFileSync(join(dir, 'sites', 'site.yaml'), site(siteName, '(?i)union\\s+select'));
  writeFileSync(join(dir, 'sites', 'office.yaml'), ipRule(siteName, 'allow'));
  return dir;
}

describe('aegis watch', { timeout: 60_000 }, () => {
  let t: TestServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
    env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
  });
  afterAll(async () => {
    await t?.close();
  });

  const siteId = async (name: string): Promise<string | undefined> => (await t.call('GET', `/api/v1/shield/sites?domain=${name}.example.com`)).body.data[0]?.id;
  const patches = async (id: string) => ((await t.call('GET', `/api/v1/shield/sites/${id}/virtual-patches`)).body.data as { match_regex: string }[]).map((p) => p.match_regex);
  const ipRules = async (id: string) => (await t.call('GET', `/api/v1/shield/sites/${id}/ip-access`)).body.data as { id: string; action: string }[];

  it('applies the directory at start and each saved edit; invalid edits change nothing live; a deleted file is pruned', async () => {
    const dir = configDir('edits');
    const w = start(['watch', dir, '--source', 'test/watch-edits', '--drift-interval', '1', '--debounce', '100', '--json'], env);
    try {
      const initial = await nextEvent(w, 'applied', 'start');
      expect(initial.changes).toEqual(expect.arrayContaining(['create ShieldSite edits', 'create VirtualPatch edits/search-sqli', 'create IpAccessRule edits/office']));
      const id = (await siteId('edits'))!;
      expect(await patches(id)).toEqual(['(?i)union\\s+select']);

      const file = join(dir, 'sites', 'site.yaml');
      const saved = Date.now();
      writeFileSync(file, site('edits', '(?i)union\\s+all\\s+select'));
      await expect.poll(async () => (await patches(id)).includes('(?i)union\\s+all\\s+select'), { timeout: 10_000, interval: 20 }).toBe(true);
      const latency = Date.now() - saved;
      const edited = await nextEvent(w, 'applied', 'files');
      console.log(`aegis watch: edit saved → live in ${latency} ms (debounce 100 ms, the pass ${edited.durationMs} ms)`);
      // A different match is a different patch: the API replaces it.
      expect(edited.changes).toEqual(['replace VirtualPatch edits/search-sqli (match_regex)']);
      expect(await patches(id)).toEqual(['(?i)union\\s+all\\s+select']);

      writeFileSync(file, `${site('edits', '(?i)drop\\s+table')}  labels: [unclosed\n`);
      const broken = await nextEvent(w, 'invalid', 'files');
      expect(broken.errors.join('\n')).toMatch(/invalid YAML/);
      expect(await siteId('edits')).toBe(id);
      expect(await patches(id)).toEqual(['(?i)union\\s+all\\s+select']);

      writeFileSync(file, site('edits', '(?i)drop\\s+table').replace('mode: block', 'mode: obliterate'));
      const wrong = await nextEvent(w, 'invalid', 'files');
      expect(wrong.errors.join('\n')).toMatch(/mode/);
      expect(await patches(id)).toEqual(['(?i)union\\s+all\\s+select']);
      expect((await t.call('GET', `/api/v1/shield/sites/${id}`)).body.mode).toBe('block');

      writeFileSync(file, site('edits', '(?i)union\\s+all\\s+select'));
      await nextEvent(w, 'unchanged', 'files');

      rmSync(join(dir, 'sites', 'office.yaml'));
      const pruned = await nextEvent(w, 'applied', 'files');
      expect(pruned.changes).toEqual(['delete IpAccessRule edits/office']);
      expect(await ipRules(id)).toEqual([]);

      // Edits to files the loader does not read (dot-files, backups) start no pass.
      const before = w.lines.length;
      writeFileSync(join(dir, 'sites', '.site.yaml.swp'), 'junk');
      writeFileSync(join(dir, 'sites', 'site.yaml~'), 'junk');
      await new Promise((r) => setTimeout(r, 600));
      expect(w.lines.slice(before)).toEqual([]);
      // Nothing was changed by hand: the drift checks that ran meanwhile stayed quiet.
      expect(w.lines.map(parse).filter((e) => e?.kind === 'drift' || e?.kind === 'error')).toEqual([]);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('with --self-heal, a rule edited by hand through the API is reported as drift and restored', async () => {
    const dir = configDir('heal');
    const w = start(['watch', dir, '--source', 'test/watch-heal', '--self-heal', '--drift-interval', '1', '--json'], env);
    try {
      await nextEvent(w, 'applied', 'start');
      const id = (await siteId('heal'))!;
      const rule = (await ipRules(id))[0]!;
      expect((await t.call('PATCH', `/api/v1/shield/sites/${id}/ip-access/${rule.id}`, { body: { action: 'deny' } })).status).toBe(200);
      const healed = await nextEvent(w, 'healed', 'drift');
      expect(healed.changes).toEqual(['update IpAccessRule heal/office (action)']);
      expect((await ipRules(id))[0]!.action).toBe('allow');
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('without --self-heal, drift is reported once, left alone, and reported again when it is gone', async () => {
    const dir = configDir('drift');
    const w = start(['watch', dir, '--source', 'test/watch-drift', '--drift-interval', '1'], env);
    try {
      await w.next((l) => / applied 3 changes \(initial pass/.test(l));
      const id = (await siteId('drift'))!;
      const rule = (await ipRules(id))[0]!;
      expect((await t.call('PATCH', `/api/v1/shield/sites/${id}/ip-access/${rule.id}`, { body: { action: 'deny' } })).status).toBe(200);
      await w.next((l) => / drift: live state differs from the config by 1 change; left alone \(self-heal off\) \(drift check/.test(l));
      await w.next((l) => l === '  update IpAccessRule drift/office (action)');
      // More checks find the same drift: not reported again, and not restored.
      await new Promise((r) => setTimeout(r, 2200));
      expect(w.lines.filter((l) => l.includes(' drift: '))).toHaveLength(1);
      expect((await ipRules(id))[0]!.action).toBe('deny');

      await t.call('PATCH', `/api/v1/shield/sites/${id}/ip-access/${rule.id}`, { body: { action: 'allow' } });
      await w.next((l) => / in sync: live state matches the config again/.test(l));
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('a plan past the thresholds is refused with its reason, not forced, and not re-reported by drift checks', async () => {
    const dir = configDir('limits');
    const w = start(['watch', dir, '--source', 'test/watch-limits', '--self-heal', '--drift-interval', '1', '--max-changes', '0', '--max-change-percent', '0', '--json'], env);
    try {
      await nextEvent(w, 'applied', 'start'); // creations are never held back
      writeFileSync(join(dir, 'sites', 'office.yaml'), ipRule('limits', 'deny'));
      const refused = await nextEvent(w, 'refused', 'files');
      expect(refused.changes).toEqual(['update IpAccessRule limits/office (action)']);
      expect(refused.errors.join('\n')).toMatch(/refusing to apply: 1 updates\/replacements\/deletions .* floor of 0/);
      const before = w.lines.length;
      await new Promise((r) => setTimeout(r, 2200));
      expect(w.lines.slice(before)).toEqual([]);
      expect((await ipRules((await siteId('limits'))!))[0]!.action).toBe('allow');
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('reports an unreachable API, keeps watching, and applies once the API is back', async () => {
    const port = await freePort();
    const key = generateKey();
    const dir = configDir('offline');
    const w = start(['watch', dir, '--source', 'test/watch-offline', '--drift-interval', '1', '--json'], { AEGIS_API_URL: `http://localhost:${port}`, AEGIS_API_KEY: key });
    let later: TestServer | undefined;
    try {
      const failed = await nextEvent(w, 'failed', 'start');
      expect(failed.errors.join('\n')).toMatch(/could not read ShieldSite \(fetch failed\)/);
      later = await startTestServer({ port, bootstrapApiKey: key });
      const retried = await nextEvent(w, 'applied', 'retry');
      expect(retried.changes).toContain('create ShieldSite offline');
      expect((await later.call('GET', '/api/v1/shield/sites?domain=offline.example.com', { key })).body.data).toHaveLength(1);
    } finally {
      expect(await w.stop()).toBe(0);
      await later?.close();
    }
  });
});

describe('aegis serve --config-dir', { timeout: 60_000 }, () => {
  it('applies the directory through its own API with the bootstrap key file, and heals drift', async () => {
    const db = await cloneDatabase(inject('databaseTemplate'));
    dirs.push(db.dataDir);
    const dir = configDir('served');
    const s = start(['serve', '--host', '127.0.0.1', '--port', '0', '--shield-port', '0', '--data-dir', db.dataDir, '--config-dir', dir, '--self-heal', '--drift-interval', '1'], {
      DATABASE_URL: db.databaseUrl ?? '',
      AEGIS_API_KEY: '',
      AEGIS_BOOTSTRAP_API_KEY: '',
      AEGIS_SOURCE: 'test/serve',
      AEGIS_LOG_LEVEL: 'info',
    });
    try {
      const url = /API\s+(http:\/\/\S+)\/api\/v1/.exec(await s.next((l) => / API\s+http/.test(l), 30_000))![1]!;
      await s.next((l) => l.includes(`Config     watching ${dir} (drift check every 1 s, self-heal on)`));
      const key = readFileSync(join(db.dataDir, 'bootstrap-key'), 'utf8').trim();
      const get = async <T>(path: string) => (await request<{ data: T[] }>(url, 'GET', path, { key })).body.data;
      const applied = await s.next((l) => l.includes('"name":"gitops"') && l.includes('"event":"applied"'));
      expect(JSON.parse(applied)).toMatchObject({ level: 30, trigger: 'start', changes: expect.arrayContaining(['create ShieldSite served', 'create IpAccessRule served/office']) });
      const [site] = await get<{ id: string; labels: Record<string, string> }>('/api/v1/shield/sites?domain=served.example.com');
      expect(site!.labels['aegis.dev/source']).toBe('test/serve');
      const [rule] = await get<{ id: string }>(`/api/v1/shield/sites/${site!.id}/ip-access`);
      await request(url, 'PATCH', `/api/v1/shield/sites/${site!.id}/ip-access/${rule!.id}`, { key, body: { action: 'deny' } });
      await s.next((l) => l.includes('"name":"gitops"') && l.includes('drift healed'));
      expect((await get<{ action: string }>(`/api/v1/shield/sites/${site!.id}/ip-access`))[0]!.action).toBe('allow');
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });
});

describe('the pieces', () => {
  it('serve --config-dir calls its API with AEGIS_API_KEY, else the bootstrap key, else the key file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aegis-watch-key-'));
    dirs.push(dataDir);
    const config = { bootstrapApiKey: 'svc_live_bootstrap', dataDir };
    expect(await watcherApiKey(config, { AEGIS_API_KEY: 'svc_live_env' })).toBe('svc_live_env');
    expect(await watcherApiKey(config, {})).toBe('svc_live_bootstrap');
    expect(await watcherApiKey({ bootstrapApiKey: undefined, dataDir }, {})).toBeUndefined();
    writeFileSync(join(dataDir, 'bootstrap-key'), 'svc_live_file\n');
    expect(await watcherApiKey({ bootstrapApiKey: undefined, dataDir }, {})).toBe('svc_live_file');
  });

  it('serve --config-dir reaches its own API where it listens', () => {
    expect(selfUrl('http://localhost:3000', '0.0.0.0')).toBe('http://localhost:3000');
    expect(selfUrl('http://localhost:3000', '127.0.0.1')).toBe('http://localhost:3000');
    expect(selfUrl('http://localhost:3000', '10.0.0.5')).toBe('http://10.0.0.5:3000');
    expect(selfUrl('http://localhost:3000', 'fd00::5')).toBe('http://[fd00::5]:3000');
  });


  it('runs one pass at a time; requests during a pass coalesce into exactly one more', async () => {
    const ran: PassKind[] = [];
    let active = 0;
    let most = 0;
    let release: () => void = () => {};
    const scheduler = passScheduler(async (kind) => {
      ran.push(kind);
      most = Math.max(most, ++active);
      await new Promise<void>((done) => (release = done));
      active--;
    }, () => {});
    scheduler.request('files');
    for (let i = 0; i < 5; i++) scheduler.request('files');
    scheduler.request('drift');
    const settled = scheduler.settled();
    release();
    await new Promise((r) => setImmediate(r));
    release();
    await settled;
    // A file pass applies everything, so the waiting drift check is folded into it.
    expect(ran).toEqual(['files', 'files']);
    expect(most).toBe(1);
    await scheduler.close();
  });

  it('reports drift once per distinct plan and again when it is gone; file passes always', () => {
    const outcome = (result: ReconcileOutcome['result'], checksum: string | null): ReconcileOutcome => ({
      result,
      summary: { create: 0, update: result === 'unchanged' ? 0 : 1, replace: 0, delete: 0, unchanged: 1, checksum },
      changes: result === 'unchanged' ? [] : ['update VirtualPatch shop/sqli (match_regex)'],
      errors: [],
      warnings: [],
      plan: null,
    });
    const timing = { at: new Date(), durationMs: 5 };
    const first = passReport('drift', outcome('planned', 'aaaa'), 'in-sync', timing);
    expect(first.event?.kind).toBe('drift');
    expect(passReport('drift', outcome('planned', 'aaaa'), first.signature, timing).event).toBeNull();
    expect(passReport('drift', outcome('planned', 'bbbb'), first.signature, timing).event?.kind).toBe('drift');
    expect(passReport('drift', outcome('unchanged', 'cccc'), first.signature, timing).event?.kind).toBe('in-sync');
    expect(passReport('drift', outcome('unchanged', 'cccc'), 'in-sync', timing).event).toBeNull();
    // A plan a file pass left refused is no drift when the next check finds that very plan.
    const refused = passReport('files', outcome('refused', 'dddd'), 'in-sync', timing);
    expect(passReport('drift', outcome('planned', 'dddd'), refused.signature, timing).event).toBeNull();
    expect(passReport('files', outcome('unchanged', 'eeee'), 'in-sync', timing).event?.kind).toBe('unchanged');
    // A failed file pass is retried quietly until something changes.
    const failed = passReport('files', { ...outcome('failed', 'ffff'), errors: ['b', 'a'] }, 'in-sync', timing);
    expect(passReport('retry', { ...outcome('failed', 'ffff'), errors: ['a', 'b'] }, failed.signature, timing).event).toBeNull();
    expect(passReport('retry', outcome('applied', 'ffff'), failed.signature, timing).event?.kind).toBe('applied');
  });
});
