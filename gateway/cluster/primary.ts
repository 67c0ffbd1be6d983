// The primary of a gateway cluster (`aegis shield --workers N`, `aegis serve --shield-workers N`):
// forks N worker processes with node:cluster, each running the ordinary gateway (./worker-main.ts)
// on one shared port, and looks after them. It serves no traffic itself. Its jobs:
//
//   - listening: node:cluster's primary owns the listening sockets (the plain port, and the TLS
//     port when one is set) and hands accepted connections to the workers in turn (round-robin, the
//     default scheduling on every platform but Windows);
//   - rate limits without Redis: it holds the one MemoryRateState and answers the workers' requests
//     (./ipc-rate-state.ts), so a budget is spent once across workers. With REDIS_URL the workers
//     go to Redis directly, exactly as separate `aegis shield` nodes do, and the primary stays idle;
//   - restarts: a worker that dies is replaced in its slot (backing off when it keeps dying young);
//   - metrics: on a scrape of AEGIS_METRICS_PORT it asks every worker for its registry's JSON and
//     serves prom-client's aggregate (counters and histograms summed), plus a few series of its own;
//   - shutdown: every worker is told to stop taking connections and finish what it has, then exits.
//
// Rules reach every worker the way they reach separate gateway nodes: each worker polls the
// database for changed sites (AEGIS_SHIELD_REFRESH_MS), so nothing needs to be relayed here.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { AggregatorRegistry, Gauge, Registry } from 'prom-client';
import { gatewaySettingsOf, type GatewaySettings } from '../settings.ts';
import { loadServerKey } from '../../platform/crypto/secret-box.ts';
import { startMetricsServer, type RunningMetricsServer, type ServerMetrics } from '../../platform/metrics/index.ts';
import { MemoryRateState } from '../state/memory-rate-state.ts';
import { answerRateBatch, isRateBatch } from './ipc-rate-state.ts';
import { WORKER_ENV, isWorkerMessage, type PrimaryMessage, type WorkerMetrics, type WorkerSetup } from './messages.ts';

/** In the dist/ bundle build/bundle.mjs rewrites this URL to the bundled worker (THREAD_ENTRIES). */
const WORKER_ENTRY = new URL('./worker-bootstrap.mjs', import.meta.url);

/** PostgreSQL connections a single gateway process opens; a cluster shares them among its workers. */
const POOL_CONNECTIONS = 10;
const STOP_TIMEOUT_MS = 20_000;
const METRICS_TIMEOUT_MS = 2_000;
/** A worker that dies sooner than this after its start counts as crashing: the next start waits. */
const YOUNG_MS = 5_000;
const MAX_BACKOFF_MS = 10_000;

export interface ClusterOptions {
  workers: number;
  log: Logger;
  /** Serve the aggregated metrics on config.metricsPort (default: when it is set). */
  serveMetrics?: boolean | undefined;
  /** Told when a worker is up: at start and after every restart. */
  onWorkerReady?: ((worker: { slot: number; pid: number }) => void) | undefined;
}

export interface RunningCluster {
  url: string;
  port: number;
  /** The TLS port every worker listens on too (shieldTlsPort), when set. */
  tlsPort: number | undefined;
  tlsUrl: string | undefined;
  /** The live workers by slot. */
  workers(): { slot: number; pid: number }[];
  /** How many workers were replaced since start. */
  restarts(): number;
  metricsServer: RunningMetricsServer | undefined;
  close(): Promise<void>;
}

interface Slot {
  slot: number;
  worker: Worker | undefined;
  ready: boolean;
  startedAt: number;
  failures: number;
  timer?: NodeJS.Timeout | undefined;
}

