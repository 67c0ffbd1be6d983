// Detection quality of the secrets and SAST scanners against peer tools, on public labelled corpora,
// all tools in the same run on the same files: recall, findings count, false positives where the
// labels make them known, and time. Aegis's scanners run in-process (scanSecrets / scanSast, built-in
// rules), and so do the peers (secretlint's and ESLint's Node APIs); each time is the wall time of one
// run from loading rules or config to findings in memory, the files already in the page cache; each
// tool runs BENCH_ROUNDS times (default 2) and its fastest run counts (the first pays for warming up).
//
// Secrets — the Leaky Repo (github.com/Plazmaz/leaky-repo) against secretlint with its recommended
// preset (@secretlint/secretlint-rule-preset-recommend). Labels: its `.leaky-meta/secrets.csv`
// (`path,num_risk,num_informative`), scored exactly as its `.leaky-meta/benchmark.py` scores: per
// labelled file expected = risk + informative, found = the tool's findings in that file, false
// positives = max(found − expected, 0), true finds = found − false positives; recall = true finds /
// expected, summed over the labelled files. Beyond benchmark.py, every finding in a file the CSV does
// not list counts as a false positive too ("FP unlabelled"). `.leaky-meta/` (the labels, the scoring
// script, other tools' reports) is left out of the scan for every tool.
//
// SAST — OWASP Juice Shop (github.com/juice-shop/juice-shop) against ESLint 9 with the maintained
// security plugins (eslint-plugin-security, @microsoft/eslint-plugin-sdl, eslint-plugin-no-unsanitized;
// configs in bench/support/scan-quality-eslint.ts), each alone, the three together, Aegis, and Aegis ∪
// the three. Labels: lines carrying the comment `vuln-code-snippet vuln-line` (Juice Shop marks the
// vulnerable lines of its coding challenges so). A label is hit when a finding's reported range covers
// the line (start ≤ line ≤ end, or the same line when the tool gives no end). Findings = everything a
// tool reports on the scanned files; false positives are not known here (most findings are on lines
// the labels say nothing about). Scanned, by every tool: .js/.ts/.mjs/.cjs outside frontend/, and
// frontend/src/**/*.ts — leaving out node_modules, dist, build, coverage and test directories (test,
// tests, __tests__, cypress, e2e), *.spec.* / *.test.* / *.d.ts / *.min.js / test-setup.*, and
// data/static/codefixes/ (alternative versions of the challenge snippets, fixed and unfixed, that the
// app shows in its coding challenges, not code it runs).
// Target (issue): Aegis's recall ≥ that of the three plugins together, with ≤ 1/4 of their findings.
//
//   [BENCH_ROUNDS=2] npm run bench:scan-quality [-- --misses] [--only secrets|sast]
//       [--secrets-labels FILE] [--sast-marker TEXT]
//
// The corpora are public repositories fetched beside the project, never committed: by default the
// bare git directories /work/.mirror/Plazmaz+leaky-repo/repo and /work/.mirror/juice-shop+juice-shop/repo
// (read at HEAD with `git archive`); SECRETS_CORPUS and SAST_CORPUS point elsewhere (a checkout or a
// bare clone). A missing corpus is named, with how to get it, and the bench exits 2. Other corpora plug
// in with their labels: --secrets-labels FILE (same CSV format; relative to the current directory, else
// to the corpus; default .leaky-meta/secrets.csv in the corpus) and --sast-marker TEXT (the comment
// marking a vulnerable line). --misses lists, per file, the labels Aegis missed and which peer hit them
// (and, for secrets, Aegis's findings in unlabelled files).
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { runAegisSast, runAegisSecrets, type AegisRun } from './support/scan-quality-aegis.ts';
import { cleanupTemporaries, howToGet, listFiles, makeView, MissingCorpus, openCorpus, type Corpus, type CorpusSpec } from './support/scan-quality-corpus.ts';
import { ESLINT_PLUGINS, runEslint, type EslintPlugin, type EslintRun } from './support/scan-quality-eslint.ts';
import { LabelError, markerLabels, parseSecretsCsv, type LineLabel } from './support/scan-quality-labels.ts';
import { hitCount, hitsByLabel, labelKey, scoreSecrets, type SecretsScore, type ToolFinding } from './support/scan-quality-score.ts';
import { runSecretlint, SECRETLINT_PRESET } from './support/scan-quality-secretlint.ts';

