// The printed result: one row per fault (rounds, recovery p50/max, requests failed in its windows),
// one row per check, and the gateway's throughput with two workers against one.
import { failed, type Check } from './checks.ts';
import type { FaultName, FaultRecord } from './faults.ts';
import type { Sample } from './load.ts';

export interface MeasuredFault extends FaultRecord {
  /** When the cluster answered as a whole again (every API ready, the gateway serving). */
  healthy: number;
}

export interface FaultRow {
  fault: FaultName;
  rounds: number;
  p50Ms: number;
  maxMs: number;
  failed: number;
  requests: number;
  notes: string;
}

export interface Throughput {
  workers: number;
  requests: number;
  seconds: number;
  perSecond: number;
  errors: number;
  /** What sent the load (wrk or node) and how many alternating rounds the median is of. */
  client: string;
  rounds: number;
}

const quantile = (values: number[], q: number): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: of two rounds the p50 is the faster one, the max the slower.
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
};

/** Recovery of one fault: from injection until the component is back and the last failed request of its window has ended. */
export function recoveryMs(f: MeasuredFault, samples: Sample[]): { ms: number; failed: number; requests: number } {
  const inWindow = samples.filter((s) => s.start >= f.start && s.start <= f.healthy);
  const failures = inWindow.filter(failed);
  const lastFailure = Math.max(f.restored, ...failures.map((s) => s.end));
  return { ms: lastFailure - f.start, failed: failures.length, requests: inWindow.length };
}

export function faultRows(faults: MeasuredFault[], samples: Sample[], order: readonly FaultName[]): FaultRow[] {
  return order.map((fault) => {
    const rounds = faults.filter((f) => f.fault === fault);
    const measured = rounds.map((f) => recoveryMs(f, samples));
    const times = measured.map((m) => m.ms);
    return {
      fault,
      rounds: rounds.length,
      p50Ms: quantile(times, 0.5),
      maxMs: Math.max(0, ...times),
      failed: measured.reduce((n, m) => n + m.failed, 0),
      requests: measured.reduce((n, m) => n + m.requests, 0),
      notes: [...new Set(rounds.map((f) => f.note))].join('; '),
    };
  });
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function render(rows: FaultRow[], checks: Check[], throughput: Throughput[], summary: string): string {
  const faults = table(
    ['fault', 'rounds', 'recovery p50', 'recovery max', 'requests failed / in window', 'notes'],
    rows.map((r) => [r.fault, String(r.rounds), seconds(r.p50Ms), seconds(r.maxMs), `${r.failed} / ${r.requests}`, r.notes]),
  );
  const checksTable = table(
    ['check', 'result', 'detail'],
    checks.map((c) => [c.name, c.pass ? 'PASS' : 'FAIL', c.detail]),
  );
  const one = throughput.find((t) => t.workers === 1);
  const two = throughput.find((t) => t.workers === 2);
  const speedTable = table(
    ['gateway', 'client', 'requests (median round)', 'seconds', 'req/s', 'errors (all rounds)'],
    throughput.map((t) => [`--workers ${t.workers}`, `${t.client}, ${t.rounds} round(s)`, String(t.requests), t.seconds.toFixed(1), t.perSecond.toFixed(0), String(t.errors)]),
  );
  const ratio = one && two && one.perSecond > 0 ? `two workers / one: ${(two.perSecond / one.perSecond).toFixed(2)}×` : '';
  return [summary, '', 'Faults', faults, '', 'Checks', checksTable, '', 'Gateway throughput (same run, same machine, no faults)', speedTable, ratio, ''].join('\n');
}