export async function startGatewayCluster(config: GatewaySettings, options: ClusterOptions): Promise<RunningCluster> {
  const count = options.workers;
  if (!Number.isInteger(count) || count < 1) throw new Error(`gateway workers must be an integer from 1, got ${count}`);
  if (!config.databaseUrl) throw new Error('a gateway cluster needs PostgreSQL (DATABASE_URL): the embedded database belongs to one process');
  const { log } = options;
  const ipcRateState = !config.redisUrl;
  const rates = ipcRateState ? new MemoryRateState() : undefined;
  const serveMetrics = (options.serveMetrics ?? true) && config.metricsPort !== undefined;
  const settings = gatewaySettingsOf(config);
  const setupFor = (slot: number): WorkerSetup => ({
    settings,
    slot,
    ipcRateState,
    collectMetrics: serveMetrics,
    poolSize: Math.max(2, Math.ceil(POOL_CONNECTIONS / count)),
  });

  // Created here once if missing, rather than raced for by N workers (loadServerKey is safe either way).
  await loadServerKey(config.dataDir, config.secretKey);
  cluster.setupPrimary({ exec: fileURLToPath(WORKER_ENTRY), execArgv: workerExecArgv(process.execArgv), args: [], silent: false });

  const slots: Slot[] = Array.from({ length: count }, (_, i) => ({ slot: i + 1, worker: undefined, ready: false, startedAt: 0, failures: 0 }));
  const bySlot = new Map<Worker, Slot>();
  let stopping = false;
  let restarts = 0;
  let port = 0;
  let tlsPort: number | undefined;
  let metricsId = 0;
  const metricsWaiters = new Map<number, { pending: Set<number>; results: Map<number, WorkerMetrics>; done(): void }>();
  let startup: { resolve(): void; reject(err: Error): void; waiting: Set<number> } | undefined;

  function fork(slot: Slot): void {
    slot.timer = undefined;
    slot.ready = false;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [WORKER_ENV]: JSON.stringify(setupFor(slot.slot)) });
    slot.worker = worker;
    bySlot.set(worker, slot);
    worker.on('message', (message: unknown) => {
      if (isRateBatch(message)) {
        if (rates) send(worker, answerRateBatch(rates, message));
        return;
      }
      if (!isWorkerMessage(message)) return;
      if (message.aegis === 'ready') {
        slot.ready = true;
        port = message.port;
        tlsPort = message.tlsPort;
        options.onWorkerReady?.({ slot: slot.slot, pid: worker.process.pid ?? 0 });
        if (startup?.waiting.delete(slot.slot) && startup.waiting.size === 0) startup.resolve();
      } else if (message.aegis === 'metrics') {
        const waiter = metricsWaiters.get(message.id);
        if (!waiter) return;
        if ('metrics' in message) waiter.results.set(slot.slot, message.metrics);
        waiter.pending.delete(slot.slot);
        if (waiter.pending.size === 0) waiter.done();
      }
    });
    worker.on('error', (err) => log.warn({ err, slot: slot.slot }, 'shield cluster: worker channel error'));
  }

  cluster.on('exit', onExit);
  function onExit(worker: Worker, code: number | null, signal: string | null): void {
    const slot = bySlot.get(worker);
    if (!slot) return;
    bySlot.delete(worker);
    if (slot.worker === worker) slot.worker = undefined;
    const wasReady = slot.ready;
    slot.ready = false;
    for (const waiter of metricsWaiters.values()) {
      if (waiter.pending.delete(slot.slot) && waiter.pending.size === 0) waiter.done();
    }
    if (stopping) return;
    if (startup && !wasReady) {
      // A worker that cannot start (bad settings, database unreachable) will not start on a retry.
      startup.reject(new Error(`gateway worker ${slot.slot} exited with ${signal ?? `code ${code}`} before it was ready`));
      return;
    }
    const young = Date.now() - slot.startedAt < YOUNG_MS;
    slot.failures = young ? slot.failures + 1 : 0;
    const delay = young ? Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(slot.failures, 10)) : 0;
    restarts++;
    log.warn({ slot: slot.slot, workerPid: worker.process.pid, code, signal, restartInMs: delay }, 'shield cluster: worker died; starting a replacement');
    slot.timer = setTimeout(() => fork(slot), delay);
  }

  /** Scrape: every ready worker's registry as JSON, aggregated, plus the cluster's own series. */
  async function collect(): Promise<Registry> {
    const id = metricsId++;
    const live = slots.filter((s) => s.ready && s.worker?.isConnected());
    const results = new Map<number, WorkerMetrics>();
    await new Promise<void>((resolve) => {
      const pending = new Set(live.map((s) => s.slot));
      const timer = setTimeout(done, METRICS_TIMEOUT_MS);
      function done() {
        clearTimeout(timer);
        metricsWaiters.delete(id);
        resolve();
      }
      if (pending.size === 0) return done();
      metricsWaiters.set(id, { pending, results, done });
      for (const s of live) send(s.worker!, { aegis: 'metrics-request', id } satisfies PrimaryMessage);
    });
    const aggregated = AggregatorRegistry.aggregate([...results.values()]);
    const own = new Registry();
    new Gauge({ name: 'aegis_shield_workers', help: 'Gateway worker processes ready to serve (the cluster primary counts them).', registers: [own] }).set(slots.filter((s) => s.ready).length);
    new Gauge({ name: 'aegis_shield_worker_restarts', help: 'Gateway workers replaced after dying since the cluster primary started.', registers: [own] }).set(restarts);
    const perWorker = new Gauge({ name: 'aegis_shield_worker_decisions', help: 'Decisions made by each gateway worker (slot) since it started: how evenly connections spread. A replaced worker starts from 0.', labelNames: ['worker'], registers: [own] });
    for (const [slot, metrics] of results) {
      const decisions = metrics.find((m) => m.name === 'aegis_shield_decisions_total');
      perWorker.set({ worker: String(slot) }, (decisions?.values ?? []).reduce((sum, v) => sum + v.value, 0));
    }
    return Registry.merge([aggregated as Registry, own]);
  }

  let metricsServer: RunningMetricsServer | undefined;
  const stopAll = async (): Promise<void> => {
    stopping = true;
    for (const slot of slots) clearTimeout(slot.timer);
    const alive = slots.map((s) => s.worker).filter((w): w is Worker => w !== undefined && !w.isDead());
    await Promise.all(
      alive.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
            worker.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            if (!send(worker, { aegis: 'shutdown' } satisfies PrimaryMessage)) worker.process.kill('SIGTERM');
          }),
      ),
    );
    cluster.off('exit', onExit);
    await metricsServer?.close();
    await rates?.close();
  };

  try {
    await new Promise<void>((resolve, reject) => {
      startup = { resolve, reject, waiting: new Set(slots.map((s) => s.slot)) };
      for (const slot of slots) fork(slot);
    });
    startup = undefined;
    if (serveMetrics) {
      // startMetricsServer serves whatever scrape() returns; the other members are the API's sinks,
      // which a cluster primary never feeds.
      const metrics: ServerMetrics = {
        registry: new Registry(),
        http: () => undefined,
        gateway: { decision: () => undefined, upstream: () => undefined, websockets: () => undefined, websocketUpgrade: () => undefined, tlsHandshake: () => undefined, certificateExpiry: () => undefined },
        jobs: () => () => undefined,
        scrape: async () => {
          const registry = await collect();
          return { contentType: registry.contentType, body: await registry.metrics() };
        },
      };
      metricsServer = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort!, token: config.metricsToken, metrics, onError: (err) => log.error({ err }, 'metrics: scrape failed') });
    }
  } catch (err) {
    startup = undefined;
    await stopAll();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    url: `http://localhost:${port}`,
    port,
    tlsPort,
    tlsUrl: tlsPort === undefined ? undefined : `https://localhost:${tlsPort}`,
    workers: () => slots.filter((s) => s.ready && s.worker).map((s) => ({ slot: s.slot, pid: s.worker!.process.pid ?? 0 })),
    restarts: () => restarts,
    metricsServer,
    close: () => (closing ??= stopAll()),
  };
}

/** Sends on a worker's IPC channel; false when the channel is already closed (the worker is dying). */
function send(worker: Worker, message: unknown): boolean {
  if (!worker.isConnected()) return false;
  try {
    worker.send(message as never);
    return true;
  } catch {
    return false;
  }
}

/**
 * Node's options for the workers: this process's, less a script given on the command line
 * (`node -e …`, `--input-type`), which would run in each worker instead of the worker entry.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (['-e', '--eval', '-p', '--print', '--input-type'].includes(arg)) i++;
    else if (!/^(--eval|--print|--input-type)=/.test(arg)) kept.push(arg);
  }
  return kept;
}
