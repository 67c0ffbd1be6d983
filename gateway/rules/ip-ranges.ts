// Sorted, non-overlapping address-range tables: the structure behind IP access rules and the ASN
// database. Lookup is a binary search over typed arrays, so its cost grows with log(ranges), not
// with the number of rules, and it allocates nothing.
//
// Keys: IPv4 addresses are plain numbers (0 … 2^32-1). IPv6 addresses are bigints while a table is
// built (exact 128-bit arithmetic, off the request path) and four unsigned 32-bit words once built,
// so a lookup compares small integers instead of creating bigints.
//
// Overlaps: entries are ranked by the order they were added — the entry added first wins wherever
// ranges overlap, and a later entry only fills the addresses no earlier entry covers. Callers put
// their precedence into the insertion order. Neighbouring pieces carrying the same payload (the
// same value by ===; share payload objects to benefit) are merged into one range.
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are the IPv4 address in disguise: a lookup of one is
// a lookup of the IPv4 address, and the part of an added IPv6 range that lies in ::ffff:0:0/96 is
// also added as IPv4, so rules written either way catch clients arriving either way.
import type { ParsedIp } from '../../schemas/checks/ip.ts';
import { parseIp } from '../../schemas/checks/ip.ts';

export type IpRange = { version: 4; start: number; end: number } | { version: 6; start: bigint; end: bigint };

const V4_MAX = 0xffffffff;
const V6_MAX = (1n << 128n) - 1n;
const MAPPED_START = 0xffffn << 32n;
const MAPPED_END = MAPPED_START | 0xffffffffn;

/** The 128-bit value of eight 16-bit groups. */
export function v6ToBigInt(groups: Uint16Array): bigint {
  // Four 32-bit words: fewer bigint operations than eight 16-bit steps (this runs per ASN row).
  const g = groups;
  return (
    (BigInt(g[0]! * 65536 + g[1]!) << 96n) |
    (BigInt(g[2]! * 65536 + g[3]!) << 64n) |
    (BigInt(g[4]! * 65536 + g[5]!) << 32n) |
    BigInt(g[6]! * 65536 + g[7]!)
  );
}

/** The addresses of one IP: a range of length one. */
export function ipToRange(ip: ParsedIp): IpRange {
  if (ip.version === 4) return { version: 4, start: ip.value, end: ip.value };
  const value = v6ToBigInt(ip.groups);
  return { version: 6, start: value, end: value };
}

/** The addresses of a network given as an address and a prefix length; host bits are ignored. */
export function prefixToRange(ip: ParsedIp, prefix: number): IpRange | null {
  if (!Number.isInteger(prefix) || prefix < 0) return null;
  if (ip.version === 4) {
    if (prefix > 32) return null;
    const size = 2 ** (32 - prefix);
    const start = Math.floor(ip.value / size) * size;
    return { version: 4, start, end: start + size - 1 };
  }
  if (prefix > 128) return null;
  const hostBits = BigInt(128 - prefix);
  const hostMask = (1n << hostBits) - 1n;
  const start = v6ToBigInt(ip.groups) & ~hostMask & V6_MAX;
  return { version: 6, start, end: start | hostMask };
}

/** `198.51.100.0/24`, `2001:db8::/32`, or a bare address (a /32 or /128); null when unreadable. */
export function cidrToRange(text: string): IpRange | null {
  const slash = text.indexOf('/');
  if (slash < 0) {
    const ip = parseIp(text);
    return ip ? ipToRange(ip) : null;
  }
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return null;
  return prefixToRange(ip, Number(prefixText));
}

