// What an impact preview reports (replay.ts): for each change kind, per responsible object and in
// total, how many requests changed, from whom, what the origin had answered them, when, and a few
// examples. Aggregates only: a tally keeps counters and maps keyed by client and network, never the
// records, so a replay of millions of requests holds only what it will report.
import type { RuleKind } from '../decision.ts';
import type { SiteMode } from '../sites/compile.ts';
import type { TrafficRecord } from '../traffic/traffic-record.ts';

export type ChangeKind = 'newly_blocked' | 'newly_challenged' | 'newly_allowed';

/** What a change is attributed to: a rule (by the verdict's kind and id) or the site's mode. */
export type ImpactObjectKind = RuleKind | 'mode';

export interface ImpactObject {
  kind: ImpactObjectKind;
  /** The rule's id as the configuration's rows carry it (`new:<name>` for an unsaved one); null for `mode` and undeclared schema paths. */
  id: string | null;
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

export interface Ranked {
  value: string;
  requests: number;
}

/** One request shown as an example: metadata only, parameter values never included. */
export interface ImpactExample {
  method: string;
  path: string;
  /** The query's parameter names with every value replaced by `…`; null when the record kept no values. */
  query: string | null;
  status: number;
  /** ISO 8601 UTC. */
  at: string;
  /** The client's /24 or /48, not its address. */
  network: string;
  has_values: boolean;
}

export interface ChangeStats {
  requests: number;
  /** Distinct client addresses. */
  clients: number;
  /** Distinct client networks. */
  networks: number;
  /** The five with most requests; ties by value ascending. */
  top_clients: Ranked[];
  top_networks: Ranked[];
  /** What the client got when the request was recorded (the origin's answer for a proxied request). */
  origin_statuses: { classes: Record<StatusClass, number>; exact: Record<string, number> };
  with_session: number;
  /** ISO 8601 UTC; null when there are no requests. */
  first_seen: string | null;
  last_seen: string | null;
  /** Requests per hour, hours in ascending order, empty hours left out. */
  hourly: { hour: string; requests: number }[];
  /** The first three (by arrival) of these requests. */
  examples: ImpactExample[];
  /** On newly_blocked requests the origin had answered 2xx. */
  warning?: string;
}

/**
 * How far the counts can be trusted. `exact`: the verdicts read only metadata every record has.
 * Otherwise they read parameter values, which only `with_values` of the `records` carry: the
 * counts are then a lower bound, taken over that sample.
 */
export interface Coverage {
  records: number;
  with_values: number;
  exact: boolean;
  note?: string;
}

export interface ImpactGroup {
  coverage: Coverage;
  newly_blocked: ChangeStats;
  newly_challenged: ChangeStats;
  newly_allowed: ChangeStats;
}

export interface ObjectImpact extends ImpactGroup {
  object: ImpactObject;
}

export interface ImpactReport {
  window: { since: string; until: string };
  mode: { current: SiteMode; proposed: SiteMode };
  totals: ImpactGroup & {
    /** Records whose effective outcome (pass, block, challenge) is the same under both. */
    unchanged: number;
    /** Records the current configuration blocks and the proposed one challenges (counted in `unchanged` too). */
    softened: number;
  };
  /** Objects with at least one change, most changed requests first. */
  objects: ObjectImpact[];
  /**
   * Records whose outcome replayed under the current configuration is not what was recorded: the
   * configuration changed during the window, values were not kept, or counters started empty.
   */
  differs_from_recorded: number;
  /** Problems compiling either configuration, and limits of this replay (prefixed with which side). */
  warnings: string[];
}

const EXAMPLES = 3;
const TOP = 5;
const HOUR_MS = 3_600_000;
const MAX_EXAMPLE_QUERY = 512;

/** The five entries with most requests, ties by value ascending, in one pass. */
export function topFive(counts: ReadonlyMap<string, number>): Ranked[] {
  const top: Ranked[] = [];
  for (const [value, requests] of counts) {
    if (top.length === TOP) {
      const last = top[TOP - 1]!;
      if (requests < last.requests || (requests === last.requests && value > last.value)) continue;
      top.pop();
    }
    let at = top.length;
    while (at > 0 && (top[at - 1]!.requests < requests || (top[at - 1]!.requests === requests && top[at - 1]!.value > value))) at--;
    top.splice(at, 0, { value, requests });
  }
  return top;
}

/**
 * A raw query string with every parameter value replaced by `…`: names are kept (they say what was
 * sent), values are what the traffic record seals and never leave it.
 */
export function redactQuery(raw: string): string {
  if (raw === '') return '';
  const parts = raw.split('&').map((part) => {
    const eq = part.indexOf('=');
    return eq === -1 ? part : `${part.slice(0, eq)}=…`;
  });
  const text = parts.join('&');
  return text.length > MAX_EXAMPLE_QUERY ? `${text.slice(0, MAX_EXAMPLE_QUERY)}…` : text;
}

function increment<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** The statistics of one change kind for one object (or the total). */
export class ChangeTally {
  #requests = 0;
  #withSession = 0;
  #first = Infinity;
  #last = -Infinity;
  readonly #clients = new Map<string, number>();
  readonly #networks = new Map<string, number>();
  readonly #statuses = new Map<number, number>();
  readonly #hours = new Map<number, number>();
  readonly #examples: ImpactExample[] = [];

