// Recall of managed rules on a published payload set, and false positives on the benign corpus.
// Each payload is sent as the value of one query parameter (`/search?q=<payload>`, percent-encoded
// as a client would, so the gateway's decoding gives back the payload as written) through the
// engine at paranoia levels 1–4. A payload counts as detected when the engine blocks the request;
// "own" counts those where a rule of the payload's category matched (a `;cat /etc/passwd` payload
// blocked by a traversal rule is detected, but not "own").
//
//   node bin/run-ts.mjs bench/managed-rules-eval.ts [--misses N] CATEGORY=PATH...
//
// PATH is a payload file (one payload per line) or a directory (every file below it). With
// PAYLOAD_GIT_DIR set, paths are read from that bare git repository's HEAD instead of the file
// system (what `fetch` of the search tool brings). A Markdown file (`.md`) contributes the URLs it
// contains (for SSRF write-ups that list target URLs in prose and code blocks). CATEGORY is one of
// sqli, xss, traversal, cmdi, ssrf. Empty lines are skipped, and so are duplicates within a category.
//
// Example (PayloadsAllTheThings, fetched as a bare git directory):
//   PAYLOAD_GIT_DIR=/work/.mirror/swisskyrepo+PayloadsAllTheThings/repo node bin/run-ts.mjs bench/managed-rules-eval.ts \
//     "sqli=SQL Injection/Intruder" "xss=XSS Injection/Intruders" "traversal=Directory Traversal/Intruder" \
//     "traversal=File Inclusion/Intruders" "cmdi=Command Injection/Intruder" "ssrf=Server Side Request Forgery/SSRF-Cloud-Instances.md"
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RULE_DEFINITIONS } from '../schemas/managed-rules/catalogue.ts';
import { compileManagedRules, type ManagedRuleSet } from '../gateway/rules/managed/index.ts';
import { programFor } from '../gateway/rules/managed/program.ts';
import type { ParanoiaLevel } from '../schemas/managed-rules/types.ts';
import { benignRequest, buildRequest } from '../test/fixtures/shield/build-request.ts';
import { ATTACK_CATEGORIES, loadBenign, type AttackCategory } from '../test/fixtures/shield/corpus.ts';

const LEVELS: readonly ParanoiaLevel[] = [1, 2, 3, 4];
const GIT_DIR = process.env.PAYLOAD_GIT_DIR;

function usage(message: string): never {
  console.error(`${message}\nusage: managed-rules-eval.ts [--misses N] CATEGORY=PATH... (categories: ${ATTACK_CATEGORIES.join(', ')}; PAYLOAD_GIT_DIR to read from a bare git repository)`);
  process.exit(2);
}

const git = (...args: string[]): string => execFileSync('git', [`--git-dir=${GIT_DIR}`, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });

