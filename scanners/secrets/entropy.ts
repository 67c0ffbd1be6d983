// Shannon entropy of a candidate secret, in bits per character: random tokens score near
// log2(alphabet size) (≈ 5.95 for base62), words and placeholders well below.
const ascii = new Int32Array(128);

export function shannonEntropy(value: string): number {
  const n = value.length;
  if (n === 0) return 0;
  let other: Map<number, number> | undefined;
  ascii.fill(0);
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 128) ascii[c]!++;
    else {
      other ??= new Map();
      other.set(c, (other.get(c) ?? 0) + 1);
    }
  }
  let h = 0;
  for (let c = 0; c < 128; c++) {
    const k = ascii[c]!;
    if (k !== 0) {
      const p = k / n;
      h -= p * Math.log2(p);
    }
  }
  if (other) {
    for (const k of other.values()) {
      const p = k / n;
      h -= p * Math.log2(p);
    }
  }
  return h;
}