const SECRETS_CORPUS: CorpusSpec = { name: 'secrets', env: 'SECRETS_CORPUS', defaultPath: '/work/.mirror/Plazmaz+leaky-repo/repo', repo: 'Plazmaz/leaky-repo' };
const SAST_CORPUS: CorpusSpec = { name: 'SAST', env: 'SAST_CORPUS', defaultPath: '/work/.mirror/juice-shop+juice-shop/repo', repo: 'juice-shop/juice-shop' };
const DEFAULT_SECRETS_LABELS = '.leaky-meta/secrets.csv';
const SECRETS_EXCLUDED_DIR = '.leaky-meta/';
const DEFAULT_SAST_MARKER = 'vuln-code-snippet vuln-line';
const TARGET_FINDINGS_RATIO = 0.25;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));

/** Runs a tool ROUNDS times and keeps the fastest run (the first pays for warming up; findings do not change). */
async function fastest<T extends { ms: number }>(run: () => Promise<T>): Promise<T> {
  let best = await run();
  for (let i = 1; i < ROUNDS; i++) {
    const next = await run();
    if (next.ms < best.ms) best = next;
  }
  return best;
}

// --- arguments ---------------------------------------------------------------------------------
function usage(message: string): never {
  console.error(`${message}\nusage: scan-quality.ts [--misses] [--only secrets|sast] [--secrets-labels FILE] [--sast-marker TEXT]`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      misses: { type: 'boolean', default: false },
      only: { type: 'string' },
      'secrets-labels': { type: 'string' },
      'sast-marker': { type: 'string', default: DEFAULT_SAST_MARKER },
    },
    strict: true,
    allowPositionals: false,
  });
} catch (err) {
  usage((err as Error).message);
}
const opts = parsed.values;
if (opts.only !== undefined && opts.only !== 'secrets' && opts.only !== 'sast') usage(`--only must be secrets or sast, not ${opts.only}`);
const runSecrets = opts.only !== 'sast';
const runSastPart = opts.only !== 'secrets';
const marker = opts['sast-marker'];
if (marker.trim() === '') usage('--sast-marker must not be empty');

// --- output helpers ----------------------------------------------------------------------------
const pct = (n: number, d: number): string => (d === 0 ? '—' : `${((100 * n) / d).toFixed(1)}%`);
const ms = (n: number): string => Math.round(n).toLocaleString('en-US');

/** A plain-text table: first column left-aligned, the others right-aligned. */
function printTable(head: readonly string[], rows: ReadonlyArray<readonly string[]>): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(`  ${line(head)}`);
  console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const r of rows) console.log(`  ${line(r)}`);
}

function topRules(findings: readonly ToolFinding[], n = 8): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.rule, (counts.get(f.rule) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = sorted.slice(0, n).map(([rule, count]) => `${rule} ${count}`);
  if (sorted.length > n) shown.push(`… ${sorted.length - n} more rules`);
  return shown.join(', ') || 'none';
}

const skippedText = (run: AegisRun): string => [...run.skipped].map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';
const timeHead = ROUNDS > 1 ? `time ms (best of ${ROUNDS})` : 'time ms';
const describe = (c: Corpus): string => `${c.source}${c.commit ? ` @ ${c.commit.slice(0, 12)}` : ''}`;

// --- secrets -----------------------------------------------------------------------------------
function secretsLabelsPath(corpus: Corpus): string {
  const asked = opts['secrets-labels'];
  if (asked === undefined) return join(corpus.root, DEFAULT_SECRETS_LABELS);
  const here = resolve(asked);
  return existsSync(here) ? here : join(corpus.root, asked);
}

