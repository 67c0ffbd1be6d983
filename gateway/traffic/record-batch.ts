// The traffic record's storage unit: one row holds a batch of one site's requests (those one
// gateway process answered in up to BATCH_MS, traffic-writer.ts), column by column. A row per
// request cost the gateway a quarter of its throughput on the embedded database (every row is an
// insert into the same process's PostgreSQL), and a batch as JSON made a replay spend most of its
// time parsing and collecting millions of small objects: the numbers are binary columns
// (little-endian typed arrays, read in place), and only the strings — client addresses, paths,
// methods, decisions, each written once per batch — are JSON. Values stay out of the batch: they
// are sealed apart, by the request's index in the batch.
//
//   offset 0   u8 version (2), 3 bytes zero
//          4   u32 count
//          8   f64 t0 (epoch ms of the first arrival)
//          16  u32 byte length of the strings' JSON, 4 bytes zero
//          24  u32[count] × 5: arrival (ms after t0), client, target, decision, latency (ms)
//              u16[count] origin status, u8[count] flags (1: a session or credentials; 2: managed
//              rules judged at every level — those with a hit at some level are in `managed`)
//              the strings' JSON (BatchStrings), UTF-8
import type { DecisionAction, RuleKind } from '../decision.ts';
import { formatIp, networkOf, parseIp, type ParsedIp } from '../../schemas/checks/ip.ts';
import { PASSES_EVERY_LEVEL, type ManagedByLevel } from '../rules/managed/index.ts';
import type { CapturedRequest, RecordedValues, TrafficRecord, ValuesReason } from './traffic-record.ts';

/** The client's /24 (IPv4) or /48 (IPv6), in CIDR notation: what the record groups clients by (a batch stores the address alone). */
const clientNetwork = (ip: ParsedIp): string => (ip.version === 4 ? `${formatIp(networkOf(ip, 24))}/24` : `${formatIp(networkOf(ip, 48))}/48`);

const VERSION = 2;
const HEADER = 24;
const SESSION = 1;
const JUDGED = 2;

/** The strings of a batch, each once, referred to by index from the columns. */
interface BatchStrings {
  /** Distinct client addresses (their network is derived: clientNetwork). */
  clients: string[];
  /** ASN and country of the clients that have either, by client index. */
  origins: Record<string, [asn: number | null, country: string | null]>;
  /** Distinct `METHOD path` pairs. */
  targets: string[];
  /** Distinct decisions: action, rule kind, rule id, would. */
  decisions: [action: DecisionAction, kind: RuleKind | null, id: string | null, would: 'block' | 'challenge' | null][];
  /** API-key digests of the requests that carried any, by index. */
  keys: Record<string, readonly string[]>;
  /** Why values were kept, by index (the values are in the sealed column). */
  kept: Record<string, ValuesReason>;
  /** The managed rule per paranoia level of the judged requests some level flags, by index (absent in batches before it was recorded). */
  managed?: Record<string, ManagedByLevel>;
}

/** Collects one site's requests as they are answered; `encode` turns them into a row's `columns`. */
export class BatchBuilder {
  readonly #clients = new Map<string, number>();
  readonly #targets = new Map<string, number>();
  readonly #decisions = new Map<string, number>();
  readonly #strings: BatchStrings = { clients: [], origins: {}, targets: [], decisions: [], keys: {}, kept: {}, managed: {} };
  readonly #at: number[] = [];
  readonly #client: number[] = [];
  readonly #target: number[] = [];
  readonly #decision: number[] = [];
  readonly #latency: number[] = [];
  readonly #status: number[] = [];
  readonly #flags: number[] = [];
  readonly values: Record<string, RecordedValues> = {};
  first = Number.POSITIVE_INFINITY;
  last = 0;

  constructor(readonly siteId: string) {}

  get size(): number {
    return this.#at.length;
  }

