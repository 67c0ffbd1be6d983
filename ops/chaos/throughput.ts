// Gateway throughput with two workers against one, in the same run on the same machine, no faults:
// wrk (when installed; a C client that leaves the cores to the gateway) or closed-loop Node clients
// on kept-alive connections. Rounds alternate between the two gateways and the median is kept, so
// that load from elsewhere on the machine falls on both.
import { existsSync } from 'node:fs';
import { Agent } from 'node:http';
import { http } from './http.ts';
import { runCommand } from './procs.ts';
import type { Throughput } from './report.ts';

const CLIENTS = 16;
const WRK = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((p) => existsSync(p));

async function withWrk(wrk: string, url: string, host: string, durationMs: number): Promise<{ requests: number; seconds: number; errors: number }> {
  const seconds = Math.max(1, Math.round(durationMs / 1000));
  const out = await runCommand('wrk', wrk, ['-t1', `-c${CLIENTS}`, `-d${seconds}s`, '-H', `Host: ${host}`, `${url}/bench`], {}, durationMs + 30_000);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors: connect (\d+)/.exec(out)?.[1] ?? 0);
  return { requests: requests - errors, seconds, errors };
}

async function withNode(url: string, host: string, durationMs: number): Promise<{ requests: number; seconds: number; errors: number }> {
  // Several connections, so that node:cluster spreads them over the workers.
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  let requests = 0;
  let errors = 0;
  const started = Date.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      let n = 0;
      while (Date.now() < until) {
        const res = await http(`${url}/bench/${i}/${++n}`, { headers: { host }, agent, timeoutMs: 10_000 });
        if (res.status === 200) requests++;
        else errors++;
      }
    }),
  );
  agent.destroy();
  return { requests, seconds: (Date.now() - started) / 1000, errors };
}

/** `gateways`: url and worker count of each; `rounds` alternating passes of `durationMs` each. */
export async function compareThroughput(gateways: { url: string; workers: number }[], host: string, durationMs: number, rounds: number): Promise<Throughput[]> {
  const runs = new Map<number, { requests: number; seconds: number; errors: number }[]>();
  for (let round = 0; round < rounds; round++) {
    for (const g of gateways) {
      const result = WRK ? await withWrk(WRK, g.url, host, durationMs) : await withNode(g.url, host, durationMs);
      runs.set(g.workers, [...(runs.get(g.workers) ?? []), result]);
    }
  }
  return gateways.map((g) => {
    const list = [...runs.get(g.workers)!].sort((a, b) => a.requests / a.seconds - b.requests / b.seconds);
    const median = list[Math.floor(list.length / 2)]!;
    return { workers: g.workers, requests: median.requests, seconds: median.seconds, perSecond: median.requests / median.seconds, errors: list.reduce((n, r) => n + r.errors, 0), client: WRK ? 'wrk' : 'node', rounds };
  });
}