async function secretsPart(corpus: Corpus): Promise<void> {
  const labelsPath = secretsLabelsPath(corpus);
  if (!existsSync(labelsPath)) throw new LabelError(`secrets labels not found: ${labelsPath} (give --secrets-labels FILE, path,num_risk,num_informative per line)`);
  const labels = parseSecretsCsv(readFileSync(labelsPath, 'utf8'), labelsPath);
  const labelsInCorpus = relative(corpus.root, labelsPath).split(sep).join('/');
  const files = listFiles(corpus.root).filter((f) => !f.startsWith(SECRETS_EXCLUDED_DIR) && f !== labelsInCorpus);
  const view = makeView('secrets', corpus.root, files);
  const expected = labels.reduce((a, l) => a + l.risk + l.informative, 0);

  console.log(`Secrets — ${describe(corpus)}`);
  console.log(`  ${files.length} files scanned (${SECRETS_EXCLUDED_DIR} left out); ${labels.length} labelled files, ${expected} expected finds (${labelsPath === join(corpus.root, DEFAULT_SECRETS_LABELS) ? DEFAULT_SECRETS_LABELS : labelsPath})`);

  const aegis = await fastest(() => runAegisSecrets(view));
  const secretlint = await fastest(() => runSecretlint(view, files));
  const rows: Array<{ tool: string; score: SecretsScore; ms: number; findings: ToolFinding[] }> = [
    { tool: 'Aegis secrets', score: scoreSecrets(labels, aegis.findings), ms: aegis.ms, findings: aegis.findings },
    { tool: 'secretlint (preset-recommend)', score: scoreSecrets(labels, secretlint.findings), ms: secretlint.ms, findings: secretlint.findings },
  ];
  console.log();
  printTable(
    ['tool', 'recall', 'true finds', 'files covered', 'findings', 'FP labelled', 'FP unlabelled', 'FP total', timeHead],
    rows.map(({ tool, score: s, ms: t }) => [
      tool,
      pct(s.trueFinds, s.expected),
      `${s.trueFinds}/${s.expected}`,
      `${s.filesCovered}/${s.files}`,
      String(s.findings),
      String(s.labelledFalsePositives),
      String(s.unlabelledFalsePositives),
      String(s.labelledFalsePositives + s.unlabelledFalsePositives),
      ms(t),
    ]),
  );
  console.log();
  for (const r of rows) console.log(`  ${r.tool} by rule: ${topRules(r.findings)}`);
  console.log(`  Aegis skipped: ${skippedText(aegis)}`);

  if (opts.misses) {
    const [a, p] = [rows[0]!.score, rows[1]!.score];
    const peer = new Map(p.perFile.map((f) => [f.path, f]));
    const rulesIn = (findings: readonly ToolFinding[], path: string): string =>
      [...new Set(findings.filter((f) => f.path === path).map((f) => f.rule))].join(', ');
    const short = a.perFile.filter((f) => f.found - f.falsePositives < f.expected).sort((x, y) => (x.path < y.path ? -1 : 1));
    console.log(`\n  Aegis short of the expected count (${short.length} of ${a.files} labelled files):`);
    for (const f of short) {
      const s = peer.get(f.path);
      console.log(`    ${f.path}: expected ${f.expected}, Aegis ${f.found}${f.found ? ` (${rulesIn(aegis.findings, f.path)})` : ''}; secretlint ${s?.found ?? 0}${s?.found ? ` (${rulesIn(secretlint.findings, f.path)})` : ''}`);
    }
    const over = a.perFile.filter((f) => f.falsePositives > 0);
    if (over.length > 0) {
      console.log(`  Aegis over the expected count (false positives by benchmark.py):`);
      for (const f of over) console.log(`    ${f.path}: expected ${f.expected}, Aegis ${f.found} (${rulesIn(aegis.findings, f.path)})`);
    }
    console.log(`  Aegis findings in unlabelled files (${a.unlabelledFalsePositives}):`);
    for (const u of a.unlabelled) console.log(`    ${u.path}: ${u.found} (${rulesIn(aegis.findings, u.path)})`);
    console.log(`  secretlint findings in unlabelled files (${p.unlabelledFalsePositives}): ${p.unlabelled.map((u) => `${u.path} ${u.found}`).join(', ') || 'none'}`);
  }
  console.log(`  (secretlint: ${SECRETLINT_PRESET}; FP unlabelled = findings in files the labels do not list, not counted by benchmark.py)\n`);
}

