// Decides, from a file's text alone, which rules could match it, so that files no rule can match
// are never parsed (parsing is most of a scan's cost). A rule needs identifier-like words to be
// present — every concrete segment of one of its callee/member patterns, a property key, or an
// identifier matching a name regex; a taint rule needs one of its sources and one of its sinks.
// Words are collected from the whole text, strings and comments included, so the test can only
// err towards parsing.
import type { Need, RuleSet } from './rules.ts';

// ASCII character classes: 1 starts a word, 2 continues one. A hand-written loop is about 1.4×
// faster than a global regular expression here (no match objects).
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_$]/.test(ch)) CLASS[c] = 1;
  else if (/[0-9]/.test(ch)) CLASS[c] = 2;
}

/** The distinct ASCII identifier-like words of a text (number-led tokens left out). */
export function identifiers(text: string): Set<string> {
  const out = new Set<string>();
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    const kind = c < 128 ? CLASS[c]! : 0;
    if (kind === 0) {
      i++;
      continue;
    }
    const start = i++;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d >= 128 || CLASS[d] === 0) break;
      i++;
    }
    if (kind === 1) out.add(text.slice(start, i));
  }
  return out;
}

function met(needs: readonly Need[], words: Set<string>, cache: Map<RegExp, boolean>): boolean {
  for (const need of needs) {
    if ('words' in need) {
      if (need.words.every((w) => words.has(w))) return true;
    } else {
      let hit = cache.get(need.identifier);
      if (hit === undefined) {
        hit = false;
        for (const w of words) {
          if (need.identifier.test(w)) {
            hit = true;
            break;
          }
        }
        cache.set(need.identifier, hit);
      }
      if (hit) return true;
    }
  }
  return false;
}

export interface ActiveRules {
  /** Bit per taint rule. */
  taint: bigint;
  /** Bit per taint rule whose sources appear (its sinks may be in another module). */
  sources: bigint;
  /** Per pattern rule. */
  patterns: boolean[];
  any: boolean;
}

export function activeRules(rules: RuleSet, text: string): ActiveRules {
  const words = identifiers(text);
  const cache = new Map<RegExp, boolean>();
  let taint = 0n;
  let sources = 0n;
  const t = rules.taint;
  for (let i = 0; i < t.rules.length; i++) {
    if (!met(t.sourceNeeds[i]!, words, cache)) continue;
    sources |= 1n << BigInt(i);
    if (met(t.sinkNeeds[i]!, words, cache)) taint |= 1n << BigInt(i);
  }
  const patterns = rules.patterns.needs.map((needs) => met(needs, words, cache));
  return { taint, sources, patterns, any: taint !== 0n || patterns.some(Boolean) };
}

/** Bit per taint rule one of whose sinks could be in the text (used for modules a file imports). */
export function sinkRules(rules: RuleSet, text: string): bigint {
  const words = identifiers(text);
  const cache = new Map<RegExp, boolean>();
  let mask = 0n;
  const t = rules.taint;
  for (let i = 0; i < t.rules.length; i++) if (met(t.sinkNeeds[i]!, words, cache)) mask |= 1n << BigInt(i);
  return mask;
}
