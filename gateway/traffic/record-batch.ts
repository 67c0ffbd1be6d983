// The traffic record's storage unit: one row holds a batch of one site's requests (those one
// gateway process answered in about a second), column by column, with repeated strings — client
// addresses, paths, methods, decisions — written once each. A row per request cost the gateway a
// quarter of its throughput on the embedded database (every row is an insert into the same
// process's PostgreSQL); a row per batch costs a JSON encoding per second (docs/impact-preview.md).
// Values stay out of the batch's text: they are sealed apart, by the request's index in the batch.
import type { DecisionAction, RuleKind } from '../decision.ts';
import type { RecordedValues, TrafficRecord, ValuesReason } from './traffic-record.ts';

/** A batch as stored (`records` column): parallel arrays, one entry per request, strings by index. */
export interface EncodedBatch {
  v: 1;
  /** Arrival of each request, ms after `t0`. */
  at: number[];
  t0: number;
  /** Distinct client addresses, with their network, ASN and country. */
  clients: [ip: string, network: string, asn: number | null, country: string | null][];
  client: number[];
  /** Distinct `METHOD path` pairs. */
  targets: string[];
  target: number[];
  status: number[];
  latency: number[];
  /** 1 when the request carried a session or credentials. */
  session: (0 | 1)[];
  /** Distinct decisions: action, rule kind, rule id, would. */
  decisions: [action: DecisionAction, kind: RuleKind | null, id: string | null, would: 'block' | 'challenge' | null][];
  decision: number[];
  /** API-key digests of the requests that carried any, by index. */
  keys: Record<string, string[]>;
  /** Why values were kept, by index (the values are in the sealed column). */
  kept: Record<string, ValuesReason>;
}

/** Collects one site's requests as they are answered; `encode` turns them into a row. */
export class BatchBuilder {
  readonly #clients = new Map<string, number>();
  readonly #targets = new Map<string, number>();
  readonly #decisions = new Map<string, number>();
  readonly #batch: EncodedBatch;
  readonly values: Record<string, RecordedValues> = {};
  first = Number.POSITIVE_INFINITY;
  last = 0;

  constructor(readonly siteId: string) {
    this.#batch = { v: 1, at: [], t0: 0, clients: [], client: [], targets: [], target: [], status: [], latency: [], session: [], decisions: [], decision: [], keys: {}, kept: {} };
  }

  get size(): number {
    return this.#batch.at.length;
  }

  add(record: TrafficRecord): void {
    const b = this.#batch;
    const i = b.at.length;
    b.at.push(record.at);
    if (record.at < this.first) this.first = record.at;
    if (record.at > this.last) this.last = record.at;
    b.client.push(indexOf(this.#clients, record.clientIp, () => b.clients.push([record.clientIp, record.network, record.asn, record.country])));
    const target = `${record.method} ${record.path}`;
    b.target.push(indexOf(this.#targets, target, () => b.targets.push(target)));
    b.status.push(record.status);
    b.latency.push(record.latencyMs);
    b.session.push(record.hasSession ? 1 : 0);
    // Most requests are plain allows: their decision needs no key built.
    const plain = record.action === 'allow' && record.ruleKind === null;
    const decision = plain ? '' : `${record.action}\u0000${record.ruleKind ?? ''}\u0000${record.ruleId ?? ''}\u0000${record.would ?? ''}`;
    b.decision.push(indexOf(this.#decisions, decision, () => b.decisions.push([record.action, record.ruleKind, record.ruleId, record.would])));
    if (record.apiKeys.length > 0) b.keys[i] = record.apiKeys;
    if (record.values && record.valuesReason) {
      b.kept[i] = record.valuesReason;
      this.values[i] = record.values;
    }
  }

  /** The batch's `records` text: arrival times relative to the first request. */
  encode(): string {
    const b = this.#batch;
    b.t0 = this.first;
    for (let i = 0; i < b.at.length; i++) b.at[i]! -= this.first;
    return JSON.stringify(b);
  }

  get hasValues(): boolean {
    return Object.keys(this.#batch.kept).length > 0;
  }
}

function indexOf(map: Map<string, number>, key: string, add: () => void): number {
  let index = map.get(key);
  if (index === undefined) {
    index = map.size;
    map.set(key, index);
    add();
  }
  return index;
}

/** The requests of a stored batch, in the order they were added, with their values when kept. */
export function decodeBatch(siteId: string, text: string, values: Record<string, RecordedValues> | null): TrafficRecord[] {
  const b = JSON.parse(text) as EncodedBatch;
  const out: TrafficRecord[] = new Array<TrafficRecord>(b.at.length);
  for (let i = 0; i < b.at.length; i++) {
    const [clientIp, network, asn, country] = b.clients[b.client[i]!]!;
    const target = b.targets[b.target[i]!]!;
    const space = target.indexOf(' ');
    const [action, ruleKind, ruleId, would] = b.decisions[b.decision[i]!]!;
    const kept = values?.[i] ?? null;
    out[i] = {
      siteId,
      at: b.t0 + b.at[i]!,
      clientIp,
      network,
      asn,
      country,
      method: target.slice(0, space),
      path: target.slice(space + 1),
      status: b.status[i]!,
      latencyMs: b.latency[i]!,
      hasSession: b.session[i] === 1,
      apiKeys: b.keys[i] ?? [],
      action,
      ruleKind,
      ruleId,
      would,
      values: kept,
      valuesReason: kept ? (b.kept[i] ?? null) : null,
    };
  }
  return out;
}