  add(record: CapturedRequest): void {
    const s = this.#strings;
    const i = this.#at.length;
    this.#at.push(record.at);
    if (record.at < this.first) this.first = record.at;
    if (record.at > this.last) this.last = record.at;
    this.#client.push(
      indexOf(this.#clients, record.clientIp, () => {
        if (record.asn !== null || record.country !== null) s.origins[s.clients.length] = [record.asn, record.country];
        s.clients.push(record.clientIp);
      }),
    );
    const target = `${record.method} ${record.path}`;
    this.#target.push(indexOf(this.#targets, target, () => s.targets.push(target)));
    this.#status.push(record.status);
    this.#latency.push(record.latencyMs);
    const managed = record.managedByLevel;
    this.#flags.push((record.hasSession ? SESSION : 0) | (managed ? JUDGED : 0));
    if (managed && managed !== PASSES_EVERY_LEVEL && managed.some((rule) => rule !== null)) s.managed![i] = managed;
    // Most requests are plain allows: their decision needs no key built.
    const plain = record.action === 'allow' && record.ruleKind === null;
    const decision = plain ? '' : `${record.action}\u0000${record.ruleKind ?? ''}\u0000${record.ruleId ?? ''}\u0000${record.would ?? ''}`;
    this.#decision.push(indexOf(this.#decisions, decision, () => s.decisions.push([record.action, record.ruleKind, record.ruleId, record.would])));
    if (record.apiKeys.length > 0) s.keys[i] = record.apiKeys;
    if (record.values && record.valuesReason) {
      s.kept[i] = record.valuesReason;
      this.values[i] = record.values;
    }
  }

  /** The batch's `columns`, in base64: arrival times relative to the first request. */
  encode(): string {
    const count = this.#at.length;
    const strings = Buffer.from(JSON.stringify(this.#strings), 'utf8');
    const columnsEnd = HEADER + count * 23;
    // A fresh, zero-filled buffer (never the shared pool): typed arrays over it are aligned.
    const out = Buffer.alloc(columnsEnd + strings.length);
    out.writeUInt8(VERSION, 0);
    out.writeUInt32LE(count, 4);
    out.writeDoubleLE(this.first, 8);
    out.writeUInt32LE(strings.length, 16);
    const u32 = new Uint32Array(out.buffer, out.byteOffset + HEADER, count * 5);
    for (let i = 0; i < count; i++) {
      u32[i] = this.#at[i]! - this.first;
      u32[count + i] = this.#client[i]!;
      u32[2 * count + i] = this.#target[i]!;
      u32[3 * count + i] = this.#decision[i]!;
      u32[4 * count + i] = Math.max(0, Math.round(this.#latency[i]!));
    }
    new Uint16Array(out.buffer, out.byteOffset + HEADER + count * 20, count).set(this.#status);
    new Uint8Array(out.buffer, out.byteOffset + HEADER + count * 22, count).set(this.#flags);
    strings.copy(out, columnsEnd);
    return out.toString('base64');
  }

  get hasValues(): boolean {
    return Object.keys(this.#strings.kept).length > 0;
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

const NO_KEYS: readonly string[] = Object.freeze([]);

/**
 * Recorded requests read where they lie, by index in arrival order: a replay asks most requests
 * only for their time, client and target, and builds a whole TrafficRecord for the few that
 * change — a day of traffic is millions of requests, and an object each is most of a replay's time.
 */
export interface RecordedRequests {
  readonly length: number;
  readonly siteId: string;
  at(i: number): number;
  clientIp(i: number): string;
  /** `METHOD path`. */
  target(i: number): string;
  /** The request is its method, path and client alone: no values kept, no API keys, no managed rule flagged it at any level. */
  bare(i: number): boolean;
  /** Whether its managed-rule verdict at every level was recorded (managedByLevel). */
  judged(i: number): boolean;
  action(i: number): DecisionAction;
  record(i: number): TrafficRecord;
}

/** A run of recorded requests: indexes [from, to) of `requests`. */
export interface RecordRun {
  requests: RecordedRequests;
  from: number;
  to: number;
}

/** Sparse columns (`keys`, `kept`, values), keyed by index: a Map, or null when the batch has none. */
function byIndex<T>(column: Record<string, T> | null): Map<number, T> | null {
  if (column === null) return null;
  const entries = Object.entries(column);
  return entries.length === 0 ? null : new Map(entries.map(([index, value]) => [Number(index), value]));
}

/** A stored batch (its `columns`, its opened values), read in place. */
export class DecodedBatch implements RecordedRequests {
  readonly length: number;
  readonly #t0: number;
  readonly #at: Uint32Array;
  readonly #client: Uint32Array;
  readonly #target: Uint32Array;
  readonly #decision: Uint32Array;
  readonly #latency: Uint32Array;
  readonly #status: Uint16Array;
  readonly #flags: Uint8Array;
  readonly #strings: BatchStrings;
  /** Storage index of the i-th request to arrive; null when they are stored in arrival order. */
  readonly #order: Uint32Array | null;
  readonly #keys: Map<number, readonly string[]> | null;
  readonly #kept: Map<number, RecordedValues> | null;
  readonly #reasons: Map<number, ValuesReason> | null;
  readonly #managed: Map<number, ManagedByLevel> | null;

  constructor(
    readonly siteId: string,
    columns: string,
    values: Record<string, RecordedValues> | null,
  ) {
    const decoded = Buffer.from(columns, 'base64');
    // Typed arrays need their offset aligned: a small buffer comes from Node's shared pool, at any offset.
    const bytes = decoded.byteOffset % 4 === 0 ? decoded : new Uint8Array(decoded);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.byteLength < HEADER || view.getUint8(0) !== VERSION) throw new Error('traffic record: not a batch of this version');
    const count = (this.length = view.getUint32(4, true));
    this.#t0 = view.getFloat64(8, true);
    const base = bytes.byteOffset + HEADER;
    const u32 = (k: number): Uint32Array => new Uint32Array(bytes.buffer, base + k * 4 * count, count);
    [this.#at, this.#client, this.#target, this.#decision, this.#latency] = [u32(0), u32(1), u32(2), u32(3), u32(4)];
    this.#status = new Uint16Array(bytes.buffer, base + count * 20, count);
    this.#flags = new Uint8Array(bytes.buffer, base + count * 22, count);
    const stringsAt = HEADER + count * 23;
    this.#strings = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + stringsAt, view.getUint32(16, true)).toString('utf8')) as BatchStrings;
    // A request is added when answered, and its `at` is when it arrived: a slow one comes after faster ones that arrived later.
    const at = this.#at;
    let sorted = true;
    for (let i = 1; i < count && sorted; i++) sorted = at[i - 1]! <= at[i]!;
    this.#order = sorted ? null : Uint32Array.from({ length: count }, (_, i) => i).sort((x, y) => at[x]! - at[y]! || x - y);
    this.#keys = byIndex(this.#strings.keys);
    this.#kept = byIndex(values);
    this.#reasons = this.#kept && byIndex(this.#strings.kept);
    this.#managed = byIndex(this.#strings.managed ?? null);
  }

  #index(i: number): number {
    return this.#order === null ? i : this.#order[i]!;
  }

  at(i: number): number {
    return this.#t0 + this.#at[this.#index(i)]!;
  }

  clientIp(i: number): string {
    return this.#strings.clients[this.#client[this.#index(i)]!]!;
  }

  target(i: number): string {
    return this.#strings.targets[this.#target[this.#index(i)]!]!;
  }

  bare(i: number): boolean {
    const j = this.#index(i);
    return !this.#keys?.has(j) && !this.#kept?.has(j) && !this.#managed?.has(j);
  }

  judged(i: number): boolean {
    return (this.#flags[this.#index(i)]! & JUDGED) !== 0;
  }

  action(i: number): DecisionAction {
    return this.#strings.decisions[this.#decision[this.#index(i)]!]![0];
  }

  record(i: number): TrafficRecord {
    const s = this.#strings;
    const j = this.#index(i);
    const client = this.#client[j]!;
    const clientIp = s.clients[client]!;
    const parsed = parseIp(clientIp);
    const [asn, country] = s.origins[client] ?? [null, null];
    const target = s.targets[this.#target[j]!]!;
    const space = target.indexOf(' ');
    const [action, ruleKind, ruleId, would] = s.decisions[this.#decision[j]!]!;
    const values = this.#kept?.get(j) ?? null;
    return {
      siteId: this.siteId,
      at: this.#t0 + this.#at[j]!,
      clientIp,
      network: parsed ? clientNetwork(parsed) : clientIp,
      asn,
      country,
      method: target.slice(0, space),
      path: target.slice(space + 1),
      status: this.#status[j]!,
      latencyMs: this.#latency[j]!,
      hasSession: (this.#flags[j]! & SESSION) !== 0,
      apiKeys: this.#keys?.get(j) ?? NO_KEYS,
      action,
      ruleKind,
      ruleId,
      would,
      managedByLevel: (this.#flags[j]! & JUDGED) === 0 ? null : (this.#managed?.get(j) ?? PASSES_EVERY_LEVEL),
      values,
      valuesReason: values ? (this.#reasons?.get(j) ?? null) : null,
    };
  }
}

/** Whole records (built by hand, in tests and benches) as RecordedRequests. */
export class RecordList implements RecordedRequests {
  readonly length: number;
  readonly siteId: string;

  constructor(readonly records: readonly TrafficRecord[]) {
    this.length = records.length;
    this.siteId = records[0]?.siteId ?? '';
  }

  at(i: number): number {
    return this.records[i]!.at;
  }

  clientIp(i: number): string {
    return this.records[i]!.clientIp;
  }

  target(i: number): string {
    return `${this.records[i]!.method} ${this.records[i]!.path}`;
  }

  bare(i: number): boolean {
    const record = this.records[i]!;
    return record.values === null && record.apiKeys.length === 0 && (record.managedByLevel === null || record.managedByLevel.every((rule) => rule === null));
  }

  judged(i: number): boolean {
    return this.records[i]!.managedByLevel !== null;
  }

  action(i: number): DecisionAction {
    return this.records[i]!.action;
  }

  record(i: number): TrafficRecord {
    return this.records[i]!;
  }
}
