// What must hold after the run, each as a row of the table: nothing acknowledged lost or doubled,
// every job done once (or dead with a reason), every event delivered, the gateway serving through
// the database outage, rate limits within budget and slack, and no outage longer than the bound.
import type { Db } from './db.ts';
import type { FaultName, FaultRecord } from './faults.ts';
import type { Receiver } from './fixtures.ts';
import type { Load, Sample } from './load.ts';

export interface Check {
  name: string;
  pass: boolean;
  detail: string;
}

export interface Limits {
  /** Longest a stream may fail in a row (requests answered 5xx or not at all). */
  recoveryBoundMs: number;
  /** The rate-limit rule: budget per window. */
  budget: number;
  windowMs: number;
  /** Extra requests a window may admit outside an outage (gateway and client clocks differ at the edges). */
  edgeSlack: number;
  /** How long after Redis is back the gateway may still fail open (its client's reconnect backoff). */
  reconnectMs: number;
  /** Attempts a delivery may take at most (AEGIS_WEBHOOK_RETRY_DELAYS_MS entries + 1). */
  maxDeliveryAttempts: number;
}

export const failed = (s: Sample): boolean => s.status === 0 || s.status >= 500;

async function writesCheck(db: Db, load: Load, writeSiteId: string): Promise<Check> {
  const rules = await db.rows<{ value: string; n: string }>(`SELECT value, count(*) AS n FROM ip_access_rules WHERE site_id = $1 GROUP BY value`, [writeSiteId]);
  const keys = await db.rows<{ value: string; n: string }>(`SELECT name AS value, count(*) AS n FROM api_keys WHERE name LIKE 'chaos-key-%' GROUP BY name`);
  const present = new Map<string, number>();
  for (const row of [...rules, ...keys]) present.set(row.value, Number(row.n));
  const acked = load.writes.filter((w) => w.acknowledged);
  const lost = acked.filter((w) => !present.has(w.value));
  const doubled = load.writes.filter((w) => (present.get(w.value) ?? 0) > 1);
  const rejected = load.writes.filter((w) => w.rejected);
  const retried = load.writes.filter((w) => w.attempts > 1).length;
  const pass = acked.length > 0 && lost.length === 0 && doubled.length === 0 && rejected.length === 0;
  const detail = `${acked.length}/${load.writes.length} acknowledged (${retried} after retries), lost ${lost.length}, duplicated ${doubled.length}, refused ${rejected.length}` +
    (lost.length + doubled.length + rejected.length > 0 ? `; e.g. ${[...lost, ...doubled, ...rejected].slice(0, 3).map((w) => `${w.key}:${w.value}${w.rejected ? ` ${w.rejected}` : ''}`).join(', ')}` : '');
  return { name: 'acknowledged writes present exactly once', pass, detail };
}

async function jobsCheck(db: Db, load: Load): Promise<Check[]> {
  const states = await db.rows<{ kind: string; state: string; n: string; no_reason: string }>(
    `SELECT kind, state, count(*) AS n, count(*) FILTER (WHERE last_error IS NULL OR last_error = '') AS no_reason FROM jobs GROUP BY kind, state ORDER BY kind, state`,
  );
  const unfinished = states.filter((r) => r.state === 'queued' || r.state === 'running');
  const unexplained = states.filter((r) => (r.state === 'dead' || r.state === 'failed') && Number(r.no_reason) > 0);
  const summary = states.map((r) => `${r.kind}:${r.state}=${r.n}`).join(' ');
  const ids = [...load.scanIds];
  const scans = await db.rows<{ id: string; status: string; job_id: string | null; completed_events: string; findings: string; job_state: string | null }>(
    `SELECT s.id, s.status, s.job_id, j.state AS job_state,
            (SELECT count(*) FROM events e WHERE e.type = 'scan.completed' AND e.data->'object'->>'id' = s.id) AS completed_events,
            (SELECT count(*) FROM scan_findings f WHERE f.scan_id = s.id) AS findings
       FROM scans s LEFT JOIN jobs j ON j.id = s.job_id WHERE s.id = ANY($1)`,
    [ids],
  );
  const missing = ids.length - scans.length;
  const notDone = scans.filter((s) => s.status !== 'completed' && s.job_state !== 'dead');
  const twice = scans.filter((s) => Number(s.completed_events) > 1);
  const completed = scans.filter((s) => s.status === 'completed');
  const findingCounts = new Set(completed.map((s) => s.findings));
  const sharedJobs = new Set(scans.map((s) => s.job_id)).size !== scans.length;
  return [
    {
      name: 'every job finished (completed, or dead with a reason)',
      pass: unfinished.length === 0 && unexplained.length === 0,
      detail: summary || 'no jobs',
    },
    {
      name: 'every acknowledged scan ran to completion exactly once',
      pass: ids.length > 0 && missing === 0 && notDone.length === 0 && twice.length === 0 && findingCounts.size <= 1 && !sharedJobs,
      detail:
        `${completed.length}/${ids.length} completed, missing ${missing}, unfinished ${notDone.length}, completed twice ${twice.length}, ` +
        `findings per scan ${[...findingCounts].join('/') || '-'}${notDone.length > 0 ? `; e.g. ${notDone.slice(0, 3).map((s) => `${s.id}:${s.status}/${s.job_state}`).join(', ')}` : ''}`,
    },
  ];
}

