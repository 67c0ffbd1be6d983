// The faults, in a fixed order: kill -9 of each process kind (then a restart on the same port), a
// PostgreSQL restart, a Redis restart, and a worker stopped (SIGSTOP) past its job lease. Each
// returns when the cluster has everything back; the report measures what the load saw meanwhile.
import type { Cluster, ClusterNode } from './cluster.ts';
import type { PrivatePostgres, PrivateRedis } from './databases.ts';
import type { Db } from './db.ts';
import { http, sleep } from './http.ts';
import type { Load } from './load.ts';
import { signalPid } from './procs.ts';

export const FAULTS = ['kill -9 api', 'kill -9 worker', 'kill -9 shield', 'kill -9 gateway worker', 'postgres restart', 'redis restart', 'worker paused past lease'] as const;
export type FaultName = (typeof FAULTS)[number];

export interface FaultRecord {
  fault: FaultName;
  round: number;
  /** Which process or server it hit. */
  victim: string;
  /** When it was injected, when the component was back (restart ready, server up, SIGCONT). */
  start: number;
  restored: number;
  note: string;
}

export interface FaultDeps {
  cluster: Cluster;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  db: Db;
  load: Load;
  leaseMs: number;
  /** How long a database stays down before it is started again. */
  outageMs: number;
}

/** Every API answers /readyz and the gateway serves the load site: the cluster is whole again. */
export async function untilHealthy(deps: FaultDeps, loadHost: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const targets = [
    ...deps.cluster.apis.map((a) => ({ name: `${a.name} /readyz`, probe: () => http(`${a.url}/readyz`, { timeoutMs: 2_000 }) })),
    { name: 'shield', probe: () => http(`${deps.cluster.shield.url}/health-probe`, { headers: { host: loadHost }, timeoutMs: 2_000 }) },
  ];
  for (;;) {
    const results = await Promise.all(targets.map((t) => t.probe()));
    if (results.every((r) => r.status === 200)) return;
    if (Date.now() > deadline) {
      const state = targets.map((t, i) => `${t.name}: ${results[i]!.status || results[i]!.error} ${results[i]!.body.slice(0, 200)}`).join('; ');
      const logs = deps.cluster.all().map((n) => `--- ${n.name}\n${n.proc().output().slice(-1500)}`).join('\n');
      throw new Error(`the cluster did not become healthy again within ${timeoutMs / 1000} s: ${state}\n${logs}`);
    }
    await sleep(200);
  }
}

async function restartNode(node: ClusterNode): Promise<void> {
  await node.kill9();
  await node.start();
}

/** The worker id a node printed in its banner (`Aegis worker <id> on …`). */
const workerId = (node: ClusterNode): string => /Aegis worker (\S+) on/.exec(node.proc().output())?.[1] ?? '';

async function pauseWorker(deps: FaultDeps, node: ClusterNode): Promise<{ note: string; start: number }> {
  // Give it something to hold: a few scans, then wait (bounded) until it holds one of their leases.
  const id = workerId(node);
  await Promise.all([1, 2, 3, 4].map((i) => deps.load.scanOnce(`pause-${node.name}-${Date.now()}-${i}`)));
  const deadline = Date.now() + 15_000;
  let held = 0;
  while (Date.now() < deadline) {
    const rows = await deps.db.rows<{ n: string }>(`SELECT count(*) AS n FROM jobs WHERE state = 'running' AND lease_owner = $1`, [id]).catch(() => [{ n: '0' }]);
    held = Number(rows[0]?.n ?? 0);
    if (held > 0) break;
    await sleep(20);
  }
  const start = Date.now();
  signalPid(node.proc().pid, 'SIGSTOP');
  // Stopped for two leases and a second: another worker must take its jobs over meanwhile.
  await sleep(deps.leaseMs * 2 + 1_000);
  signalPid(node.proc().pid, 'SIGCONT');
  return { start, note: held > 0 ? `held ${held} running job(s) when stopped for ${deps.leaseMs * 2 + 1_000} ms` : 'held no job when stopped (none was running)' };
}

export async function inject(fault: FaultName, round: number, deps: FaultDeps): Promise<FaultRecord> {
  const { cluster } = deps;
  const base = { fault, round };
  switch (fault) {
    case 'kill -9 api': {
      const node = cluster.apis[round % cluster.apis.length]!;
      const start = Date.now();
      await restartNode(node);
      return { ...base, victim: node.name, start, restored: Date.now(), note: 'restarted on the same port' };
    }
    case 'kill -9 worker': {
      const node = cluster.workers[round % cluster.workers.length]!;
      const start = Date.now();
      await restartNode(node);
      return { ...base, victim: node.name, start, restored: Date.now(), note: 'restarted; its jobs are taken over after the lease' };
    }
    case 'kill -9 shield': {
      const node = cluster.shield;
      const gateways = node.gatewayPids();
      const start = Date.now();
      await node.kill9();
      // Its gateway workers stop when the primary's IPC channel closes; none may linger on.
      for (const pid of gateways) signalPid(pid, 'SIGKILL');
      await node.start();
      return { ...base, victim: 'shield (primary)', start, restored: Date.now(), note: 'primary and its workers; restarted on the same port' };
    }
    case 'kill -9 gateway worker': {
      const node = cluster.shield;
      const before = node.gatewayPids();
      const victim = before[round % before.length]!;
      const start = Date.now();
      signalPid(victim, 'SIGKILL');
      // The primary replaces it and says so (`Shield worker N restarted (pid P)`).
      const deadline = Date.now() + 60_000;
      while (node.gatewayPids().includes(victim) || node.gatewayPids().length < before.length) {
        if (Date.now() > deadline) throw new Error(`gateway worker ${victim} was not replaced within 60 s`);
        await sleep(50);
      }
      return { ...base, victim: `shield worker pid ${victim}`, start, restored: Date.now(), note: 'replaced by the primary' };
    }
    case 'postgres restart': {
      const start = Date.now();
      await deps.postgres.stop();
      await sleep(deps.outageMs);
      await deps.postgres.start();
      return { ...base, victim: 'postgresql', start, restored: Date.now(), note: `fast shutdown, down ${deps.outageMs} ms` };
    }
    case 'redis restart': {
      const start = Date.now();
      await deps.redis.kill();
      await sleep(deps.outageMs);
      await deps.redis.start();
      return { ...base, victim: 'redis', start, restored: Date.now(), note: `kill -9 (counters lost), down ${deps.outageMs} ms` };
    }
    case 'worker paused past lease': {
      const node = cluster.workers[round % cluster.workers.length]!;
      const { start, note } = await pauseWorker(deps, node);
      return { ...base, victim: node.name, start, restored: Date.now(), note };
    }
  }
}
