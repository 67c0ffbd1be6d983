// What the evaluation prints, and the per-request JSON it can write. A request is *blocked* by a
// target when the target answered it itself with a 4xx other than 429: 403 for a rule, 400/413/415
// for a request the gateway (or nginx/ModSecurity) refuses to inspect or parse. It *passed* when
// the origin answered (origin.ts). Anything else (no answer, 5xx, 429) is neither and is listed.
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { CLIENT_HEADERS } from './gotestwaf-placeholders.ts';
import type { TargetAnswers } from './send.ts';
import type { EvalRequest } from './types.ts';

export type Outcome = 'passed' | 'blocked' | 'other';

export interface Results {
  requests: readonly EvalRequest[];
  /** Column labels in order (PL1 … PL4, ModSec when present). */
  labels: readonly string[];
  answers: ReadonlyMap<string, TargetAnswers>;
  /** The PL1 rule (`kind:id`) behind a block, by request index. */
  pl1Rule(index: number): string | undefined;
}

export function outcome(answers: TargetAnswers, i: number): Outcome {
  if (answers.fromOrigin[i] === 1) return 'passed';
  const status = answers.status[i]!;
  return status >= 400 && status < 500 && status !== 429 ? 'blocked' : 'other';
}

const CLASS_ORDER = ['sqli', 'xss', 'cmdi', 'traversal', 'rfi', 'php', 'java', 'generic', 'session', 'crlf', 'ldap', 'mail', 'nosqli', 'ssi', 'ssti', 'xxe', 'user_agent'];
const PLACEMENT_ORDER = ['query', 'path', 'form', 'multipart', 'json', 'xml', 'header', 'user_agent', 'body', 'raw'];
const ENCODING_ORDER = ['plain', 'url', 'base64', 'base64_flat', 'js_unicode', 'xml_entity', 'as_written'];