async function webhooksCheck(db: Db, receiver: Receiver, webhookId: string, limits: Limits): Promise<Check> {
  const deliveries = await db.rows<{ event_id: string; status: string; attempts: number }>(`SELECT event_id, status, attempts FROM webhook_deliveries WHERE webhook_id = $1`, [webhookId]);
  const events = await db.rows<{ id: string }>(
    `SELECT e.id FROM events e, webhooks w WHERE w.id = $1 AND e.org_id = w.org_id AND e.created_at >= w.created_at AND (e.type LIKE 'scan.%' OR e.type LIKE 'api_key.%')`,
    [webhookId],
  );
  const received = new Set(receiver.deliveries.filter((d) => d.status === 200).map((d) => d.eventId));
  const undelivered = events.filter((e) => !received.has(e.id));
  const notSucceeded = deliveries.filter((d) => d.status !== 'succeeded');
  const maxAttempts = Math.max(0, ...deliveries.map((d) => Number(d.attempts)));
  const retried = deliveries.filter((d) => Number(d.attempts) > 1).length;
  const duplicates = receiver.deliveries.filter((d) => d.status === 200).length - received.size;
  return {
    name: 'every webhook event delivered at least once, retries bounded',
    pass: events.length > 0 && undelivered.length === 0 && notSucceeded.length === 0 && maxAttempts <= limits.maxDeliveryAttempts,
    detail: `${events.length - undelivered.length}/${events.length} events delivered, ${retried} after retries, most attempts ${maxAttempts} (bound ${limits.maxDeliveryAttempts}), ${duplicates} duplicate deliveries (allowed: at least once)${undelivered.length > 0 ? `; undelivered e.g. ${undelivered.slice(0, 3).map((e) => e.id).join(', ')}` : ''}`,
  };
}

function gatewayDuringPostgresCheck(samples: Sample[], faults: FaultRecord[], scheduled: boolean): Check {
  const outages = faults.filter((f) => f.fault === 'postgres restart');
  if (!scheduled) return { name: 'gateway served on its last configuration while PostgreSQL was down', pass: true, detail: 'not scheduled (--faults)' };
  const during = samples.filter((s) => s.target === 'shield' && outages.some((f) => s.start >= f.start && s.start <= f.restored));
  const bad = during.filter((s) => !(s.status === 200 || (s.stream === 'limited' && s.status === 429)));
  return {
    name: 'gateway served on its last configuration while PostgreSQL was down',
    pass: outages.length > 0 && during.length > 0 && bad.length === 0,
    detail: `${during.length - bad.length}/${during.length} gateway requests answered normally during ${outages.length} outage(s)${bad.length > 0 ? `; statuses ${[...new Set(bad.map((s) => s.status))].join(',')}` : ''}`,
  };
}