/** Files under a path (itself when it is a file). */
function filesOf(path: string): string[] {
  if (GIT_DIR) {
    const type = git('cat-file', '-t', `HEAD:${path}`).trim();
    if (type === 'blob') return [path];
    return git('ls-tree', '-r', '--name-only', 'HEAD', '--', path).split('\n').filter(Boolean).sort();
  }
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

const readText = (file: string): string => (GIT_DIR ? git('show', `HEAD:${file}`) : readFileSync(file, 'utf8'));

const URL_IN_TEXT = /\b(?:https?|gopher|dict|ftp|file|ldap|tftp):\/\/[^\s`'"<>)|]+/g;

/** A URL as prose quotes it: without trailing punctuation or a `]` that closes Markdown, not the URL. */
function trimUrl(url: string): string {
  let out = url.replace(/[.,;:]+$/, '');
  while (out.endsWith(']') && (out.match(/\[/g)?.length ?? 0) < (out.match(/\]/g)?.length ?? 0)) out = out.slice(0, -1);
  return out;
}

function payloadsOf(file: string): string[] {
  const text = readText(file);
  if (file.endsWith('.md')) return [...text.matchAll(URL_IN_TEXT)].map((m) => trimUrl(m[0]));
  return text.split(/\r?\n/).filter((line) => line.trim() !== '');
}

// --- arguments ---------------------------------------------------------------------------------
const args = process.argv.slice(2);
let showMisses = 0;
const sources: { category: AttackCategory; path: string }[] = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  if (arg === '--misses') {
    showMisses = Number(args[++i]);
    continue;
  }
  const eq = arg.indexOf('=');
  const category = arg.slice(0, eq) as AttackCategory;
  if (eq < 0 || !ATTACK_CATEGORIES.includes(category)) usage(`bad argument ${JSON.stringify(arg)}`);
  sources.push({ category, path: arg.slice(eq + 1) });
}
if (sources.length === 0) usage('no payload files given');

const payloads = new Map<AttackCategory, { payload: string; file: string }[]>();
const files: string[] = [];
for (const { category, path } of sources) {
  const list = payloads.get(category) ?? [];
  const seen = new Set(list.map((p) => p.payload));
  for (const file of filesOf(path)) {
    files.push(`${category}: ${file}`);
    for (const payload of payloadsOf(file)) {
      if (seen.has(payload)) continue;
      seen.add(payload);
      list.push({ payload, file });
    }
  }
  payloads.set(category, list);
}

// --- evaluation --------------------------------------------------------------------------------
const engines = new Map<ParanoiaLevel, ManagedRuleSet>(LEVELS.map((level) => [level, compileManagedRules({ enabled: true, paranoia_level: level, exclusions: [] }, true)!]));
const percent = (n: number, of: number): string => (of === 0 ? '    -' : `${((100 * n) / of).toFixed(1).padStart(5)}`);

console.log(`payload files${GIT_DIR ? ` (from ${GIT_DIR} at ${git('rev-parse', 'HEAD').trim()})` : ''}:`);
for (const file of files) console.log(`  ${file}`);
console.log('\nrecall: % of payloads blocked (own: % matched by a rule of their category)');
console.log(`  ${'category'.padEnd(10)} ${'payloads'.padStart(8)}  ${LEVELS.map((l) => `PL${l} blocked / own`.padStart(20)).join('')}`);
const missesAtOne = new Map<AttackCategory, { payload: string; file: string }[]>();
for (const [category, list] of payloads) {
  const cells: string[] = [];
  for (const level of LEVELS) {
    let blocked = 0;
    let own = 0;
    for (const entry of list) {
      const request = buildRequest({ path: '/search', query: `q=${encodeURIComponent(entry.payload)}` });
      const hit = engines.get(level)!.match(request);
      if (hit) blocked++;
      const value = request.fields[0]?.value ?? '';
      const ids = programFor(level).targets.value.evaluateFully(value).map((i) => RULE_DEFINITIONS[i]!.id);
      if (ids.some((id) => id.startsWith(`${category}.`))) own++;
      else if (level === 1 && !hit) (missesAtOne.get(category) ?? missesAtOne.set(category, []).get(category)!).push(entry);
    }
    cells.push(`${percent(blocked, list.length)} % / ${percent(own, list.length)} %`.padStart(20));
  }
  console.log(`  ${category.padEnd(10)} ${String(list.length).padStart(8)}  ${cells.join('')}`);
}

const benign = loadBenign();
console.log(`\nbenign corpus (test/fixtures/shield/benign, ${benign.length} inputs): % flagged`);
console.log(`  ${LEVELS.map((level) => {
  const flagged = benign.filter((entry) => engines.get(level)!.match(benignRequest(entry)) !== null).length;
  return `PL${level} ${percent(flagged, benign.length).trim()} % (${flagged})`;
}).join('   ')}`);

if (showMisses > 0) {
  console.log(`\nmisses at PL1 (first ${showMisses} per category):`);
  for (const [category, list] of missesAtOne) {
    console.log(`  ${category} (${list.length}):`);
    for (const entry of list.slice(0, showMisses)) console.log(`    ${JSON.stringify(entry.payload).slice(0, 160)}`);
  }
}
