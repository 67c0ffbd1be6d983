// Keyword prefilter: which rule keywords occur in a text (ASCII case-insensitive), so that only the
// rules they gate run their regex. The fast path is one RE2.Set over all keywords (a single native
// DFA pass that reports which patterns matched — about twice as fast here as the JS automaton);
// if that DFA exceeds its memory budget on some input, RE2 reports it and the pure-JS Aho-Corasick
// automaton below answers instead, so a keyword is never missed silently.
import RE2 from 're2';

/** DFA budget for the keyword set (RE2's default of 8 MiB is tight for a few hundred keywords). */
const SET_MAX_MEM = 64 * 1024 * 1024;

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

export class KeywordMatcher {
  readonly keywords: readonly string[];
  private readonly set: InstanceType<typeof RE2.Set> | undefined;
  /** byte → class (0 = a byte no keyword contains). */
  private readonly byteClass: Uint8Array;
  private readonly classCount: number;
  /** (state * classCount + class) → next state * classCount (premultiplied). */
  private readonly delta: Int32Array;
  /** keyword ids ending at each state (including through failure links), CSR layout. */
  private readonly outStart: Int32Array;
  private readonly outIds: Int32Array;
  /** 1 at premultiplied states that end a keyword: the hot loop tests this and nothing else. */
  private readonly hasOut: Uint8Array;

  constructor(keywords: readonly string[]) {
    this.keywords = keywords;
    this.set = keywords.length > 0 ? new RE2.Set(keywords.map(escapeRegex), 'i', { maxMem: SET_MAX_MEM }) : undefined;
    const byteClass = new Uint8Array(256);
    let classCount = 1;
    for (const kw of keywords) {
      for (let i = 0; i < kw.length; i++) {
        const b = kw.charCodeAt(i);
        if (b > 127) throw new Error(`keyword ${JSON.stringify(kw)} is not ASCII`);
        if (byteClass[b] === 0) {
          byteClass[b] = classCount;
          if (b >= 0x61 && b <= 0x7a) byteClass[b - 0x20] = classCount; // fold A-Z onto a-z
          classCount++;
          if (classCount > 255) throw new Error('too many distinct keyword characters');
        }
      }
    }
    // Trie.
    const children: Map<number, number>[] = [new Map()];
    const ends: number[][] = [[]];
    keywords.forEach((kw, id) => {
      let s = 0;
      for (let i = 0; i < kw.length; i++) {
        const c = byteClass[kw.charCodeAt(i)]!;
        let next = children[s]!.get(c);
        if (next === undefined) {
          next = children.length;
          children.push(new Map());
          ends.push([]);
          children[s]!.set(c, next);
        }
        s = next;
      }
      ends[s]!.push(id);
    });
    const stateCount = children.length;
    const delta = new Int32Array(stateCount * classCount);
    const fail = new Int32Array(stateCount);
    const outputs: number[][] = ends.map((e) => [...e]);
    // Breadth-first: complete the goto function with failure transitions.
    const queue: number[] = [];
    for (let c = 0; c < classCount; c++) {
      const next = c === 0 ? undefined : children[0]!.get(c);
      delta[c] = next === undefined ? 0 : next;
      if (next !== undefined) queue.push(next);
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      outputs[s]!.push(...outputs[fail[s]!]!);
      for (let c = 0; c < classCount; c++) {
        const next = c === 0 ? undefined : children[s]!.get(c);
        if (next === undefined) delta[s * classCount + c] = delta[fail[s]! * classCount + c]!;
        else {
          fail[next] = delta[fail[s]! * classCount + c]!;
          delta[s * classCount + c] = next;
          queue.push(next);
        }
      }
    }
    for (let i = 0; i < delta.length; i++) delta[i] = delta[i]! * classCount;
    const outStart = new Int32Array(stateCount + 1);
    let total = 0;
    for (let s = 0; s < stateCount; s++) {
      outStart[s] = total;
      total += new Set(outputs[s]).size;
    }
    outStart[stateCount] = total;
    const outIds = new Int32Array(total);
    for (let s = 0; s < stateCount; s++) [...new Set(outputs[s])].forEach((id, i) => (outIds[outStart[s]! + i] = id));
    const hasOut = new Uint8Array(stateCount * classCount);
    for (let s = 0; s < stateCount; s++) if (outStart[s] !== outStart[s + 1]) hasOut[s * classCount] = 1;
    this.hasOut = hasOut;
    this.byteClass = byteClass;
    this.classCount = classCount;
    this.delta = delta;
    this.outStart = outStart;
    this.outIds = outIds;
  }

  /**
   * Marks in `found` (indexed by keyword id, cleared by the caller) the keywords present in
   * `bytes`; returns how many distinct ones were found.
   */
  scan(bytes: Uint8Array, found: Uint8Array): number {
    if (this.set !== undefined) {
      try {
        const ids = this.set.match(bytes);
        for (const id of ids) found[id] = 1;
        return ids.length;
      } catch {
        // DFA out of memory on this input: fall through to the automaton
      }
    }
    return this.scanAutomaton(bytes, found);
  }

  /** The Aho-Corasick pass (also used directly by tests to cross-check the RE2 set). */
  scanAutomaton(bytes: Uint8Array, found: Uint8Array): number {
    const { byteClass, delta, outStart, outIds, classCount, hasOut } = this;
    let state = 0;
    let distinct = 0;
    const n = bytes.length;
    for (let i = 0; i < n; i++) {
      state = delta[state + byteClass[bytes[i]!]!]!;
      if (hasOut[state] !== 0) {
        const s = state / classCount;
        const b = outStart[s + 1]!;
        for (let k = outStart[s]!; k < b; k++) {
          const id = outIds[k]!;
          if (found[id] === 0) {
            found[id] = 1;
            distinct++;
          }
        }
      }
    }
    return distinct;
  }
}
