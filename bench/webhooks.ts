// Webhook deliveries: events/s delivered to a local receiver by 4 workers (each its own pool, as
// `aegis worker` processes would have), against the same signed POSTs sent straight to the receiver
// with as many in flight, in the same run; and event raised (its transaction committed) → delivered
// latency p50/p99 on an idle queue (target p50 ≤ 500 ms). PostgreSQL (a scratch database on
// BENCH_DATABASE_URL, DATABASE_URL or the local server), then the embedded database.
//   node bin/run-ts.mjs bench/webhooks.ts     BENCH_EVENTS=2000 BENCH_WORKERS=4 BENCH_LATENCY_SAMPLES=50
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Pool } from 'undici';
import { loadConfig } from '../api/config.ts';
import { createSecretBox } from '../platform/crypto/secret-box.ts';
import { openDatabase, type DatabaseHandle } from '../platform/db/database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { installEventSubscribers } from '../api/event-subscribers.ts';
import { publishEvents, toEvent, type NewEvent } from '../platform/events/event-store.ts';
import { Worker } from '../platform/jobs/worker.ts';
import { ensureOrganization } from '../api/accounts/keys/bootstrap.ts';
import { webhookJobHandlers } from '../api/webhooks/delivery-job.ts';
import { signatureHeader } from '../api/webhooks/signature.ts';
import { insertWebhook } from '../api/webhooks/store.ts';
import { onEachDatabase } from './support/scratch-database.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 50);
/** The delivery kind's concurrency per worker (api/webhooks/delivery-job.ts). */
const PER_WORKER = 16;

const log = pino({ level: 'warn' });

/** Records when each event id first arrives. */
class Receiver {
  readonly arrived = new Map<string, number>();
  private waiters: Array<() => void> = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const id = String(req.headers['x-service-event-id'] ?? '');
      req.resume();
      req.on('end', () => {
        if (id && !this.arrived.has(id)) this.arrived.set(id, performance.now());
        res.writeHead(204).end();
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async until(check: () => boolean, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('deliveries did not arrive in time');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100).unref();
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const perSecond = (count: number, ms: number) => Math.round((count / ms) * 1000);

async function run(label: string, databaseUrl: string | undefined): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-webhooks-'));
  const main = await openDatabase({ databaseUrl, dataDir });
  const pools: DatabaseHandle[] = [];
  const receiver = new Receiver();
  const workers: Worker[] = [];
  try {
    await migrateToLatest(main.db);
    installEventSubscribers();
    await receiver.start();
    const box = createSecretBox(Buffer.alloc(32, 7));
    const orgId = await ensureOrganization(main.db, 'default');
    const { secret } = await insertWebhook(main.db, box, orgId, { url: receiver.url, events: ['*'], description: 'bench', enabled: true, labels: {} });
    const config = { ...loadConfig({ dataDir }, {}), allowPrivateTargets: true };
    for (let i = 0; i < WORKERS; i++) pools.push(databaseUrl ? await openDatabase({ databaseUrl, dataDir }) : main);
    for (const pool of pools) {
      workers.push(new Worker({ db: pool.db, log, handlers: webhookJobHandlers({ db: pool.db, secretBox: box, config }), concurrency: PER_WORKER, pollMaxMs: 1_000 }).start());
    }
    const event = (i: number): NewEvent => ({ orgId, type: 'api_key.created', object: { id: `key_bench_${i}`, name: `bench ${i}`, scopes: ['scans:read'] } });
    console.log(`${label}: ${WORKERS} workers × ${PER_WORKER} deliveries at once, ${EVENTS} events`);

    // Latency first, on an idle queue: one event at a time, the next after the last arrived.
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const raised = performance.now();
      const [row] = await publishEvents(main.db, [event(i)]);
      await receiver.until(() => receiver.arrived.has(row!.id), 30_000);
      latencies.push(receiver.arrived.get(row!.id)! - raised);
    }
    latencies.sort((a, b) => a - b);
    console.log(`  raised → delivered, idle queue        p50 ${percentile(latencies, 50).toFixed(1)} ms   p99 ${percentile(latencies, 99).toFixed(1)} ms   (${LATENCY_SAMPLES} events; target p50 ≤ 500 ms)`);

    // Throughput: a burst of events in one transaction, delivered by every worker.
    const before = receiver.arrived.size;
    const burstStart = performance.now();
    const rows = await publishEvents(main.db, Array.from({ length: EVENTS }, (_, i) => event(LATENCY_SAMPLES + i)));
    await receiver.until(() => receiver.arrived.size >= before + rows.length);
    const deliveredMs = performance.now() - burstStart;
    const delivered = perSecond(rows.length, deliveredMs);

    // Baseline: the same bodies, signed the same way, POSTed straight to the receiver.
    const bodies = rows.map((row) => JSON.stringify(toEvent(row)));
    const client = new Pool(new URL(receiver.url).origin, { connections: WORKERS * PER_WORKER });
    let next = 0;
    const directStart = performance.now();
    await Promise.all(
      Array.from({ length: WORKERS * PER_WORKER }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++]!;
          const res = await client.request({ method: 'POST', path: '/hook', body, headers: { 'content-type': 'application/json', 'x-service-signature': signatureHeader(body, [secret]) } });
          await res.body.dump();
        }
      }),
    );
    const directMs = performance.now() - directStart;
    await client.close();
    const direct = perSecond(bodies.length, directMs);
    console.log(`  delivered through the queue           ${delivered.toLocaleString('en-US').padStart(7)} events/s  (${rows.length} in ${(deliveredMs / 1000).toFixed(2)} s, from the commit of the burst)`);
    console.log(`  the same POSTs sent directly           ${direct.toLocaleString('en-US').padStart(7)} req/s`);
    console.log(`  ratio                                   ${(delivered / direct).toFixed(2)}`);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await receiver.close();
    for (const pool of pools) if (pool !== main) await pool.close();
    await main.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await onEachDatabase(run);
