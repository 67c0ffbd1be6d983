// Prometheus metrics of one server (issue 19). Each running server owns a Registry (never prom-client's
// global one): tests start many servers in one process, and one process's series must not leak into
// another's. The parts of the system report through small sinks (GatewayMetrics, JobObserver,
// observeHttp) so that nothing here reaches into their internals; queue depth, scheduler lag and the
// database pool are read when Prometheus scrapes (collect callbacks), not kept up to date.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** What the gateway reports: one call per decision, one per proxied request. */
export interface GatewayMetrics {
  decision(site: string, action: string, ruleKind: string | null): void;
  /** Time from the start of forwarding to the origin's response headers (or the failure), seconds. */
  upstream(site: string, outcome: string, seconds: number): void;
  /** A site's open WebSocket connections changed by `delta` (+1 on the origin's 101, -1 when both sides closed). */
  websockets(site: string, delta: number): void;
  /** One WebSocket upgrade request's result (gateway/request-handler.ts). */
  websocketUpgrade(site: string, result: string): void;
  /** One TLS connection's handshake: its result (ok, failed, unknown_name, old_version, malformed, timeout, closed) and protocol (h2, http/1.1, acme-tls/1, none). */
  tlsHandshake(result: string, protocol: string): void;
  /** When the certificate a site is served with expires; null when it serves none any more. */
  certificateExpiry(site: string, notAfter: Date | null): void;
  /**
   * The recorder that writes this gateway's decisions, read on every scrape (queue length, drops,
   * failed writes). Registering the same recorder twice (the live and the sandbox gateway share
   * one) counts it once. Optional: the cluster primary's stand-in sinks have no recorder.
   */
  decisionRecorder?(recorder: DecisionQueue): void;
  /** The traffic record's writer (gateway/traffic/traffic-writer.ts), read on every scrape: queue, written, shed. */
  trafficRecord?(writer: TrafficQueue): void;
}

/** What the metrics read of the traffic record's writer. */
export interface TrafficQueue {
  stats(): { queued: number; written: number; shed: number; failedWrites: number };
}

/** What the metrics read of the gateway's decision recorder (gateway/events/recorder.ts satisfies it). */
export interface DecisionQueue {
  stats(): { queued: number; dropped: number; failedWrites: number };
}

/** What ACME certificate orders report: one call per order that ended (`issued` or `failed`). */
export interface CertificateMetrics {
  order(result: 'issued' | 'failed'): void;
}

/** What the job worker reports: called when a job run starts; the returned function when it ends. */
export type JobObserver = (job: { id: string; kind: string; attempts: number }) => (result: string) => void;

