// `npm run chaos [-- --short] [--seed N] [--faults a,b] [--keep]`: a small Aegis cluster on this machine
// (loopback only, its own PostgreSQL and Redis), mixed load, a fixed schedule of faults, then the
// checks and the table. Exit status 0 when every check passes, 1 when one fails, 2 when it cannot run.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../api/accounts/keys/key-material.ts';
import { runChecks, type Limits } from './checks.ts';
import { startCluster, type Cluster } from './cluster.ts';
import { missingPrerequisite, startPostgres, startRedis, type PrivatePostgres, type PrivateRedis } from './databases.ts';
import { openDb, type Db } from './db.ts';
import { FAULTS, inject, untilHealthy, type FaultDeps } from './faults.ts';
import { makeRepo, startOrigin, startReceiver, type Listening, type Receiver } from './fixtures.ts';
import { sleep } from './http.ts';
import { Load } from './load.ts';
import { faultRows, render, type MeasuredFault } from './report.ts';
import { configPropagationMs, setUp, type SetupInput } from './setup.ts';
import { compareThroughput } from './throughput.ts';

const args = process.argv.slice(2);
const short = args.includes('--short');
const keep = args.includes('--keep');
const seedAt = args.indexOf('--seed');
const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : 44;
const faultsAt = args.indexOf('--faults');
/** `--faults "postgres restart,redis restart"`: only these, in the schedule's order (to look at one closely). */
const SCHEDULE = faultsAt >= 0 ? FAULTS.filter((f) => args[faultsAt + 1]!.split(',').map((x) => x.trim()).includes(f)) : [...FAULTS];

/** The run's shape: the short form is one round with little load, for CI. */
const PLAN = short
  ? { rounds: 1, warmupMs: 3_000, gapMs: 3_000, writers: 2, writePauseMs: 200, scanPauseMs: 2_500, gatewayClients: 2, limitedRate: 10, throughputMs: 2_000, throughputRounds: 1 }
  : { rounds: 3, warmupMs: 5_000, gapMs: 5_000, writers: 3, writePauseMs: 80, scanPauseMs: 1_200, gatewayClients: 3, limitedRate: 20, throughputMs: 5_000, throughputRounds: 3 };
const LEASE_MS = 3_000;
const OUTAGE_MS = 3_000;
const LIMITS: Limits = {
  recoveryBoundMs: 30_000,
  budget: 10,
  windowMs: 2_000,
  edgeSlack: 2,
  reconnectMs: 3_000,
  maxDeliveryAttempts: 7,
};
const LOAD_HOST = 'load.chaos.test';

const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);

