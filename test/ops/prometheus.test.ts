// The monitoring kit in ops/ against the processes it monitors. promtool (Debian's `prometheus`
// package) checks the alerting rules and runs their unit tests, and lints every process's /metrics:
// `aegis serve` (API, jobs and its gateway) and a gateway-only process always; with DATABASE_URL
// also an `aegis worker` and an `aegis shield --workers 2` cluster, whose primary serves its
// workers' aggregate. Every metric the rules and the Grafana dashboard query must be one of the
// names those scrapes export. Without promtool the file is skipped, unless AEGIS_REQUIRE_PROMTOOL=1
// (CI), where its absence fails.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../api/config.ts';
import { startStandaloneGateway, type StandaloneGateway } from '../../gateway/standalone.ts';
import { createMetrics, startMetricsServer, type RunningMetricsServer } from '../../platform/metrics/index.ts';
import { cloneDatabase, type TestDatabase } from '../support/database-template.ts';
import { viaGateway } from '../support/gateway.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { exposedNames, metricNames } from './promql-names.ts';
import { freePort } from '../support/loopback.ts';

const RULES = 'ops/prometheus/aegis-alerts.yml';
const RULE_TESTS = 'ops/prometheus/aegis-alerts.test.yml';
const DASHBOARD = 'ops/grafana/aegis-dashboard.json';
const AEGIS = resolve('bin/aegis.mjs');

const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
const required = process.env.AEGIS_REQUIRE_PROMTOOL === '1';
const onPostgres = Boolean(process.env.DATABASE_URL);

