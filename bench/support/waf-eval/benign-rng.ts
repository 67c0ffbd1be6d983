// Seeded randomness for the benign corpus: every choice (texts, templates, cookies, ids) comes from
// here, so two runs build byte-identical requests. sfc32 seeded by a string hash; no Math.random.

/** 128-bit string hash (cyrb128) giving four seed words for sfc32. */
function seedWords(seed: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < seed.length; i++) {
    const k = seed.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  return [(h1 ^ h2 ^ h3 ^ h4) >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    [this.a, this.b, this.c, this.d] = seedWords(seed);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** One of `items`, chosen with probability proportional to its weight. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return (items[items.length - 1] as readonly [T, number])[0];
  }

  /** A new array in a shuffled order (Fisher–Yates). */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  }

  hex(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += '0123456789abcdef'[this.int(16)];
    return s;
  }

  alnum(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += ALNUM[this.int(ALNUM.length)];
    return s;
  }

  digits(length: number): string {
    let s = String(this.range(1, 9));
    for (let i = 1; i < length; i++) s += String(this.int(10));
    return s;
  }

  uuid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[this.int(4)]}${h.slice(17, 20)}-${h.slice(20)}`;
  }

  /** A Unix time in 2024–2025, for cookies and form tokens. */
  unixTime(): number {
    return 1704067200 + this.int(2 * 365 * 86400);
  }
}

/**
 * Hands out a list's items in a shuffled order, reshuffling once all have been used, so a generator
 * covers its whole text pool evenly instead of repeating a few lucky picks.
 */
export class Deck<T> {
  private order: T[] = [];
  private at = 0;

  constructor(
    private readonly rng: Rng,
    private readonly items: readonly T[],
  ) {}

  get size(): number {
    return this.items.length;
  }

  draw(): T {
    if (this.items.length === 0) throw new Error('draw from an empty deck');
    if (this.at >= this.order.length) {
      this.order = this.rng.shuffled(this.items);
      this.at = 0;
    }
    return this.order[this.at++] as T;
  }

  /** The first drawn item that passes `fits` (by size, say), within `tries` draws. */
  drawFitting(fits: (item: T) => boolean, tries = 30): T | null {
    for (let i = 0; i < tries; i++) {
      const item = this.draw();
      if (fits(item)) return item;
    }
    return null;
  }
}
