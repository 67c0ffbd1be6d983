// The Aegis processes of the run: two API processes (`aegis serve` without its in-process worker),
// two `aegis worker`s and one `aegis shield --workers 2`, all on the private PostgreSQL and Redis
// with one secret key and one bootstrap key. Each node can be killed and started again on the same
// port; "started" always means it printed its ready line, never that some time has passed.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../../test/support/loopback.ts';
import { killProc, startProc, stopProc, type Proc } from './procs.ts';

const AEGIS = resolve('bin/aegis.mjs');
const READY_MS = 120_000;

export type NodeKind = 'api' | 'worker' | 'shield';

export interface ClusterNode {
  readonly name: string;
  readonly kind: NodeKind;
  /** The HTTP address it serves (API or gateway); '' for a worker. */
  readonly url: string;
  proc(): Proc;
  /** The gateway's worker processes (shield only), as its last banner or restart lines named them. */
  gatewayPids(): number[];
  start(): Promise<void>;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterSettings {
  dir: string;
  databaseUrl: string;
  redisUrl: string;
  secretKey: string;
  apiKey: string;
  leaseMs: number;
}

/** The environment every process shares. */
export function clusterEnv(s: ClusterSettings): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: s.databaseUrl,
    REDIS_URL: s.redisUrl,
    AEGIS_SECRET_KEY: s.secretKey,
    AEGIS_BOOTSTRAP_API_KEY: s.apiKey,
    AEGIS_LOG_LEVEL: 'warn',
    AEGIS_ALLOW_LOCAL_SOURCES: 'true',
    AEGIS_ALLOW_PRIVATE_TARGETS: 'true',
    // The load sends far more than a person would; the API's per-key budget is not under test.
    AEGIS_RATE_LIMIT_PER_MINUTE: '1000000',
    AEGIS_JOB_LEASE_MS: String(s.leaseMs),
    AEGIS_JOB_POLL_MS: '250',
    AEGIS_WORKER_CONCURRENCY: '2',
    AEGIS_WARM_SCAN_THREADS: 'false',
    AEGIS_WEBHOOK_RETRY_DELAYS_MS: '250,500,1000,2000,4000,8000',
    AEGIS_WEBHOOK_TIMEOUT_MS: '5000',
    AEGIS_ACME_DIRECTORY_URL: 'https://acme.invalid/directory',
    AEGIS_ACME_CHECK_INTERVAL_MS: '2147483647',
    AEGIS_METRICS_PORT: '',
    PORT: '',
    AEGIS_SHIELD_WORKERS: '',
  };
}

interface NodeSpec {
  name: string;
  kind: NodeKind;
  port: number;
  args: string[];
  ready: RegExp;
  env: NodeJS.ProcessEnv;
}

function makeNode(spec: NodeSpec): ClusterNode {
  let current: Proc | undefined;
  let pids: number[] = [];
  const url = spec.port ? `http://127.0.0.1:${spec.port}` : '';
  const node: ClusterNode = {
    name: spec.name,
    kind: spec.kind,
    url,
    proc: () => {
      if (!current) throw new Error(`${spec.name} was never started`);
      return current;
    },
    gatewayPids: () => {
      if (!current) return [];
      const text = current.output();
      const banner = [...text.matchAll(/pids ([\d: ]+);/g)].at(-1);
      const slots = new Map<number, number>();
      for (const m of (banner?.[1] ?? '').matchAll(/(\d+):(\d+)/g)) slots.set(Number(m[1]), Number(m[2]));
      for (const m of text.matchAll(/Shield worker (\d+) restarted \(pid (\d+)\)/g)) slots.set(Number(m[1]), Number(m[2]));
      pids = [...slots.values()];
      return pids;
    },
    async start() {
      current = startProc(spec.name, process.execPath, [AEGIS, ...spec.args], { env: spec.env });
      await current.waitFor(spec.ready, READY_MS);
    },
    async kill9() {
      if (current) await killProc(current);
    },
    async stop() {
      const gateways = spec.kind === 'shield' ? node.gatewayPids() : [];
      if (current) await stopProc(current);
      // A gateway worker whose primary died stops on the IPC disconnect; make sure none outlives the run.
      for (const pid of gateways) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone, as it should be.
        }
      }
    },
  };
  return node;
}

export interface Cluster {
  apis: ClusterNode[];
  workers: ClusterNode[];
  shield: ClusterNode;
  all(): ClusterNode[];
  /** A gateway with one worker process on the same database, for the throughput comparison. */
  singleShield(): Promise<ClusterNode>;
  close(): Promise<void>;
}

export async function startCluster(s: ClusterSettings): Promise<Cluster> {
  const env = clusterEnv(s);
  const dataDir = (name: string) => {
    const dir = join(s.dir, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const apiNode = async (i: number) => {
    const port = await freePort();
    return makeNode({
      name: `api-${i}`,
      kind: 'api',
      port,
      // `aegis serve` is the API process; its own worker is off so that jobs run only on the workers.
      args: ['serve', '--host', '127.0.0.1', '--port', String(port), '--shield-port', '0', '--data-dir', dataDir(`api-${i}`)],
      ready: /API\s+http:\/\/\S+\/api\/v1/,
      env: { ...env, AEGIS_WORKER: 'false' },
    });
  };
  const workerNode = (i: number) =>
    makeNode({ name: `worker-${i}`, kind: 'worker', port: 0, args: ['worker', '--data-dir', dataDir(`worker-${i}`)], ready: /Aegis worker \S+ on PostgreSQL/, env });
  const shieldNode = async (name: string, workers: number) => {
    const port = await freePort();
    return makeNode({
      name,
      kind: 'shield',
      port,
      args: ['shield', '--host', '127.0.0.1', '--shield-port', String(port), '--workers', String(workers), '--data-dir', dataDir(name)],
      ready: workers > 1 ? /listening on http:\/\/\S+ \(\d+ workers, pids [\d: ]+;/ : /Shield gateway listening on http/,
      env,
    });
  };

  const apis = [await apiNode(1), await apiNode(2)];
  const workers = [workerNode(1), workerNode(2)];
  const shield = await shieldNode('shield', 2);
  const extra: ClusterNode[] = [];
  const all = () => [...apis, ...workers, shield, ...extra];
  try {
    // The first API migrates the empty database and creates the bootstrap key; the rest start together.
    await apis[0]!.start();
    await Promise.all([apis[1]!.start(), ...workers.map((w) => w.start()), shield.start()]);
  } catch (err) {
    await Promise.all(all().map((n) => n.stop().catch(() => undefined)));
    throw err;
  }
  return {
    apis,
    workers,
    shield,
    all,
    async singleShield() {
      const node = await shieldNode('shield-single', 1);
      extra.push(node);
      await node.start();
      return node;
    },
    async close() {
      await Promise.all(all().map((n) => n.stop().catch(() => undefined)));
    },
  };
}
