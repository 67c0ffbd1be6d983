// The WAFs under test, all in front of one origin (origin.ts): the Aegis gateway, started in this
// process as bench/shield.ts starts it, with four sites whose managed rules run at paranoia levels
// 1–4 in block mode; and Debian nginx + ModSecurity v3 + OWASP CRS (paranoia level 1, blocking),
// when installed. The gateway's answers name no rule, so the rule behind each PL1 block is taken
// from the decisions the gateway records (the live bus, by request id).
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { generateKey } from '../../../api/accounts/keys/key-material.ts';
import { loadConfig } from '../../../api/config.ts';
import { startServer, type RunningServer } from '../../../api/server.ts';
import { modsecAvailable, startNginxProxy, writeModsecConf } from '../nginx.ts';
import { ORIGIN_HEADER, startOrigin } from './origin.ts';

export interface Target {
  /** Column label: PL1 … PL4, ModSec. */
  label: string;
  /** Base URL to connect to. */
  base: string;
  /** Host header that selects the site. */
  host: string;
  /** Whether answers carry the gateway's X-Request-Id (for the rule lookup). */
  gateway: boolean;
}

export interface Targets {
  list: Target[];
  /** Why there is no ModSecurity column, when there is none. */
  modsecMissing: string | null;
  /** `rule_kind:rule_id` of the PL1 site's decision for a request id, once recorded. */
  pl1Rule(requestId: string): string | undefined;
  /** Waits until the decisions of requests sent so far have been recorded and published. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const LEVELS = [1, 2, 3, 4] as const;

/** Sends `path` to a target; throws unless the answer is what `expect` says. */
async function check(target: Target, path: string, expect: 'blocked' | 'passed'): Promise<void> {
  const res = await request(target.base + path, { headers: { host: target.host, 'user-agent': 'Mozilla/5.0', accept: '*/*' } });
  await res.body.dump();
  const passed = res.headers[ORIGIN_HEADER] === '1';
  if (expect === 'blocked' ? passed || res.statusCode !== 403 : !passed) {
    throw new Error(`${target.label} answers ${path} with ${res.statusCode}${passed ? ' from the origin' : ''}: expected it ${expect}; the comparison would be meaningless`);
  }
}

export async function startTargets(): Promise<Targets> {
  const dir = await mkdtemp(join(tmpdir(), 'aegis-eval-managed-'));
  // nginx's workers (user nobody when started as root) buffer large bodies in temp files below it.
  await chmod(dir, 0o755);
  const origin = await startOrigin(LEVELS.length + 1);
  let server: RunningServer | undefined;
  let nginx: ChildProcess | undefined;
  const close = async () => {
    if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
      const exited = new Promise((resolve) => nginx!.once('exit', resolve));
      nginx.kill('SIGQUIT');
      await exited;
    }
    await server?.close();
    await origin.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const key = generateKey();
    const base = loadConfig({ host: '127.0.0.1', port: '0', shieldPort: '0', dataDir: join(dir, 'data') }, {});
    server = await startServer({
      ...base,
      bootstrapApiKey: key,
      logLevel: 'error',
      rateLimitPerMinute: 1_000_000,
      // Four sites × 32 requests in flight from one address: the per-client upload budget would
      // otherwise answer 429 to the bodies past 32 (a budget, not a rule).
      shieldBodyBudget: { ...base.shieldBodyBudget, uploadsPerClient: 1024 },
    });
    const gateway = server.gateway!;
    const list: Target[] = [];
    const siteIds = new Map<number, string>();
    for (const level of LEVELS) {
      const domain = `pl${level}.eval.test`;
      const res = await fetch(`${server.url}/api/v1/shield/sites`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ domain, origin_url: `http://127.0.0.1:${origin.ports[level - 1]}`, mode: 'block', managed_rules: { enabled: true, paranoia_level: level }, tls: { mode: 'off' } }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 201 || !body.id) throw new Error(`creating ${domain}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      siteIds.set(level, body.id);
      list.push({ label: `PL${level}`, base: gateway.url, host: domain, gateway: true });
    }
    await gateway.registry.refresh();
    const rules = new Map<string, string>();
    server.shieldEvents.bus.subscribe((event) => {
      if (event.site_id === siteIds.get(1) && event.action === 'block') rules.set(event.request_id, `${event.rule_kind}:${event.rule_id}`);
    });
    let modsecMissing: string | null = 'ModSecurity not installed (apt-get install libnginx-mod-http-modsecurity modsecurity-crs)';
    if (modsecAvailable()) {
      await writeModsecConf(dir);
      // As many workers as cores: ModSecurity is the slowest target, and it has the cores to itself once the gateway is done.
      const proxy = await startNginxProxy(dir, origin.ports[LEVELS.length]!, availableParallelism(), true);
      nginx = proxy.process;
      list.push({ label: 'ModSec', base: `http://127.0.0.1:${proxy.port}`, host: 'eval.test', gateway: false });
      modsecMissing = null;
    }
    for (const target of list) {
      await check(target, '/', 'passed');
      await check(target, `/search?q=${encodeURIComponent("1' union select password from users --")}`, 'blocked');
    }
    return {
      list,
      modsecMissing,
      pl1Rule: (requestId) => rules.get(requestId),
      settle: () => server!.shieldEvents.recorder.flush(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
