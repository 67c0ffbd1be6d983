// DAST engine against the deliberately vulnerable shop (test/fixtures/web/vulnerable-shop.ts) on
// loopback, in one run:
//
//   default      at the DAST default politeness: ScanHttp at 20 requests/s, 4 requests in flight,
//                a budget of 2 000 requests, maxDepth 3 (DAST_DEFAULTS in scanners/dast/scan.ts)
//   unthrottled  the same engine with the rate limit lifted to 1 000 requests/s: the baseline the
//                default line is compared with
//   clean twin   the fixed shop, at both rates: no check stops early and nothing sleeps there, so
//                this is what covering the whole app costs in requests, and its unthrottled line is
//                the engine's own speed
//
// For each: requests, pages crawled, wall time, sustained requests/s (requests ÷ wall time, the
// timing proofs' 2 s + 1 s sleeps included) and findings; for the vulnerable shop, how many of the
// planted flaws were found.
//   npm run bench:dast     BENCH_RATE=20 BENCH_UNTHROTTLED_RATE=1000
import { DAST_DEFAULTS, scanDast } from '../scanners/dast/scan.ts';
import { ScanHttp } from '../scanners/web/http.ts';
import type { WebScanOutput } from '../scanners/web/types.ts';
import { startVulnerableShop } from '../test/fixtures/web/vulnerable-shop.ts';

const RATE = Number(process.env.BENCH_RATE ?? DAST_DEFAULTS.requestsPerSecond);
const UNTHROTTLED = Number(process.env.BENCH_UNTHROTTLED_RATE ?? 1000);

// The planted flaws (rule, path) listed in the fixture's header.
const PLANTED = [
  'dast-xss-reflected /search',
  'dast-sqli-error /products',
  'dast-sqli-boolean /orders/lookup',
  'dast-sqli-time /subscribe',
  'dast-open-redirect /go',
  'dast-path-traversal /download',
  'dast-path-traversal /files/readme.txt',
  'dast-cmdi-time /ping',
  'dast-ssti /hello',
  'dast-missing-csp /',
  'dast-missing-xfo /',
  'dast-missing-xcto /',
  'dast-cookie-flags /',
  'dast-version-banner /',
  'dast-error-disclosure /debug',
  'dast-directory-listing /files/',
  'dast-cors-misconfig /api/profile',
];

interface Run {
  label: string;
  seconds: number;
  out: WebScanOutput;
}

async function run(label: string, fixed: boolean, rate: number): Promise<Run> {
  const shop = await startVulnerableShop({ fixed });
  const http = new ScanHttp({ scope: { hosts: [new URL(shop.url).host], pathPrefixes: ['/'] }, allowPrivate: true, limits: { requestsPerSecond: rate } });
  try {
    const started = performance.now();
    const out = await scanDast({ target: `${shop.url}/` }, { http, signal: new AbortController().signal });
    const seconds = (performance.now() - started) / 1000;
    const rps = out.coverage.requests / seconds;
    console.log(
      `  ${label.padEnd(40)} ${String(out.coverage.requests).padStart(4)} requests, ${String(out.coverage.items).padStart(2)} pages, ` +
        `${seconds.toFixed(2).padStart(6)} s → ${rps.toFixed(1).padStart(6)} req/s, ${out.findings.length} findings`,
    );
    for (const note of out.coverage.notes) console.log(`      note: ${note}`);
    return { label, seconds, out };
  } finally {
    await http.close();
    await shop.close();
  }
}

console.log(`DAST of the vulnerable shop fixture (default: ${RATE} req/s, ${DAST_DEFAULTS.concurrency} in flight, maxDepth ${DAST_DEFAULTS.maxDepth}; timing proofs ${DAST_DEFAULTS.delays.long} s + ${DAST_DEFAULTS.delays.short} s)`);
const polite = await run(`vulnerable, default (${RATE} req/s)`, false, RATE);
const fast = await run(`vulnerable, unthrottled (${UNTHROTTLED} req/s)`, false, UNTHROTTLED);
const clean = await run(`clean twin, default (${RATE} req/s)`, true, RATE);
const cleanFast = await run(`clean twin, unthrottled (${UNTHROTTLED} req/s)`, true, UNTHROTTLED);

const found = new Set(polite.out.findings.map((f) => `${f.rule_id} ${new URL(f.location.url).pathname}`));
const missed = PLANTED.filter((p) => !found.has(p));
const extra = [...found].filter((f) => !PLANTED.includes(f));
const byRule = new Map<string, number>();
for (const f of polite.out.findings) byRule.set(f.rule_id, (byRule.get(f.rule_id) ?? 0) + 1);
const rps = (r: Run): number => r.out.coverage.requests / r.seconds;

console.log(`planted flaws found at default politeness: ${PLANTED.length - missed.length}/${PLANTED.length}${missed.length ? ` (missed: ${missed.join(', ')})` : ''}${extra.length ? `; not planted: ${extra.join(', ')}` : ''}`);
console.log(`findings by rule: ${[...byRule].map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`clean twin findings: ${clean.out.findings.length}`);
const ratio = (a: Run, b: Run): string => `${rps(a).toFixed(1)} vs ${rps(b).toFixed(1)} req/s (ratio ${(rps(a) / rps(b)).toFixed(2)}), wall ${a.seconds.toFixed(2)} vs ${b.seconds.toFixed(2)} s`;
console.log(`default vs unthrottled, vulnerable shop: ${ratio(polite, fast)}`);
console.log(`default vs unthrottled, clean twin:      ${ratio(clean, cleanFast)}`);
console.log(`requests to cover the app: ${polite.out.coverage.requests} on the vulnerable shop (checks stop at the first proof), ${clean.out.coverage.requests} on the clean twin (every check runs)`);