// --- SAST --------------------------------------------------------------------------------------
const SAST_SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/i;
const SAST_EXCLUDED_DIRS: ReadonlySet<string> = new Set(['node_modules', 'dist', 'build', 'coverage', '.git', 'test', 'tests', '__tests__', 'cypress', 'e2e']);
const SAST_EXCLUDED_PREFIXES: readonly string[] = ['data/static/codefixes/'];
const SAST_TEST_OR_GENERATED = /\.(?:spec|test)\.[cm]?[jt]sx?$|\.d\.[cm]?ts$|[.-]min\.[cm]?js$|(?:^|\/)test-setup\.[cm]?[jt]s$/i;

function isSastFile(path: string): boolean {
  const dirs = path.split('/').slice(0, -1);
  if (dirs.some((d) => SAST_EXCLUDED_DIRS.has(d))) return false;
  if (SAST_EXCLUDED_PREFIXES.some((p) => path.startsWith(p))) return false;
  if (SAST_TEST_OR_GENERATED.test(path)) return false;
  if (dirs[0] === 'frontend') return path.startsWith('frontend/src/') && path.endsWith('.ts');
  return SAST_SOURCE.test(path);
}

interface SastRow {
  tool: string;
  hits: Map<string, ToolFinding[]>;
  findings: number;
  ms: number;
}

async function sastPart(corpus: Corpus): Promise<void> {
  const files = listFiles(corpus.root).filter(isSastFile);
  const view = makeView('sast', corpus.root, files);
  const labels = markerLabels(view, files, marker);
  const frontend = files.filter((f) => f.startsWith('frontend/')).length;
  console.log(`SAST — ${describe(corpus)}`);
  console.log(`  ${files.length} files scanned (${files.length - frontend} server, ${frontend} frontend/src); ${labels.length} labelled lines in ${new Set(labels.map((l) => l.path)).size} files (marker "${marker}")`);
  if (labels.length === 0) console.log(`  no line carries the marker in a comment: recall is not measured`);

  const aegis = await fastest(() => runAegisSast(view));
  const eslintRuns = new Map<EslintPlugin | 'all', EslintRun>();
  for (const plugin of ESLINT_PLUGINS) eslintRuns.set(plugin, await fastest(() => runEslint(view, files, [plugin])));
  const all = await fastest(() => runEslint(view, files, ESLINT_PLUGINS));
  eslintRuns.set('all', all);

  const NAMES: Record<EslintPlugin, string> = { security: 'ESLint + security', sdl: 'ESLint + @microsoft/sdl', 'no-unsanitized': 'ESLint + no-unsanitized' };
  const rows: SastRow[] = ESLINT_PLUGINS.map((p) => {
    const run = eslintRuns.get(p)!;
    return { tool: NAMES[p], hits: hitsByLabel(labels, run.findings), findings: run.findings.length, ms: run.ms };
  });
  const allRow: SastRow = { tool: 'ESLint (all three)', hits: hitsByLabel(labels, all.findings), findings: all.findings.length, ms: all.ms };
  const aegisRow: SastRow = { tool: 'Aegis SAST', hits: hitsByLabel(labels, aegis.findings), findings: aegis.findings.length, ms: aegis.ms };
  const union = new Map<string, ToolFinding[]>();
  for (const [key, hit] of aegisRow.hits) union.set(key, [...hit, ...(allRow.hits.get(key) ?? [])]);
  const unionRow: SastRow = { tool: 'Aegis ∪ ESLint (all three)', hits: union, findings: aegisRow.findings + allRow.findings, ms: aegisRow.ms + allRow.ms };
  rows.push(allRow, aegisRow, unionRow);

  console.log();
  printTable(
    ['tool', 'recall', 'hits', 'findings', 'vs all three', 'FP', timeHead],
    rows.map((r) => [
      r.tool,
      pct(hitCount(r.hits), labels.length),
      `${hitCount(r.hits)}/${labels.length}`,
      String(r.findings),
      allRow.findings === 0 ? '—' : `${(r.findings / allRow.findings).toFixed(2)}×`,
      'n/a',
      ms(r.ms),
    ]),
  );
  console.log();
  for (const [key, run] of eslintRuns) {
    const parseErrors = run.parseErrors.length ? `; ${run.parseErrors.length} files not parsed (${run.parseErrors.slice(0, 3).map((e) => e.path).join(', ')})` : '';
    const ignored = run.ignored.length ? `; ${run.ignored.length} files ignored by ESLint (${run.ignored.slice(0, 3).join(', ')})` : '';
    console.log(`  ${key === 'all' ? allRow.tool : NAMES[key]} by rule: ${topRules(run.findings)}${parseErrors}${ignored}`);
  }
  console.log(`  Aegis SAST by rule: ${topRules(aegis.findings)}`);
  console.log(`  Aegis skipped: ${skippedText(aegis)}`);
  const recallMet = hitCount(aegisRow.hits) >= hitCount(allRow.hits);
  const findingsMet = aegisRow.findings <= TARGET_FINDINGS_RATIO * allRow.findings;
  console.log(
    `  target: Aegis recall ≥ ESLint (all three) — ${recallMet ? 'met' : 'NOT met'} (${hitCount(aegisRow.hits)} vs ${hitCount(allRow.hits)} hits); ` +
      `findings ≤ 1/4 of theirs — ${findingsMet ? 'met' : 'NOT met'} (${aegisRow.findings} vs ${allRow.findings})`,
  );

  if (opts.misses) printSastMisses(labels, aegisRow, eslintRuns, NAMES);
  console.log();
}