/** Minimal binary min-heap of entry indices (smaller index = added earlier = higher rank). */
class IndexHeap {
  readonly #items: number[] = [];
  get size(): number {
    return this.#items.length;
  }
  peek(): number {
    return this.#items[0]!;
  }
  push(value: number): void {
    const items = this.#items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }
  pop(): void {
    const items = this.#items;
    const last = items.pop()!;
    if (items.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && items[right]! < items[left]! ? right : left;
      if (items[child]! >= last) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
  }
}

interface Resolved<K, P> {
  starts: K[];
  ends: K[];
  payloads: P[];
}

/**
 * Flattens possibly overlapping entries (rank = array position) into sorted disjoint ranges. A
 * sweep over the starts keeps the live entries in a heap by rank; each emitted piece ends where
 * the winner ends or the next entry starts, so there are at most 2n pieces: O(n log n).
 */
function resolve<K extends number | bigint, P>(starts: readonly K[], ends: readonly K[], payloads: readonly P[], max: K, step: (k: K, by: 1 | -1) => K): Resolved<K, P> {
  const n = starts.length;
  const out: Resolved<K, P> = { starts: [], ends: [], payloads: [] };
  const emit = (start: K, end: K, payload: P): void => {
    const last = out.ends.length - 1;
    if (last >= 0 && out.payloads[last] === payload && step(out.ends[last]!, 1) === start) out.ends[last] = end;
    else {
      out.starts.push(start);
      out.ends.push(end);
      out.payloads.push(payload);
    }
  };

  // Fast path for input that is already sorted and disjoint (an ip2asn file): no sort, no heap.
  let disjoint = true;
  for (let i = 1; i < n && disjoint; i++) if (starts[i]! <= ends[i - 1]!) disjoint = false;
  if (disjoint) {
    for (let i = 0; i < n; i++) emit(starts[i]!, ends[i]!, payloads[i]!);
    return out;
  }

  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => (starts[a]! < starts[b]! ? -1 : starts[a]! > starts[b]! ? 1 : a - b));
  const live = new IndexHeap();
  let next = 0;
  let cur = starts[order[0]!]!;
  while (next < n || live.size > 0) {
    if (live.size === 0) cur = starts[order[next]!]!;
    while (next < n && starts[order[next]!]! <= cur) live.push(order[next++]!);
    while (live.size > 0 && ends[live.peek()]! < cur) live.pop();
    if (live.size === 0) continue;
    const top = live.peek();
    let end = ends[top]!;
    if (next < n && starts[order[next]!]! <= end) end = step(starts[order[next]!]!, -1);
    emit(cur, end, payloads[top]!);
    if (end >= max) break;
    cur = step(end, 1);
  }
  return out;
}

const stepNumber = (k: number, by: 1 | -1): number => k + by;
const stepBigInt = (k: bigint, by: 1 | -1): bigint => k + BigInt(by);

/** Collects entries, then builds an immutable table. Rank is the order of the add calls. */
export class IpRangeTableBuilder<P> {
  readonly #v4 = { starts: [] as number[], ends: [] as number[], payloads: [] as P[] };
  readonly #v6 = { starts: [] as bigint[], ends: [] as bigint[], payloads: [] as P[] };

  addV4(start: number, end: number, payload: P): this {
    if (!(start >= 0 && start <= end && end <= V4_MAX)) throw new RangeError(`invalid IPv4 range ${start}-${end}`);
    this.#v4.starts.push(start);
    this.#v4.ends.push(end);
    this.#v4.payloads.push(payload);
    return this;
  }

  addV6(start: bigint, end: bigint, payload: P): this {
    if (!(start >= 0n && start <= end && end <= V6_MAX)) throw new RangeError(`invalid IPv6 range ${start}-${end}`);
    this.#v6.starts.push(start);
    this.#v6.ends.push(end);
    this.#v6.payloads.push(payload);
    // The IPv4-mapped part also answers for the IPv4 addresses it maps (see the file comment).
    if (start <= MAPPED_END && end >= MAPPED_START) {
      const from = start > MAPPED_START ? start : MAPPED_START;
      const to = end < MAPPED_END ? end : MAPPED_END;
      this.addV4(Number(from - MAPPED_START), Number(to - MAPPED_START), payload);
    }
    return this;
  }

  add(range: IpRange, payload: P): this {
    return range.version === 4 ? this.addV4(range.start, range.end, payload) : this.addV6(range.start, range.end, payload);
  }

