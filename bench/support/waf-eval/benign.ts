// The benign corpus for measuring a WAF's false positives: about 60 000 requests that place public
// texts (a programming book, multilingual docs, a play, a word list, a shop's categories and stores,
// API fixtures, .gitignore templates) the way real sites receive them. Texts are used as written;
// only their placement is generated, from seeded randomness, so every run builds the same requests.
//
//   node bin/run-ts.mjs bench/support/waf-eval/benign.ts --stats [--mirrors DIR]
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expressDocsRequests } from './benign-express.ts';
import { gitignoreRequests } from './benign-gitignore.ts';
import { Rng } from './benign-rng.ts';
import { rustBookRequests } from './benign-rust-book.ts';
import { shakespeareRequests } from './benign-shakespeare.ts';
import { shopRequests } from './benign-shop.ts';
import { stripeRequests } from './benign-stripe.ts';
import { wordRequests } from './benign-words.ts';
import type { EvalRequest } from './types.ts';

export const DEFAULT_MIRRORS = '/work/.mirror';

/** Requests per source: none above 40 % of the total, with a missing source simply absent. */
const SOURCES: readonly [(mirrors: string, count: number) => EvalRequest[], number][] = [
  [rustBookRequests, 10_000],
  [expressDocsRequests, 10_000],
  [shakespeareRequests, 9_000],
  [wordRequests, 8_000],
  [shopRequests, 9_000],
  [stripeRequests, 7_000],
  [gitignoreRequests, 7_000],
];

/** The benign corpus from the bare mirrors under `mirrors` (`<owner>+<name>/repo`), in a fixed interleaved order. */
export function benignRequests(mirrors: string = DEFAULT_MIRRORS): EvalRequest[] {
  const all = SOURCES.flatMap(([build, count]) => build(mirrors, count));
  // Interleaved so that any prefix of the corpus mixes all sources.
  return new Rng('benign:order').shuffled(all);
}

function countBy(requests: readonly EvalRequest[], key: (r: EvalRequest) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
  return [...counts].sort((a, b) => a[0].localeCompare(b[0]));
}

function printStats(requests: readonly EvalRequest[]): void {
  const total = requests.length;
  const line = ([k, n]: [string, number]): string => `  ${k.padEnd(58)} ${String(n).padStart(6)}  ${((100 * n) / total).toFixed(1).padStart(5)} %`;
  console.log(`total ${total}`);
  console.log('\nper source:');
  countBy(requests, (r) => r.source.split(':')[0] as string).forEach((e) => console.log(line(e)));
  console.log('\nper placement:');
  countBy(requests, (r) => r.placement).forEach((e) => console.log(line(e)));
  console.log('\nper encoding:');
  countBy(requests, (r) => r.encoding).forEach((e) => console.log(line(e)));
  console.log('\nper source and placement:');
  countBy(requests, (r) => `${r.source} ${r.placement}`).forEach((e) => console.log(line(e)));
  const bodies = requests.map((r) => (r.body === undefined ? 0 : Buffer.byteLength(r.body)));
  const targets = requests.map((r) => r.target.length);
  console.log(`\nlargest body ${Math.max(...bodies)} bytes, mean ${Math.round(bodies.reduce((a, b) => a + b, 0) / total)}; longest target ${Math.max(...targets)} chars`);
  console.log(`digest ${createHash('sha256').update(JSON.stringify(requests)).digest('hex').slice(0, 16)} (equal across runs)`);
  console.log('\nsamples:');
  const step = Math.max(1, Math.floor(total / 10));
  for (let i = 0; i < total && i < step * 10; i += step) {
    const r = requests[i] as EvalRequest;
    console.log(`\n# ${r.source} placement=${r.placement} encoding=${r.encoding}`);
    console.log(`${r.method} ${r.target.length > 300 ? r.target.slice(0, 300) + '…' : r.target}`);
    for (const [k, v] of Object.entries(r.headers)) console.log(`${k}: ${v.length > 200 ? v.slice(0, 200) + '…' : v}`);
    if (r.body !== undefined) {
      const body = r.body.toString();
      console.log(`\n${body.length > 500 ? body.slice(0, 500) + '…' : body}`);
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--mirrors');
  const mirrors = at >= 0 && args[at + 1] ? args[at + 1] : DEFAULT_MIRRORS;
  const requests = benignRequests(mirrors);
  if (args.includes('--stats')) printStats(requests);
  else console.log(`${requests.length} benign requests (use --stats for a breakdown)`);
}