/** pg's Pool counters (PostgreSQL only). */
export interface PoolStats {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

export interface MetricsOptions {
  db: Db;
  /** The PostgreSQL connection pool; absent on PGlite (one embedded connection, nothing to pool). */
  pool?: PoolStats | undefined;
}

export interface ServerMetrics {
  registry: Registry;
  http(route: string, method: string, status: number, seconds: number): void;
  gateway: GatewayMetrics;
  /** Absent where no ACME order runs (a gateway cluster's primary). */
  certificates?: CertificateMetrics;
  jobs: JobObserver;
  /** Text for GET /metrics. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800];

/**
 * prom-client's default collectors also export `nodejs_active_{handles,requests,resources}_total`:
 * gauges named like counters, which `promtool check metrics` rejects. Each is the sum over its
 * unsuffixed gauge's `type` label (`sum(aegis_nodejs_active_handles)`), so nothing is lost.
 */
const LINT_REJECTED_DEFAULTS = ['aegis_nodejs_active_handles_total', 'aegis_nodejs_active_requests_total', 'aegis_nodejs_active_resources_total'];

export function createMetrics(options: MetricsOptions): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'aegis_' });
  for (const name of LINT_REJECTED_DEFAULTS) registry.removeSingleMetric(name);
  const { db } = options;

  const httpRequests = new Counter({ name: 'aegis_http_requests_total', help: 'API requests by route pattern, method and status.', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const httpDuration = new Histogram({ name: 'aegis_http_request_duration_seconds', help: 'API request latency by route pattern, method and status.', labelNames: ['route', 'method', 'status'], buckets: LATENCY_BUCKETS, registers: [registry] });

  const decisions = new Counter({ name: 'aegis_shield_decisions_total', help: 'Shield gateway decisions by site id, action and deciding rule kind ("none" for a plain allow).', labelNames: ['site', 'action', 'rule_kind'], registers: [registry] });
  const websockets = new Gauge({ name: 'aegis_shield_websockets_open', help: 'Open WebSocket connections through the Shield gateway by site id.', labelNames: ['site'], registers: [registry] });
  const upgrades = new Counter({ name: 'aegis_shield_websocket_upgrades_total', help: 'WebSocket upgrade requests by site id and result: upgraded, refused (the origin answered without switching), blocked, challenged, over_capacity, unreachable, timeout, client_gone.', labelNames: ['site', 'result'], registers: [registry] });
  const handshakes = new Counter({ name: 'aegis_shield_tls_handshakes_total', help: 'TLS connections to the Shield gateway by handshake result (ok, failed, unknown_name, old_version, malformed, timeout, closed) and negotiated protocol (h2, http/1.1, acme-tls/1, none).', labelNames: ['result', 'protocol'], registers: [registry] });
  const expiries = new Map<string, number>();
  new Gauge({
    name: 'aegis_shield_certificate_expiry_seconds',
    help: 'Seconds until the certificate each site is served with expires (negative once expired), by site id.',
    labelNames: ['site'],
    registers: [registry],
    // Every gateway process serves the same certificates: a cluster shows one value, not their sum.
    aggregator: 'min',
    collect() {
      this.reset();
      const now = Date.now();
      for (const [site, notAfter] of expiries) this.set({ site }, Math.round((notAfter - now) / 1000));
    },
  });
  const upstream = new Histogram({ name: 'aegis_shield_upstream_duration_seconds', help: 'Time from forwarding to the origin response headers (or the failure), by site id and outcome (ok, unreachable, timeout).', labelNames: ['site', 'outcome'], buckets: LATENCY_BUCKETS, registers: [registry] });

  const certificateOrders = new Counter({ name: 'aegis_shield_certificate_orders_total', help: 'ACME certificate orders (issuance and renewal) this process ran, by result (issued, failed).', labelNames: ['result'], registers: [registry] });
  // Read on scrape, so every process shows the whole cluster's state, whichever node ran the orders.
  new Gauge({
    name: 'aegis_shield_certificate_orders',
    help: 'Sites in tls.mode acme by the state of their certificate order (pending, valid, failed).',
    labelNames: ['status'],
    registers: [registry],
    // Each cluster worker reads the same rows: the aggregate is one copy, not their sum.
    aggregator: 'max',
    async collect() {
      const rows = await db.selectFrom('shield_certificate_orders').select(['status', sql<number>`count(*)::int`.as('count')]).groupBy('status').execute();
      this.reset();
      for (const r of rows) this.set({ status: r.status }, Number(r.count));
    },
  });

  const jobRuns = new Counter({ name: 'aegis_jobs_finished_total', help: 'Job runs by kind and result (completed, failed, canceled, released, lease_lost). Config-repo syncs are the config-repo-sync kind.', labelNames: ['kind', 'result'], registers: [registry] });
  const jobDuration = new Histogram({ name: 'aegis_job_duration_seconds', help: 'Job run time by kind and result.', labelNames: ['kind', 'result'], buckets: JOB_BUCKETS, registers: [registry] });

  // Read on scrape: one grouped query over the queued jobs (the queue's own index serves it).
  const depth = new Gauge({ name: 'aegis_jobs_queued', help: 'Jobs waiting (queued, due or not) by kind.', labelNames: ['kind'], registers: [registry], collect: () => readQueue() });
  const oldest = new Gauge({ name: 'aegis_jobs_oldest_queued_age_seconds', help: 'Age of the oldest due queued job by kind (since it became runnable).', labelNames: ['kind'], registers: [registry], collect: () => readQueue() });
  const running = new Gauge({ name: 'aegis_jobs_running', help: 'Jobs running (leased) by kind.', labelNames: ['kind'], registers: [registry], collect: () => readQueue() });
  let queueRead: Promise<void> | undefined;
  function readQueue(): Promise<void> {
    // The three gauges share one query per scrape.
    queueRead ??= (async () => {
      try {
        const rows = await db
          .selectFrom('jobs')
          .select([
            'kind',
            sql<number>`count(*) filter (where state = 'queued')::int`.as('queued'),
            sql<number>`count(*) filter (where state = 'running')::int`.as('running'),
            sql<number | null>`extract(epoch from (now() - min(run_at) filter (where state = 'queued' and run_at <= now())))::float8`.as('oldest'),
          ])
          .where('state', 'in', ['queued', 'running'])
          .groupBy('kind')
          .execute();
        depth.reset();
        oldest.reset();
        running.reset();
        for (const r of rows) {
          depth.set({ kind: r.kind }, Number(r.queued));
          running.set({ kind: r.kind }, Number(r.running));
          oldest.set({ kind: r.kind }, r.oldest === null ? 0 : Math.max(0, Number(r.oldest)));
        }
      } finally {
        queueRead = undefined;
      }
    })();
    return queueRead;
  }

  new Gauge({
    name: 'aegis_scheduler_lag_seconds',
    help: 'How overdue the most overdue enabled scan schedule is (0 when none is due): a scheduler that is not keeping up, or not running.',
    registers: [registry],
    async collect() {
      const row = await db
        .selectFrom('scan_schedules')
        .select(sql<number | null>`extract(epoch from (now() - min(next_run_at)))::float8`.as('lag'))
        .where('enabled', '=', true)
        .where('next_run_at', '<=', sql<Date>`now()`)
        .executeTakeFirst();
      this.set(row?.lag ? Math.max(0, Number(row.lag)) : 0);
    },
  });

  // Sync outcomes: a sync job completes whether the repository ended synced, refused (out_of_sync)
  // or in error, so its job result does not say; the repositories' recorded status does.
  new Gauge({
    name: 'aegis_config_repos',
    help: 'Config repositories by the status of their last sync (synced, out_of_sync, error, pending, ...).',
    labelNames: ['status'],
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const rows = await db.selectFrom('config_repos').select(['status', sql<number>`count(*)::int`.as('count')]).groupBy('status').execute();
      this.reset();
      for (const r of rows) this.set({ status: r.status }, Number(r.count));
    },
  });

  // Webhook endpoints by delivery health, read on scrape. The delivery worker disables an endpoint
  // whose every delivery has failed for a while (api/webhooks/delivery-store.ts): `failing` is the
  // warning before that, `auto_disabled` the result (disabled_reason is set only then, and cleared
  // when its owner enables it again); `disabled` is turned off by its owner.
  new Gauge({
    name: 'aegis_webhooks',
    help: 'Webhook endpoints by state: enabled (delivering), failing (enabled, every delivery failing), auto_disabled (disabled after failing), disabled (by its owner).',
    labelNames: ['state'],
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const row = await db
        .selectFrom('webhooks')
        .select([
          sql<number>`count(*) filter (where enabled and failing_since is null)::int`.as('enabled'),
          sql<number>`count(*) filter (where enabled and failing_since is not null)::int`.as('failing'),
          sql<number>`count(*) filter (where not enabled and disabled_reason is not null)::int`.as('auto_disabled'),
          sql<number>`count(*) filter (where not enabled and disabled_reason is null)::int`.as('disabled'),
        ])
        .executeTakeFirst();
      // Every state is always present (0 when none), so an alert on one has a series to compare.
      for (const state of ['enabled', 'failing', 'auto_disabled', 'disabled'] as const) this.set({ state }, Number(row?.[state] ?? 0));
    },
  });

  const decisionRecorders = decisionRecorderMetrics(registry);
  const trafficRecords = trafficRecordMetrics(registry);

  if (options.pool) {
    const pool = options.pool;
    new Gauge({ name: 'aegis_db_pool_connections', help: 'PostgreSQL pool connections by state (idle, busy, total).', labelNames: ['state'], registers: [registry], collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'busy' }, pool.totalCount - pool.idleCount);
    } });
    new Gauge({ name: 'aegis_db_pool_waiting', help: 'Queries waiting for a PostgreSQL pool connection.', registers: [registry], collect() {
      this.set(pool.waitingCount);
    } });
  }
  // PGlite (no DATABASE_URL): a single in-process connection; there is no pool to report.

  return {
    registry,
    http(route, method, status, seconds) {
      const labels = { route, method, status: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    gateway: {
      decision(site, action, ruleKind) {
        decisions.inc({ site, action, rule_kind: ruleKind ?? 'none' });
      },
      upstream(site, outcome, seconds) {
        upstream.observe({ site, outcome }, seconds);
      },
      websockets(site, delta) {
        if (delta >= 0) websockets.inc({ site }, delta);
        else websockets.dec({ site }, -delta);
      },
      websocketUpgrade(site, result) {
        upgrades.inc({ site, result });
      },
      tlsHandshake(result, protocol) {
        handshakes.inc({ result, protocol });
      },
      certificateExpiry(site, notAfter) {
        if (notAfter) expiries.set(site, notAfter.getTime());
        else expiries.delete(site);
      },
      trafficRecord(writer) {
        trafficRecords.add(writer);
      },
      decisionRecorder(recorder) {
        decisionRecorders.add(recorder);
      },
    },
    certificates: {
      order(result) {
        certificateOrders.inc({ result });
      },
    },
    jobs(job) {
      const started = performance.now();
      return (result) => {
        const labels = { kind: job.kind, result };
        jobRuns.inc(labels);
        jobDuration.observe(labels, (performance.now() - started) / 1000);
      };
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/**
 * The decision recorders' backlog, drops and failed writes. The series are registered with the
 * first recorder, so a process that records no decisions (a job worker) does not export zeros that
 * would look like a healthy recorder.
 */
function decisionRecorderMetrics(registry: Registry): { add(recorder: DecisionQueue): void } {
  const recorders = new Set<DecisionQueue>();
  const total = (key: 'queued' | 'dropped' | 'failedWrites') => [...recorders].reduce((sum, r) => sum + r.stats()[key], 0);
  function register(): void {
    new Gauge({ name: 'aegis_shield_decisions_queued', help: 'Gateway decisions waiting to be written to the database (a batch being retried included).', registers: [registry], collect() {
      this.set(total('queued'));
    } });
    // The recorder keeps the running totals; the counters mirror them on each scrape.
    new Counter({ name: 'aegis_shield_decisions_dropped_total', help: 'Gateway decisions that were to be stored but were not (queue full, batch given up after its retries, recorder closed); still counted in the rollups.', registers: [registry], collect() {
      this.reset();
      this.inc(total('dropped'));
    } });
    new Counter({ name: 'aegis_shield_decision_write_failures_total', help: 'Failed attempts at writing a batch of gateway decisions (each retry counts).', registers: [registry], collect() {
      this.reset();
      this.inc(total('failedWrites'));
    } });
  }
  return {
    add(recorder) {
      if (recorders.size === 0) register();
      recorders.add(recorder);
    },
  };
}

/**
 * The traffic record impact previews replay: requests written, and requests shed because the
 * database fell behind (the gateway never waits for the record; a preview's window then misses them).
 */
function trafficRecordMetrics(registry: Registry): { add(writer: TrafficQueue): void } {
  const writers = new Set<TrafficQueue>();
  const total = (key: 'queued' | 'written' | 'shed' | 'failedWrites') => [...writers].reduce((sum, w) => sum + w.stats()[key], 0);
  const counter = (name: string, help: string, key: 'written' | 'shed' | 'failedWrites') =>
    new Counter({ name, help, registers: [registry], collect() {
      this.reset();
      this.inc(total(key));
    } });
  function register(): void {
    new Gauge({ name: 'aegis_shield_traffic_queued', help: 'Requests waiting to be written to the traffic record.', registers: [registry], collect() {
      this.set(total('queued'));
    } });
    counter('aegis_shield_traffic_written_total', 'Requests written to the traffic record (impact previews replay it).', 'written');
    counter('aegis_shield_traffic_shed_total', 'Requests not written to the traffic record because it could not keep up (queue full, batch given up, writer closed); proxying never waits for it.', 'shed');
    counter('aegis_shield_traffic_write_failures_total', 'Failed attempts at writing a batch of the traffic record (each retry counts).', 'failedWrites');
  }
  return {
    add(writer) {
      if (writers.size === 0) register();
      writers.add(writer);
    },
  };
}