/** Runs promtool; `output` is stdout and stderr together (its lint findings go to either, by version). */
function promtool(args: string[], input?: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout ?? ''}${run.stderr ?? ''}`.trim() };
}

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([\w:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (wanted.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function alertRules(): Rule[] {
  const doc = parseYaml(readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

interface DashboardPanel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}

interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[];
  schemaVersion: number;
  panels: DashboardPanel[];
  templating: { list: { name: string; query: { query: string } | string }[] };
}

/** Every PromQL expression of the dashboard: its panels' targets and its query variables' label_values(metric, label). */
function dashboardExpressions(dashboard: Dashboard): { where: string; expr: string }[] {
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })));
  for (const variable of dashboard.templating.list) {
    const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
    const labelValues = /^label_values\((.*),\s*\w+\)$/.exec(query);
    exprs.push({ where: `variable $${variable.name}`, expr: labelValues?.[1] ?? query });
  }
  return exprs;
}


interface Spawned {
  child: ChildProcess;
  exited: Promise<void>;
}

/** Starts an `aegis` command and resolves once its output matches `ready` (rejects if it exits first). */
function spawnAegis(args: string[], env: Record<string, string>, ready: RegExp, running: Spawned[]): Promise<void> {
  const child = spawn(process.execPath, [AEGIS, ...args], { env: { ...process.env, AEGIS_FROM_SOURCE: '1', AEGIS_LOG_LEVEL: 'warn', REDIS_URL: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  running.push({ child, exited });
  let output = '';
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`aegis ${args[0]} did not start within 90 s: ${output}`)), 90_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        ok();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`aegis ${args[0]} exited: ${output}`));
    });
  });
}

describe('promtool', () => {
  it.skipIf(!hasPromtool && !required)('is on the PATH (AEGIS_REQUIRE_PROMTOOL=1 requires it)', () => {
    expect(hasPromtool, 'promtool is not on the PATH: install the Debian package `prometheus`').toBe(true);
  });
});

describe.skipIf(!hasPromtool)('ops/prometheus alerting rules', () => {
  it('pass promtool check rules', () => {
    const { status, output } = promtool(['check', 'rules', RULES]);
    expect(status, output).toBe(0);
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests (promtool test rules)', () => {
    const { status, output } = promtool(['test', 'rules', RULE_TESTS]);
    expect(status, output).toBe(0);
  });

  it('each wait (for), carry a severity, a summary and a description', () => {
    const rules = alertRules();
    expect(rules.length).toBeGreaterThan(10);
    for (const rule of rules) {
      expect(rule.alert, rule.expr).toMatch(/^Aegis\w+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
    }
  });
});

describe('the PromQL name tokenizer', () => {
  it('finds the metric names and nothing else', () => {
    expect(metricNames('sum by (kind) (rate(a_total{kind!="x",re=~"b|c{1}"}[15m] offset 1h)) / on (kind) group_left (job) max without (instance) (b) > 0.2 and bool c > 1e3')).toEqual(['a_total', 'b', 'c']);
    expect(metricNames('histogram_quantile(0.95, sum by (le) (rate(h_bucket{site=~"$site"}[$__rate_interval])))')).toEqual(['h_bucket']);
    expect(metricNames('min by (site) (x) < 14 * 86400 unless up == 0')).toEqual(['x', 'up']);
  });
});

describe.skipIf(!hasPromtool)('every process\'s /metrics', () => {
  let t: TestServer;
  let origin: Origin;
  let gatewayDatabase: TestDatabase;
  let gateway: StandaloneGateway | undefined;
  let gatewayMetrics: RunningMetricsServer | undefined;
  const spawned: Spawned[] = [];
  /** Where each process serves /metrics. */
  const endpoints = new Map<string, string>();
  const scrapes = new Map<string, string>();

  beforeAll(async () => {
    origin = await startOrigin();
    // `aegis serve` with its gateway, as deployed with AEGIS_METRICS_PORT.
    t = await startTestServer({ shieldEnabled: true, shieldPort: 0, trustedProxies: ['127.0.0.1', '::1'], allowPrivateTargets: true, metricsPort: 0, metricsHost: '127.0.0.1' });
    endpoints.set('aegis serve', `${t.server.metricsServer!.url}/metrics`);

    // Traffic, so that the labelled series have samples as well as their HELP and TYPE lines.
    const host = 'ops-metrics.gateway.test';
    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', managed_rules: { enabled: false } } });
    expect(site.status, site.text).toBe(201);
    const rule = await t.call('POST', `/api/v1/shield/sites/${site.body.id as string}/ip-access`, { body: { type: 'ip', value: '198.51.100.9', action: 'deny' } });
    expect(rule.status, rule.text).toBe(201);
    await t.server.gateway!.registry.refresh();
    expect((await viaGateway(t.server.gateway!.url, '/', { host, from: '192.0.2.1' })).status).toBe(200);
    expect((await viaGateway(t.server.gateway!.url, '/', { host, from: '198.51.100.9' })).status).toBe(403);

    // A gateway-only process (`aegis shield --workers 1`), in this process on a database of its own.
    gatewayDatabase = await cloneDatabase(inject('databaseTemplate'));
    const config = { ...loadConfig({ host: '127.0.0.1', shieldPort: '0', dataDir: gatewayDatabase.dataDir }, {}), databaseUrl: gatewayDatabase.databaseUrl, logLevel: 'silent' };
    gateway = await startStandaloneGateway(config, { collectMetrics: true });
    gatewayMetrics = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics: gateway.metrics! });
    endpoints.set('aegis shield', `${gatewayMetrics.url}/metrics`);

    if (onPostgres) {
      // Workers and the gateway cluster share PostgreSQL with the API (the embedded database is one process's).
      const env = { DATABASE_URL: t.database.databaseUrl!, AEGIS_METRICS_HOST: '127.0.0.1' };
      const workerPort = await freePort();
      const clusterPort = await freePort();
      await Promise.all([
        spawnAegis(['worker', '--data-dir', t.database.dataDir, '--no-scheduler'], { ...env, AEGIS_METRICS_PORT: String(workerPort) }, /metrics\s+http/, spawned),
        spawnAegis(['shield', '--workers', '2', '--host', '127.0.0.1', '--shield-port', '0', '--data-dir', t.database.dataDir], { ...env, AEGIS_METRICS_PORT: String(clusterPort) }, /metrics http\S+ \(all workers\)/, spawned),
      ]);
      endpoints.set('aegis worker', `http://127.0.0.1:${workerPort}/metrics`);
      endpoints.set('aegis shield --workers 2', `http://127.0.0.1:${clusterPort}/metrics`);
    }

    for (const [name, url] of endpoints) {
      const res = await fetch(url);
      expect(res.status, `${name}: ${url}`).toBe(200);
      scrapes.set(name, await res.text());
    }
  }, 180_000);

  afterAll(async () => {
    for (const { child, exited } of spawned) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    }
    await gatewayMetrics?.close();
    await gateway?.close();
    if (gatewayDatabase) rmSync(gatewayDatabase.dataDir, { recursive: true, force: true });
    await t?.close();
    await origin?.close();
  }, 60_000);

  it('pass promtool check metrics', () => {
    expect([...scrapes.keys()]).toEqual(onPostgres ? ['aegis serve', 'aegis shield', 'aegis worker', 'aegis shield --workers 2'] : ['aegis serve', 'aegis shield']);
    for (const [name, text] of scrapes) {
      expect(text, name).toContain('# TYPE aegis_process_cpu_seconds_total counter');
      const { status, output } = promtool(['check', 'metrics'], text);
      expect(output, name).toBe('');
      expect(status, name).toBe(0);
    }
    // The API's series had traffic: the lint saw samples, not only declarations.
    expect(sample(scrapes.get('aegis serve')!, 'aegis_shield_decisions_total', { action: 'block' })).toBe(1);
  });

  it('export every metric the alerting rules and the dashboard query', () => {
    const exported = new Set<string>(['up']); // `up` is written by Prometheus for each scrape target.
    for (const text of scrapes.values()) for (const name of exposedNames(text)) exported.add(name);
    if (!scrapes.has('aegis shield --workers 2')) {
      // Without PostgreSQL no cluster runs here: take its primary's own series from its source
      // (the run on PostgreSQL scrapes them).
      for (const m of readFileSync('gateway/cluster/primary.ts', 'utf8').matchAll(/new Gauge\(\{ name: '(\w+)'/g)) exported.add(m[1]!);
    }

    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
    const queried = [
      ...alertRules().map((r) => ({ where: `alert ${r.alert ?? '?'}`, expr: r.expr })),
      ...dashboardExpressions(dashboard),
    ];
    expect(queried.length).toBeGreaterThan(40);
    const missing: string[] = [];
    for (const { where, expr } of queried) {
      const names = metricNames(expr);
      if (names.length === 0) missing.push(`${where}: names no metric in ${expr}`);
      for (const name of names) if (!exported.has(name)) missing.push(`${where}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('the dashboard takes its Prometheus as the ${DS_PROMETHEUS} input', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.__inputs).toContainEqual(expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }));
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(20);
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource?.uid ?? '${DS_PROMETHEUS}', panel.title).toBe('${DS_PROMETHEUS}');
    }
  });

  it('count webhook endpoints by state (aegis_webhooks)', async () => {
    const scrape = async () => (await fetch(endpoints.get('aegis serve')!)).text();
    const before = await scrape();
    const count = (text: string, state: string) => sample(text, 'aegis_webhooks', { state }) ?? NaN;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const hook = await t.call('POST', '/api/v1/webhooks', { body: { url: `http://127.0.0.1:9/ops-${i}`, events: ['scan.completed'] } });
      expect(hook.status, hook.text).toBe(201);
      ids.push(hook.body.id as string);
    }
    // One turned off by its owner, one failing, one disabled by the delivery worker after failing.
    expect((await t.call('PATCH', `/api/v1/webhooks/${ids[0]!}`, { body: { enabled: false } })).status).toBe(200);
    const db = t.server.database.db;
    await db.updateTable('webhooks').set({ failing_since: new Date(Date.now() - 60_000) }).where('id', '=', ids[1]!).execute();
    await db.updateTable('webhooks').set({ enabled: false, failing_since: new Date(Date.now() - 86_400_000), disabled_reason: 'every delivery failed' }).where('id', '=', ids[2]!).execute();
    const after = await scrape();
    expect(count(after, 'enabled') - count(before, 'enabled')).toBe(1);
    expect(count(after, 'failing') - count(before, 'failing')).toBe(1);
    expect(count(after, 'auto_disabled') - count(before, 'auto_disabled')).toBe(1);
    expect(count(after, 'disabled') - count(before, 'disabled')).toBe(1);
    // Enabling it again by its owner clears the reason: it is enabled, not auto_disabled.
    expect((await t.call('PATCH', `/api/v1/webhooks/${ids[2]!}`, { body: { enabled: true } })).status).toBe(200);
    const reenabled = await scrape();
    expect(count(reenabled, 'auto_disabled')).toBe(count(before, 'auto_disabled'));
    expect(count(reenabled, 'enabled') - count(before, 'enabled')).toBe(2);
  });

  it('report a registered decision recorder\'s backlog, drops and failed writes, once per recorder', async () => {
    const metrics = createMetrics({ db: t.server.database.db });
    const text = async () => (await metrics.scrape()).body;
    // No recorder, no series: a process that records no decisions does not claim a healthy one.
    expect(await text()).not.toContain('aegis_shield_decisions_queued');
    const stats = { queued: 7, dropped: 2, failedWrites: 1 };
    const recorder = { stats: () => stats };
    metrics.gateway.decisionRecorder?.(recorder);
    metrics.gateway.decisionRecorder?.(recorder); // the live and the sandbox gateway share one
    metrics.gateway.decisionRecorder?.({ stats: () => ({ queued: 1, dropped: 0, failedWrites: 0 }) });
    let body = await text();
    expect(sample(body, 'aegis_shield_decisions_queued')).toBe(8);
    expect(sample(body, 'aegis_shield_decisions_dropped_total')).toBe(2);
    expect(sample(body, 'aegis_shield_decision_write_failures_total')).toBe(1);
    stats.queued = 0;
    stats.dropped = 5;
    body = await text();
    expect(sample(body, 'aegis_shield_decisions_queued')).toBe(1);
    expect(sample(body, 'aegis_shield_decisions_dropped_total')).toBe(5);
    const { status, output } = promtool(['check', 'metrics'], body);
    expect(output).toBe('');
    expect(status).toBe(0);
  });
});