/** Allowed requests of the limited client per fixed window (the gateway's windows are aligned the same way: floor(now / window)). */
function rateLimitCheck(samples: Sample[], faults: FaultRecord[], limits: Limits, redisScheduled: boolean): Check {
  const limited = samples.filter((s) => s.stream === 'limited');
  const windows = new Map<number, { allowed: number; sent: number; blocked: number }>();
  for (const s of limited) {
    const w = Math.floor(s.start / limits.windowMs);
    const entry = windows.get(w) ?? { allowed: 0, sent: 0, blocked: 0 };
    entry.sent++;
    if (s.status === 200) entry.allowed++;
    if (s.status === 429) entry.blocked++;
    windows.set(w, entry);
  }
  const redis = faults.filter((f) => f.fault === 'redis restart');
  // Fail-open: from the kill until the gateway's Redis client has reconnected (its backoff is at most 2 s).
  const failOpen = (t: number) => redis.some((f) => t >= f.start && t <= f.restored + limits.reconnectMs);
  const touches = (w: number) => redis.some((f) => w * limits.windowMs <= f.restored + limits.reconnectMs && (w + 1) * limits.windowMs > f.start);
  let worstNormal = 0;
  let worstOutage = 0;
  const over: string[] = [];
  let blocked = 0;
  for (const [w, e] of windows) {
    if (touches(w)) {
      // Documented slack: every request sent while Redis is unreachable (fail-open), plus one fresh
      // budget because the counters died with Redis, plus the edge slack.
      const sentOpen = limited.filter((s) => Math.floor(s.start / limits.windowMs) === w && failOpen(s.start)).length;
      const bound = 2 * limits.budget + sentOpen + limits.edgeSlack;
      worstOutage = Math.max(worstOutage, e.allowed);
      if (e.allowed > bound) over.push(`window ${w}: ${e.allowed} > 2×${limits.budget}+${sentOpen}+${limits.edgeSlack}`);
    } else {
      blocked += e.blocked;
      worstNormal = Math.max(worstNormal, e.allowed);
      if (e.allowed > limits.budget + limits.edgeSlack) over.push(`window ${w}: ${e.allowed} > ${limits.budget}+${limits.edgeSlack}`);
    }
  }
  return {
    name: 'rate limit within budget ± slack (Redis outage included)',
    pass: (redis.length > 0 || !redisScheduled) && blocked > 0 && over.length === 0,
    detail: `budget ${limits.budget}/${limits.windowMs / 1000}s: most allowed in a window ${worstNormal} (slack ${limits.edgeSlack}); in windows touching a Redis outage ${worstOutage}; 429s outside outages ${blocked}${over.length > 0 ? `; over: ${over.slice(0, 3).join(', ')}` : ''}`,
  };
}

/**
 * Longest run of failures of a stream as its clients saw it: from the first failed request to the
 * next success, whichever process answered (the API clients fail over between the two API processes;
 * how long one process was down is the fault table's recovery time).
 */
export function longestFailure(samples: Sample[]): { key: string; ms: number; from: number } {
  const byKey = new Map<string, Sample[]>();
  for (const s of samples) byKey.set(s.stream, [...(byKey.get(s.stream) ?? []), s]);
  let worst = { key: '-', ms: 0, from: 0 };
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.start - b.start);
    let open: number | undefined;
    for (const s of list) {
      if (failed(s)) open ??= s.start;
      else if (open !== undefined) {
        if (s.start - open > worst.ms) worst = { key, ms: s.start - open, from: open };
        open = undefined;
      }
    }
    if (open !== undefined) worst = { key: `${key} (never recovered)`, ms: Infinity, from: open };
  }
  return worst;
}

export interface CheckInput {
  db: Db;
  load: Load;
  receiver: Receiver;
  faults: FaultRecord[];
  writeSiteId: string;
  webhookId: string;
  limits: Limits;
  /** Processes that died without being killed by the schedule. */
  crashes: string[];
  /** The faults this run was to inject (all of them unless --faults chose some). */
  scheduled: readonly FaultName[];
  /** After each PostgreSQL restart: ms until a new rule was enforced by the gateway (null: never). */
  propagation: (number | null)[];
}

export async function runChecks(input: CheckInput): Promise<Check[]> {
  const { db, load, limits } = input;
  const worst = longestFailure(load.samples);
  return [
    await writesCheck(db, load, input.writeSiteId),
    ...(await jobsCheck(db, load)),
    await webhooksCheck(db, input.receiver, input.webhookId, limits),
    gatewayDuringPostgresCheck(load.samples, input.faults, input.scheduled.includes('postgres restart')),
    {
      name: 'gateway follows configuration changes after the PostgreSQL restart',
      pass: (input.propagation.length > 0 || !input.scheduled.includes('postgres restart')) && input.propagation.every((ms) => ms !== null),
      detail: `new rule enforced after ${input.propagation.map((ms) => (ms === null ? 'never (30 s)' : `${(ms / 1000).toFixed(1)} s`)).join(', ') || '-'}`,
    },
    rateLimitCheck(load.samples, input.faults, limits, input.scheduled.includes('redis restart')),
    {
      name: `no stream failed (5xx or no answer) longer than ${limits.recoveryBoundMs / 1000} s`,
      pass: worst.ms <= limits.recoveryBoundMs,
      detail: worst.ms === 0 ? 'no failed request' : `longest: ${worst.key} ${Number.isFinite(worst.ms) ? `${(worst.ms / 1000).toFixed(1)} s` : 'until the end'}`,
    },
    {
      name: 'no process died unless the schedule killed it',
      pass: input.crashes.length === 0,
      detail: input.crashes.length === 0 ? 'none' : input.crashes.join('; ').slice(0, 400),
    },
  ];
}