  build(): IpRangeTable<P> {
    const v4 = resolve(this.#v4.starts, this.#v4.ends, this.#v4.payloads, V4_MAX, stepNumber);
    const v6 = resolve(this.#v6.starts, this.#v6.ends, this.#v6.payloads, V6_MAX, stepBigInt);
    const words = (keys: readonly bigint[]): Uint32Array => {
      const array = new Uint32Array(keys.length * 4);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        array[i * 4] = Number(k >> 96n);
        array[i * 4 + 1] = Number((k >> 64n) & 0xffffffffn);
        array[i * 4 + 2] = Number((k >> 32n) & 0xffffffffn);
        array[i * 4 + 3] = Number(k & 0xffffffffn);
      }
      return array;
    };
    return new IpRangeTable<P>(
      { starts: Uint32Array.from(v4.starts), ends: Uint32Array.from(v4.ends), payloads: v4.payloads },
      { starts: words(v6.starts), ends: words(v6.ends), payloads: v6.payloads },
    );
  }
}

interface Columns<P> {
  starts: Uint32Array;
  ends: Uint32Array;
  /** One per range: a plain array of references is as compact as an index and saves a hop. */
  payloads: readonly P[];
}

/** Is the 4-word key at `array[at*4…]` ≤ (a, b, c, d)? */
function wordsAtMost(array: Uint32Array, at: number, a: number, b: number, c: number, d: number): boolean {
  const i = at * 4;
  if (array[i] !== a) return array[i]! < a;
  if (array[i + 1] !== b) return array[i + 1]! < b;
  if (array[i + 2] !== c) return array[i + 2]! < c;
  return array[i + 3]! <= d;
}

export class IpRangeTable<P> {
  /** @internal built by IpRangeTableBuilder */
  constructor(
    private readonly v4: Columns<P>,
    private readonly v6: Columns<P>,
  ) {}

  /** Number of disjoint ranges after merging (IPv4 + IPv6). */
  get size(): number {
    return this.v4.starts.length + this.v6.payloads.length;
  }

  lookupV4(value: number): P | undefined {
    const { starts, ends, payloads } = this.v4;
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! <= value) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && value <= ends[found]! ? payloads[found] : undefined;
  }

  lookupV6(groups: Uint16Array): P | undefined {
    const g = groups;
    if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) return this.lookupV4(g[6]! * 65536 + g[7]!);
    const a = ((g[0]! << 16) | g[1]!) >>> 0;
    const b = ((g[2]! << 16) | g[3]!) >>> 0;
    const c = ((g[4]! << 16) | g[5]!) >>> 0;
    const d = ((g[6]! << 16) | g[7]!) >>> 0;
    const { starts, ends, payloads } = this.v6;
    let lo = 0;
    let hi = payloads.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (wordsAtMost(starts, mid, a, b, c, d)) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    // The address is within the range when end ≥ address, i.e. not (end < address).
    const i = found * 4;
    const endBelow =
      ends[i] !== a ? ends[i]! < a : ends[i + 1] !== b ? ends[i + 1]! < b : ends[i + 2] !== c ? ends[i + 2]! < c : ends[i + 3]! < d;
    return endBelow ? undefined : payloads[found];
  }

  lookup(ip: ParsedIp): P | undefined {
    return ip.version === 4 ? this.lookupV4(ip.value) : this.lookupV6(ip.groups);
  }

  /** The disjoint ranges in address order (IPv4 first), for inspection and tests. */
  *ranges(): Generator<{ range: IpRange; payload: P }> {
    for (let i = 0; i < this.v4.starts.length; i++) {
      yield { range: { version: 4, start: this.v4.starts[i]!, end: this.v4.ends[i]! }, payload: this.v4.payloads[i]! };
    }
    const key = (array: Uint32Array, at: number): bigint =>
      (BigInt(array[at * 4]!) << 96n) | (BigInt(array[at * 4 + 1]!) << 64n) | (BigInt(array[at * 4 + 2]!) << 32n) | BigInt(array[at * 4 + 3]!);
    for (let i = 0; i < this.v6.payloads.length; i++) {
      yield { range: { version: 6, start: key(this.v6.starts, i), end: key(this.v6.ends, i) }, payload: this.v6.payloads[i]! };
    }
  }
}
