// Micro-benchmark of managed rules (gateway/rules/managed/): microseconds per request for
// benign and attack traffic, measured on InspectedRequest objects whose fields are already
// collected (the gateway collects them for every rule kind; this is the managed rules' own cost).
//
//   node bin/run-ts.mjs bench/managed-rules.ts        BENCH_ROUNDS=5 BENCH_MIN_MS=300
//
// Budget: the gateway does ~11k requests/s on 2 cores, ≈ 180 µs of CPU per request; managed rules
// may cost at most 25 % of throughput (t / (t + m) ≥ 0.75), so m ≤ 60 µs per request — the aim is a
// few µs for typical requests.
//
// "memo warm" repeats identical requests (the per-target memo answers headers, paths and repeated
// values); "memo cold" runs every request once with every value, path and header made unique, as an
// attacker spraying random values would (the worst case).
import type { InspectedRequest } from '../gateway/inspected-request.ts';
import { compileManagedLevels, compileManagedRules, PASSES_EVERY_LEVEL, type ManagedRuleSet } from '../gateway/rules/managed/index.ts';
import { benignRequest, buildRequest, queryWithValue } from '../test/fixtures/shield/build-request.ts';
import { ATTACK_CATEGORIES, loadAttacks, loadBenign } from '../test/fixtures/shield/corpus.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MIN_MS = Number(process.env.BENCH_MIN_MS ?? 300);

const rules = (level: number): ManagedRuleSet => compileManagedRules({ enabled: true, paranoia_level: level, exclusions: [] }, true)!;

/**
 * Level 1 as a gateway that records traffic runs it (gateway/traffic/): screened by level 4, then
 * judged at every level for the record; matches when some level does. Compare with PL1's rows.
 */
function everyLevel(): ManagedRuleSet {
  const levels = compileManagedLevels({ enabled: true, paranoia_level: 1, exclusions: [] }, true)!;
  const hit = { ruleId: 'some level', score: 0, signals: [] };
  return { match: (request) => (levels.rules.match(request) !== null || levels.judge([request]) !== PASSES_EVERY_LEVEL ? hit : null) };
}

/**
 * Median over rounds of µs per request. `warm`: the round's requests are run again and again for
 * MIN_MS (the memo answers repeats); `cold`: every request of the round is run once, and every
 * round has new ones, so nothing is answered from the memo.
 */
function measure(set: ManagedRuleSet, make: () => InspectedRequest[], mode: 'warm' | 'cold'): { us: number; hits: number; size: number } {
  const results: number[] = [];
  let hits = 0;
  let size = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const requests = make();
    size = requests.length;
    let count = 0;
    hits = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    do {
      for (const request of requests) if (set.match(request)) hits++;
      count += requests.length;
      elapsed = Number(process.hrtime.bigint() - start);
    } while (mode === 'warm' && elapsed < MIN_MS * 1e6);
    results.push(elapsed / 1e3 / count);
    hits = Math.round((hits * requests.length) / count);
  }
  results.sort((a, b) => a - b);
  return { us: results[Math.floor(results.length / 2)]!, hits, size };
}

const GET = () =>
  buildRequest({
    path: '/search',
    query: 'q=running+shoes&page=2&sort=price_asc',
    headers: { cookie: '_ga=GA1.2.1234567890.1700000000; session=s%3AJ7xW2kq9b1.Zz8V4f1q3Xk', referer: 'https://www.google.com/', accept: 'text/html' },
  });
const POST = () =>
  buildRequest({
    path: '/api/orders',
    json: JSON.stringify({ items: [{ sku: 'ABC-123', qty: 2 }, { sku: 'XYZ-9', qty: 1 }], note: 'Leave at the door, thanks!', email: 'jane@example.com', coupon: 'SPRING-25' }),
    headers: { cookie: 'session=s%3AJ7xW2kq9b1.Zz8V4f1q3Xk', referer: 'https://shop.example.com/cart' },
  });