/** Keys in a preferred order, unknown ones after, alphabetically. */
function ordered(keys: Iterable<string>, order: readonly string[]): string[] {
  const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
  return [...new Set(keys)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

const bump = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);
const pct = (n: number, of: number): string => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}`);

/** A table row: its name, its request indexes, and which outcome its % counts. */
type Row = [name: string, indexes: number[], want: Outcome];

/** One table: a row per group of request indexes, the % of the row's `want` per target. */
function rows(title: string, head: string, groups: Row[], results: Results): void {
  const width = Math.max(head.length, ...groups.map(([name]) => name.length)) + 2;
  console.log(`\n${title}`);
  console.log(`  ${head.padEnd(width)}${'requests'.padStart(9)}${results.labels.map((l) => l.padStart(8)).join('')}`);
  for (const [name, indexes, want] of groups) {
    const cells = results.labels.map((label) => {
      const answers = results.answers.get(label)!;
      return pct(indexes.filter((i) => outcome(answers, i) === want).length, indexes.length).padStart(8);
    });
    console.log(`  ${name.padEnd(width)}${String(indexes.length).padStart(9)}${cells.join('')}`);
  }
}

/** A table whose rows all count the same outcome. */
function table(title: string, head: string, groups: [string, number[]][], results: Results, want: Outcome): void {
  rows(title, head, groups.map(([name, indexes]): Row => [name, indexes, want]), results);
}

function groupBy(indexes: number[], key: (i: number) => string, order: readonly string[]): [string, number[]][] {
  const groups = new Map<string, number[]>();
  for (const i of indexes) (groups.get(key(i)) ?? groups.set(key(i), []).get(key(i))!).push(i);
  return ordered(groups.keys(), order).map((k) => [k, groups.get(k)!]);
}

/** A request in one line: where its payload sits, JSON-quoted and cut. */
function describe(req: EvalRequest, max = 180): string {
  const cut = (s: string) => (s.length > max ? `${s.slice(0, max)}…` : s);
  const body = req.body === undefined ? '' : typeof req.body === 'string' ? req.body : req.body.toString('utf8');
  if (req.placement === 'user_agent') return `UA ${JSON.stringify(cut(req.headers['user-agent'] ?? ''))}`;
  if (req.placement === 'header') {
    // The headers a browser sends anyway are left out; what remains carries the payload.
    const own = Object.entries(req.headers).filter(([name]) => !(name in CLIENT_HEADERS) && name !== 'content-type');
    return `${req.method} ${JSON.stringify(cut(req.target))} ${cut(own.map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join('; '))}`;
  }
  return `${req.method} ${JSON.stringify(cut(req.target))}${body ? ` body ${JSON.stringify(cut(body))}` : ''}`;
}

export function printReport(results: Results, options: { misses: number }): void {
  const { requests, labels, answers } = results;
  const all = [...requests.keys()];
  const attacks = all.filter((i) => requests[i]!.class !== 'benign');
  const benign = all.filter((i) => requests[i]!.class === 'benign');

  console.log('\nanswers per target (blocked = answered by the WAF with a 4xx other than 429; passed = answered by the origin)');
  for (const label of labels) {
    const a = answers.get(label)!;
    const counts = { passed: 0, blocked: 0, other: 0 };
    const statuses = new Map<string, number>();
    for (const i of all) {
      const o = outcome(a, i);
      counts[o]++;
      if (o !== 'passed') bump(statuses, `${o === 'blocked' ? '' : 'other '}${a.status[i] || 'no answer'}`);
    }
    const detail = [...statuses].sort((x, y) => y[1] - x[1]).map(([s, n]) => `${s}: ${n}`).join(', ');
    console.log(`  ${label.padEnd(7)} passed ${counts.passed}, blocked ${counts.blocked}, other ${counts.other}   (${detail})`);
    for (const error of a.errors) console.log(`          error: ${error}`);
  }

  const req = (i: number) => requests[i]!;
  table('attacks per class: % blocked', 'class', groupBy(attacks, (i) => req(i).class, CLASS_ORDER), results, 'blocked');
  table('attacks per placement: % blocked', 'placement', groupBy(attacks, (i) => req(i).placement, PLACEMENT_ORDER), results, 'blocked');
  table('attacks per encoding: % blocked', 'encoding', groupBy(attacks, (i) => req(i).encoding, ENCODING_ORDER), results, 'blocked');
  // Per attack corpus (the `source` prefix: gotestwaf, patt, crs), its attacks and the benign cases it ships beside them.
  const corpus = (i: number) => req(i).source.split(':')[0]!;
  const benignOfCorpus = new Map(groupBy(benign, corpus, []));
  const corpusRows = groupBy(attacks, corpus, []).flatMap(([name, indexes]): Row[] => {
    const own = benignOfCorpus.get(name);
    return [[`${name} attacks`, indexes, 'blocked'], ...(own ? [[`${name} benign`, own, 'passed'] as Row] : [])];
  });
  rows('per corpus: attacks % blocked, benign % passed (the corpus\'s own benign cases; the other benign sources below)', 'corpus', corpusRows, results);
  // CRS regression tests (source `crs:<rule id>:pl<N>`) by the paranoia level of the rule they test: a
  // PL1 target is not meant to catch what only PL3 rules catch.
  const crsLevel = (i: number) => /^crs:\d+:(pl\d)$/.exec(req(i).source)?.[1];
  const levelRows = ['pl1', 'pl2', 'pl3', 'pl4'].flatMap((level): Row[] => {
    const of = (indexes: number[]) => indexes.filter((i) => crsLevel(i) === level);
    return [[`${level} attacks`, of(attacks), 'blocked'], [`${level} benign`, of(benign), 'passed']] satisfies Row[];
  }).filter(([, indexes]) => indexes.length > 0);
  if (levelRows.length > 0) rows('CRS regression tests by the paranoia level of the rule tested: attacks % blocked, benign % passed', 'rule level', levelRows, results);
  // Benign sources by corpus (`rust-book:…` → rust-book); gotestwaf's false-pos cases under their own name.
  const benignSource = (source: string) => (source.startsWith('gotestwaf:') ? source : source.split(':')[0]!);
  table('benign per source: % passed', 'source', groupBy(benign, (i) => benignSource(req(i).source), []), results, 'passed');
  table('benign per placement: % passed', 'placement', groupBy(benign, (i) => req(i).placement, PLACEMENT_ORDER), results, 'passed');

  console.log('\nsummary');
  for (const label of labels) {
    const a = answers.get(label)!;
    const stopped = attacks.filter((i) => outcome(a, i) === 'blocked').length;
    const passed = benign.filter((i) => outcome(a, i) === 'passed').length;
    const note = label === 'PL1' ? '  (the default paranoia level)' : '';
    console.log(`  ${label.padEnd(7)} attacks stopped ${pct(stopped, attacks.length).padStart(5)} % (${stopped}/${attacks.length})   benign passed ${pct(passed, benign.length).padStart(5)} % (${passed}/${benign.length})${note}`);
  }

  const pl1 = answers.get('PL1');
  if (!pl1) return;
  const rules = new Map<string, number>();
  for (const i of benign) if (outcome(pl1, i) === 'blocked') bump(rules, results.pl1Rule(i) ?? `(status ${pl1.status[i]}, rule not recorded)`);
  if (rules.size > 0) {
    console.log('\nrules blocking benign requests at PL1 (top 15)');
    for (const [rule, n] of [...rules].sort((x, y) => y[1] - x[1]).slice(0, 15)) console.log(`  ${String(n).padStart(6)}  ${rule}`);
  }
  if (options.misses <= 0) return;
  console.log(`\nattacks that passed PL1 (first ${options.misses} per class)`);
  for (const [cls, indexes] of groupBy(attacks, (i) => req(i).class, CLASS_ORDER)) {
    const missed = indexes.filter((i) => outcome(pl1, i) === 'passed');
    if (missed.length === 0) continue;
    console.log(`  ${cls}: ${missed.length} of ${indexes.length} passed`);
    for (const i of missed.slice(0, options.misses)) console.log(`    [${req(i).placement}/${req(i).encoding}] ${req(i).source}  ${describe(req(i))}`);
  }
  const blockedBenign = benign.filter((i) => outcome(pl1, i) === 'blocked');
  console.log(`\nbenign requests blocked at PL1 (first ${options.misses} of ${blockedBenign.length})`);
  for (const i of blockedBenign.slice(0, options.misses)) {
    console.log(`    ${pl1.status[i]} ${results.pl1Rule(i) ?? '(rule not recorded)'}  [${req(i).placement}] ${req(i).source}  ${describe(req(i))}`);
  }
}

/** The raw results, one entry per request, in a stable shape for diffing two runs. */
export async function writeJson(file: string, results: Results, meta: Record<string, unknown>): Promise<void> {
  const entries = results.requests.map((req, i) => {
    const body = req.body === undefined ? '' : typeof req.body === 'string' ? req.body : req.body.toString('latin1');
    const key = createHash('sha1').update(`${req.method} ${req.target}\n${JSON.stringify(req.headers)}\n${body}`).digest('hex');
    const status: Record<string, number> = {};
    const outcomes: Record<string, Outcome> = {};
    for (const label of results.labels) {
      const a = results.answers.get(label)!;
      status[label] = a.status[i]!;
      outcomes[label] = outcome(a, i);
    }
    return { key, class: req.class, placement: req.placement, encoding: req.encoding, source: req.source, method: req.method, target: req.target.slice(0, 300), status, outcome: outcomes, rule_pl1: results.pl1Rule(i) ?? null };
  });
  await writeFile(file, `${JSON.stringify({ meta, results: entries })}\n`);
}