function printSastMisses(labels: readonly LineLabel[], aegis: SastRow, runs: ReadonlyMap<EslintPlugin | 'all', EslintRun>, names: Record<EslintPlugin, string>): void {
  const markerComment = new RegExp(`\\s*(?://|/\\*|#)\\s*${marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*$`);
  const missed = labels.filter((l) => (aegis.hits.get(labelKey(l)) ?? []).length === 0);
  console.log(`\n  Aegis missed ${missed.length} of ${labels.length} labelled lines (peers that hit each, with their rules):`);
  const peerHits = new Map(ESLINT_PLUGINS.map((p) => [p, hitsByLabel(missed, runs.get(p)!.findings)]));
  let file = '';
  for (const label of missed) {
    if (label.path !== file) {
      file = label.path;
      console.log(`    ${file}`);
    }
    const peers = ESLINT_PLUGINS.flatMap((p) => {
      const hit = peerHits.get(p)!.get(labelKey(label)) ?? [];
      return hit.length ? [`${names[p]}: ${[...new Set(hit.map((f) => f.rule))].join(', ')}`] : [];
    });
    const code = label.text.replace(markerComment, '');
    console.log(`      ${String(label.line).padStart(5)}  [${label.tags.join(' ')}] ${code.length > 90 ? `${code.slice(0, 87)}…` : code}`);
    console.log(`             peers: ${peers.join('; ') || 'none'}`);
  }
  const hit = labels.filter((l) => (aegis.hits.get(labelKey(l)) ?? []).length > 0);
  if (hit.length > 0) {
    console.log(`  Aegis hit:`);
    for (const l of hit) console.log(`    ${l.path}:${l.line} [${l.tags.join(' ')}] by ${[...new Set(aegis.hits.get(labelKey(l))!.map((f) => f.rule))].join(', ')}`);
  }
}

// --- corpora -----------------------------------------------------------------------------------
const corpora: { secrets?: Corpus; sast?: Corpus } = {};
const missing: MissingCorpus[] = [];
for (const [key, spec, wanted] of [['secrets', SECRETS_CORPUS, runSecrets], ['sast', SAST_CORPUS, runSastPart]] as const) {
  if (!wanted) continue;
  try {
    corpora[key] = await openCorpus(spec);
  } catch (err) {
    if (err instanceof MissingCorpus) missing.push(err);
    else throw err;
  }
}
if (missing.length > 0) {
  for (const m of missing) console.error(howToGet(m));
  cleanupTemporaries();
  process.exit(2);
}

try {
  if (corpora.secrets) await secretsPart(corpora.secrets);
  if (corpora.sast) await sastPart(corpora.sast);
} catch (err) {
  if (err instanceof LabelError) {
    console.error(err.message);
    process.exitCode = 2;
  } else throw err;
} finally {
  cleanupTemporaries();
}