const benign = loadBenign();
const attacks = ATTACK_CATEGORIES.flatMap((c) => loadAttacks(c));
let unique = 0;
/** A value no memo has seen: the entry's text with a fresh number (which keeps inert text inert). */
const fresh = (text: string) => `${text} ${++unique}`;
/**
 * A fresh suffix canonicalisation removes (zero-width space and non-joiner as the bits of a
 * counter): the payload means what it meant, but no memo has seen the text.
 */
const invisible = (): string => [...(++unique).toString(2)].map((bit) => (bit === '0' ? '%E2%80%8C' : '%E2%80%8B')).join('');

const uniqueEntry = (e: (typeof benign)[number]) =>
  benignRequest({ ...e, text: e.kind === 'json' ? e.text.replace(/"}/, ` ${++unique}"}`) : e.kind === 'path' ? `${e.text}/${++unique}` : fresh(e.text) });
const COLD = 20;

const cases: { name: string; level: number | 'record'; mode: 'warm' | 'cold'; make: () => InspectedRequest[] }[] = [
  { name: 'benign GET, 3 params + 2 cookies + UA + referer', level: 1, mode: 'warm', make: () => Array.from({ length: 100 }, GET) },
  { name: 'benign GET, every value unique', level: 1, mode: 'cold', make: () => Array.from({ length: 20000 }, () => buildRequest({ path: `/search/${++unique}`, query: `q=${encodeURIComponent(fresh("it's running shoes"))}&page=${++unique}&sort=price_asc`, headers: { cookie: `_ga=GA1.2.${++unique}.1700000000; session=s%3A${++unique}`, referer: `https://www.google.com/?q=${++unique}`, 'user-agent': `Mozilla/5.0 (X11; Linux x86_64) Chrome/${++unique}.0 Safari/537.36` } })) },
  { name: 'benign POST, small JSON order', level: 1, mode: 'warm', make: () => Array.from({ length: 100 }, POST) },
  { name: 'benign POST, every value unique', level: 1, mode: 'cold', make: () => Array.from({ length: 20000 }, () => buildRequest({ path: '/api/orders', json: JSON.stringify({ items: [{ sku: fresh('ABC'), qty: 2 }], note: fresh('Leave at the door, thanks!'), email: `jane${++unique}@example.com` }) })) },
  { name: 'benign corpus, every entry', level: 1, mode: 'warm', make: () => benign.map(benignRequest) },
  { name: 'benign corpus, every entry made unique', level: 1, mode: 'cold', make: () => Array.from({ length: COLD }, () => benign.map(uniqueEntry)).flat() },
  { name: 'attack corpus, every payload made unique', level: 1, mode: 'cold', make: () => Array.from({ length: COLD }, () => attacks.map((a) => buildRequest({ path: '/search', query: queryWithValue(`${a.payload}${invisible()}`) }))).flat() },
  { name: 'benign GET, 3 params + 2 cookies + UA + referer', level: 4, mode: 'warm', make: () => Array.from({ length: 100 }, GET) },
  { name: 'benign corpus, every entry made unique', level: 4, mode: 'cold', make: () => Array.from({ length: COLD }, () => benign.map(uniqueEntry)).flat() },
  // Level 1 with the traffic record on: every request judged at level 4, and at 1–3 those level 4 flags.
  { name: 'benign GET, 3 params + 2 cookies + UA + referer', level: 'record', mode: 'warm', make: () => Array.from({ length: 100 }, GET) },
  { name: 'benign corpus, every entry made unique', level: 'record', mode: 'cold', make: () => Array.from({ length: COLD }, () => benign.map(uniqueEntry)).flat() },
];

console.log(`managed rules micro-benchmark — median of ${ROUNDS} rounds of ≥ ${MIN_MS} ms, Node ${process.version}`);
for (const c of cases) {
  const set = c.level === 'record' ? everyLevel() : rules(c.level);
  measure(set, c.make, c.mode); // warm-up: JIT, program compilation
  const { us, hits, size } = measure(set, c.make, c.mode);
  console.log(`  ${(c.level === 'record' ? 'PL1 recorded' : `PL${c.level}`).padEnd(12)}  ${`${c.name} (memo ${c.mode})`.padEnd(62)} ${us.toFixed(2).padStart(7)} µs/request  (${hits} of ${size} matched)`);
}