  get requests(): number {
    return this.#requests;
  }

  add(record: TrafficRecord): void {
    this.#requests++;
    if (record.hasSession) this.#withSession++;
    if (record.at < this.#first) this.#first = record.at;
    if (record.at > this.#last) this.#last = record.at;
    increment(this.#clients, record.clientIp);
    increment(this.#networks, record.network);
    increment(this.#statuses, record.status);
    increment(this.#hours, record.at - (record.at % HOUR_MS));
    if (this.#examples.length < EXAMPLES) {
      this.#examples.push({
        method: record.method,
        path: record.path,
        query: record.values ? redactQuery(record.values.query) : null,
        status: record.status,
        at: new Date(record.at).toISOString(),
        network: record.network,
        has_values: record.values !== null,
      });
    }
  }

  stats(kind: ChangeKind): ChangeStats {
    const classes: Record<StatusClass, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
    const exact: Record<string, number> = {};
    for (const [status, count] of [...this.#statuses].sort((a, b) => a[0] - b[0])) {
      exact[String(status)] = count;
      const cls = `${Math.floor(status / 100)}xx`;
      if (cls in classes) classes[cls as StatusClass] += count;
    }
    const stats: ChangeStats = {
      requests: this.#requests,
      clients: this.#clients.size,
      networks: this.#networks.size,
      top_clients: topFive(this.#clients),
      top_networks: topFive(this.#networks),
      origin_statuses: { classes, exact },
      with_session: this.#withSession,
      first_seen: this.#requests > 0 ? new Date(this.#first).toISOString() : null,
      last_seen: this.#requests > 0 ? new Date(this.#last).toISOString() : null,
      hourly: [...this.#hours].sort((a, b) => a[0] - b[0]).map(([hour, requests]) => ({ hour: new Date(hour).toISOString(), requests })),
      examples: [...this.#examples],
    };
    if (kind === 'newly_blocked' && classes['2xx'] > 0) {
      stats.warning = `${classes['2xx']} of these requests were answered 2xx by the origin: each is either a false positive or an exploit that worked`;
    }
    return stats;
  }
}

/** The three tallies of one object (or of the total). */
export class GroupTally {
  readonly tallies: Record<ChangeKind, ChangeTally> = { newly_blocked: new ChangeTally(), newly_challenged: new ChangeTally(), newly_allowed: new ChangeTally() };

  get requests(): number {
    return this.tallies.newly_blocked.requests + this.tallies.newly_challenged.requests + this.tallies.newly_allowed.requests;
  }

  /** `exact`: whether the verdicts counted read only what every record carries (known once all were read). */
  group(records: number, withValues: number, exact: boolean): ImpactGroup {
    return {
      coverage: coverageOf(records, withValues, exact),
      newly_blocked: this.tallies.newly_blocked.stats('newly_blocked'),
      newly_challenged: this.tallies.newly_challenged.stats('newly_challenged'),
      newly_allowed: this.tallies.newly_allowed.stats('newly_allowed'),
    };
  }
}

export function coverageOf(records: number, withValues: number, exact: boolean): Coverage {
  if (exact) return { records, with_values: withValues, exact };
  const share = records === 0 ? 0 : withValues / records;
  return {
    records,
    with_values: withValues,
    exact,
    note: `Counted over the ${withValues} of ${records} requests whose values were kept (${(share * 100).toFixed(1)}%): a lower bound, requests without values are not counted.`,
  };
}