async function main(): Promise<number> {
  const missing = missingPrerequisite();
  if (missing) {
    process.stdout.write(`chaos: cannot run: ${missing}\n`);
    return 2;
  }
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'aegis-chaos-'));
  chmodSync(dir, 0o755);
  let postgres: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;
  let cluster: Cluster | undefined;
  let db: Db | undefined;
  let load: Load | undefined;
  const servers: Listening[] = [];
  try {
    [postgres, redis] = await Promise.all([startPostgres(dir), startRedis()]);
    log(`postgres on ${postgres.port}, redis on ${redis.port}, data in ${dir}`);
    const origin = await startOrigin();
    const receiver: Receiver = await startReceiver();
    servers.push(origin, receiver);
    const repo = makeRepo(dir);
    const apiKey = generateKey();
    cluster = await startCluster({ dir, databaseUrl: postgres.url, redisUrl: redis.url, secretKey: randomBytes(32).toString('base64'), apiKey, leaseMs: LEASE_MS });
    log(`cluster up: ${cluster.all().map((n) => `${n.name}${n.url ? ` ${n.url}` : ''}`).join(', ')}`);
    db = openDb(postgres.url);
    const setupInput: SetupInput = { apiUrl: cluster.apis[0]!.url, gatewayUrl: cluster.shield.url, apiKey, originUrl: origin.url, receiverUrl: receiver.url, loadHost: LOAD_HOST, limits: LIMITS };
    const setup = await setUp(setupInput);
    load = new Load({
      apis: cluster.apis.map((a) => ({ name: a.name, url: a.url })),
      gatewayUrl: cluster.shield.url,
      apiKey,
      writeSiteId: setup.writeSiteId,
      loadHost: LOAD_HOST,
      repo,
      seed,
      writers: PLAN.writers,
      writePauseMs: PLAN.writePauseMs,
      scanPauseMs: PLAN.scanPauseMs,
      gatewayClients: PLAN.gatewayClients,
      limitedRate: PLAN.limitedRate,
    });
    load.start();
    await sleep(PLAN.warmupMs);

    const deps: FaultDeps = { cluster, postgres, redis, db, load, leaseMs: LEASE_MS, outageMs: OUTAGE_MS };
    const faults: MeasuredFault[] = [];
    const crashes: string[] = [];
    const propagation: (number | null)[] = [];
    let gatewayRestartsExpected = 0;
    for (let round = 0; round < PLAN.rounds; round++) {
      for (const fault of SCHEDULE) {
        log(`round ${round + 1}: ${fault}`);
        const record = await inject(fault, round, deps);
        if (fault === 'kill -9 shield') gatewayRestartsExpected = 0;
        if (fault === 'kill -9 gateway worker') gatewayRestartsExpected++;
        await untilHealthy(deps, LOAD_HOST);
        faults.push({ ...record, healthy: Date.now() });
        if (fault === 'postgres restart') propagation.push(await configPropagationMs(setupInput, setup.loadSiteId, `after-pg-restart-${round + 1}`));
        // Anything dead that the schedule did not kill is a finding; it is started again so the run goes on.
        for (const node of cluster.all()) {
          if (node.proc().alive()) continue;
          crashes.push(`${node.name} exited after "${fault}": ${node.proc().output().slice(-600).replace(/\s+/g, ' ')}`);
          await node.start();
        }
        const restarts = [...cluster.shield.proc().output().matchAll(/Shield worker \d+ restarted/g)].length;
        if (restarts > gatewayRestartsExpected) {
          crashes.push(`${restarts - gatewayRestartsExpected} gateway worker(s) died unscheduled by "${fault}"`);
          gatewayRestartsExpected = restarts;
        }
        await sleep(PLAN.gapMs);
      }
    }
    log('stopping the load; waiting for the queue to drain');
    await load.stop();
    await drain(db);

    log('measuring gateway throughput (two workers, then one)');
    const single = await cluster.singleShield();
    const throughput = await compareThroughput([{ url: cluster.shield.url, workers: 2 }, { url: single.url, workers: 1 }], LOAD_HOST, PLAN.throughputMs, PLAN.throughputRounds);

    const checks = await runChecks({ db, load, receiver, faults, writeSiteId: setup.writeSiteId, webhookId: setup.webhookId, limits: LIMITS, crashes, propagation, scheduled: SCHEDULE });
    const rows = faultRows(faults, load.samples, SCHEDULE);
    const summary =
      `Aegis chaos run (${short ? 'short' : 'full'}, seed ${seed}): 2 API, 2 workers, shield --workers 2 on private PostgreSQL and Redis; ` +
      `${faults.length} faults in ${PLAN.rounds} round(s); ${load.samples.length} requests; ${((Date.now() - started) / 1000).toFixed(0)} s. ` +
      `Recovery bound ${LIMITS.recoveryBoundMs / 1000} s, job lease ${LEASE_MS / 1000} s, database outages ${OUTAGE_MS / 1000} s.`;
    process.stdout.write(render(rows, checks, throughput, summary));
    // With --keep, everything behind the table stays for a closer look.
    if (keep) writeFileSync(join(dir, 'run.json'), JSON.stringify({ faults, samples: load.samples, writes: load.writes, deliveries: receiver.deliveries }));
    return checks.every((c) => c.pass) ? 0 : 1;
  } finally {
    await load?.stop().catch(() => undefined);
    await cluster?.close();
    await db?.close().catch(() => undefined);
    await Promise.all(servers.map((s) => s.close()));
    await redis?.close();
    await postgres?.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }
}

/** Waits (bounded) until no job is queued or running and no delivery is pending: the checks then read final states. */
async function drain(db: Db): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const [row] = await db.rows<{ jobs: string; deliveries: string }>(
      `SELECT (SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')) AS jobs, (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS deliveries`,
    );
    if (row && Number(row.jobs) === 0 && Number(row.deliveries) === 0) return;
    await sleep(500);
  }
  log('the queue did not drain within 180 s; the checks report what is left');
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
