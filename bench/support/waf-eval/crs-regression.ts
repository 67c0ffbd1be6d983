// The OWASP CRS's own regression tests (coreruleset/coreruleset, tests/regression/tests/<rule
// file>/<rule id>.yaml, go-ftw's format) as evaluation requests. Each test stage is one request
// and says which rule ids must (expect_ids) or must not (no_expect_ids) fire on it. A stage that
// expects an id of an attack-detection rule file is an attack of that file's class; one that only
// rules such ids out is benign. The request is rebuilt as go-ftw puts it on the wire (default
// Content-Type and form encoding of `data` included), so ModSecurity sees what CRS tested.
// Only the attack-detection files are used: the protocol files' tests are mostly about malformed
// HTTP that undici cannot send, and the response files' tests need an origin that answers badly.
import { parse as parseYaml } from 'yaml';
import type { BareRepo } from './bare-repo.ts';
import type { EvalRequest, Placement } from './types.ts';

export interface CrsCorpus {
  attacks: EvalRequest[];
  /** Stages that only rule out ids of an attack file, source `crs:<rule id>:pl<N>` like the attacks. */
  benign: EvalRequest[];
  /** What was left out or adjusted, for the report. */
  notes: string[];
}

const TESTS_DIR = 'tests/regression/tests';
const RULES_DIR = 'rules';

/** Attack-detection rule files (by number, the first three digits of their rule ids) and the class of their tests. */
const ATTACK_FILES: ReadonlyMap<number, string> = new Map([
  [930, 'traversal'],
  [931, 'rfi'],
  [932, 'cmdi'],
  [933, 'php'],
  // Node.js, SSRF, template injection and more: no one class fits.
  [934, 'generic'],
  [941, 'xss'],
  [942, 'sqli'],
  [943, 'session'],
  [944, 'java'],
]);

const fileOf = (id: number): number => Math.floor(id / 1000);
const isAttackId = (id: number): boolean => ATTACK_FILES.has(fileOf(id));

/** Why the other test directories are left out, by rule-file number range. */
function leftOutWhy(fileNumber: number, dir: string): string {
  if (dir.startsWith('RESPONSE-')) return 'response rules: they inspect what the origin answers, and ours answers the same to everything';
  if ([911, 913, 920, 921, 922].includes(fileNumber)) return 'method, scanner and protocol enforcement/attack rules: many tests need raw or malformed HTTP';
  return 'not an attack-detection rule file (blocking evaluation, exceptions)';
}

type Yaml = Record<string, unknown>;
const record = (value: unknown): Yaml | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Yaml) : undefined);

/** Rule ids written as a list, a single number or numeric strings. */
function idList(value: unknown): number[] {
  const items = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return items.map(Number).filter((n) => Number.isInteger(n) && n > 0);
}

/** Rule ids a log regex names (older tests: `log_contains: id "942100"`). */
const idsInText = (value: unknown): number[] => (typeof value === 'string' ? [...value.matchAll(/(?<!\d)9\d{5}(?!\d)/g)].map((m) => Number(m[0])) : []);

interface Expectation {
  expect: number[];
  noExpect: number[];
}

/** The ids a stage's output expects and rules out, across go-ftw's current and older spellings. */
function expectation(output: Yaml): Expectation {
  const log = record(output.log) ?? {};
  return {
    expect: [...idList(log.expect_ids), ...idList(log.expect_id), ...idsInText(log.match_regex), ...idsInText(log.log_contains), ...idsInText(output.log_contains)],
    noExpect: [...idList(log.no_expect_ids), ...idList(log.no_expect_id), ...idsInText(log.no_match_regex), ...idsInText(log.no_log_contains), ...idsInText(output.no_log_contains)],
  };
}

/**
 * Paranoia level of every rule in the attack files, from its `tag:'paranoia-level/N'` (or, for a
 * rule without one, the `-= Paranoia Level N =-` section it sits in).
 */
function ruleLevels(repo: BareRepo): Map<number, number> {
  const levels = new Map<number, number>();
  for (const path of repo.files(RULES_DIR).filter((p) => /\/REQUEST-9\d\d-.*\.conf$/.test(p))) {
    let section: number | undefined;
    let current: number | undefined;
    for (const line of repo.read(path).split('\n')) {
      const heading = /^#\s*-=\s*Paranoia Level (\d)/.exec(line);
      if (heading) section = Number(heading[1]);
      const id = /["\s,]id:(\d{6})/.exec(line);
      if (id) {
        current = Number(id[1]);
        if (section !== undefined) levels.set(current, section);
      }
      const tag = /tag:'paranoia-level\/(\d)'/.exec(line);
      if (tag && current !== undefined) levels.set(current, Number(tag[1]));
    }
  }
  return levels;
}

/** Go's url.QueryEscape, on the UTF-8 bytes: what go-ftw applies to each form key and value. */
function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * go-ftw's form encoding of `data` sent as application/x-www-form-urlencoded: tests write
 * `key=value&…` unencoded, so each key and value is escaped, unless the data already looks
 * encoded (unescaping would change it: it has a `%` or a `+`). Split as go-ftw splits: on `&`,
 * then at the first `=`; a trailing `&` is dropped.
 */
function goFormEncode(data: string): string {
  if (/[%+]/.test(data)) return data;
  const parts: string[] = [];
  let rest = data;
  while (rest.length > 0) {
    const amp = rest.indexOf('&');
    const token = amp < 0 ? rest : rest.slice(0, amp);
    rest = amp < 0 ? '' : rest.slice(amp + 1);
    const eq = token.indexOf('=');
    parts.push(eq < 0 ? queryEscape(token) : `${queryEscape(token.slice(0, eq))}=${queryEscape(token.slice(eq + 1))}`);
  }
  return parts.join('&');
}

/** Headers go-ftw writes as given but the sender sets itself (host, length) or undici refuses or manages (hop-by-hop). */
const DROPPED_HEADERS = new Set(['host', 'content-length', 'connection', 'keep-alive']);
/** Headers undici refuses and whose meaning the request would lose without them. */
const UNSENDABLE_HEADERS = new Set(['transfer-encoding', 'upgrade', 'expect']);
/** Headers every CRS test sends: a request with others (Cookie, Referer, X-…) carries its payload there. */
const BOILERPLATE_HEADERS = new Set(['host', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'accept-charset', 'content-type', 'content-length', 'connection', 'keep-alive', 'proxy-connection', 'cache-control']);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

type Wire = Pick<EvalRequest, 'method' | 'target' | 'headers' | 'body' | 'placement'>;
interface Built {
  wire: Wire;
  targetEscaped: boolean;
  droppedKeepAlive: boolean;
}

/** Header name/value pairs from `headers` (a map) or `ordered_headers` (newer go-ftw: a list of {name, value}). */
function headerPairs(input: Yaml): [string, string][] {
  const ordered = input.ordered_headers;
  if (Array.isArray(ordered)) return ordered.map(record).filter((h): h is Yaml => h !== undefined).map((h) => [String(h.name), String(h.value ?? '')]);
  return Object.entries(record(input.headers) ?? {}).map(([name, value]) => [name, value === null || value === undefined ? '' : String(value)]);
}

/** Placement of a body, by its Content-Type. */
function bodyPlacement(contentType: string): Placement {
  const type = contentType.toLowerCase();
  if (type.includes('multipart')) return 'multipart';
  if (type.includes('json')) return 'json';
  if (type.includes('xml')) return 'xml';
  if (type.includes('x-www-form-urlencoded')) return 'form';
  return 'body';
}

/**
 * Where the payload most likely sits. Tests fill the spots they do not test with short values
 * (`test=value` bodies, `?x=1`), so the longest of the body, a non-boilerplate header, a changed
 * User-Agent and the query is taken; with none of them, the path.
 */
function placementOf(wire: Omit<Wire, 'placement'>): Placement {
  const candidates: [Placement, number][] = [];
  if (wire.body !== undefined) candidates.push([bodyPlacement(wire.headers['content-type'] ?? ''), wire.body.length]);
  for (const [name, value] of Object.entries(wire.headers)) {
    if (!BOILERPLATE_HEADERS.has(name)) candidates.push(['header', value.length]);
    else if (name === 'user-agent' && !/^OWASP/i.test(value)) candidates.push(['user_agent', value.length]);
  }
  const query = wire.target.indexOf('?');
  if (query >= 0 && query < wire.target.length - 1) candidates.push(['query', wire.target.length - query - 1]);
  // Stable sort: on a tie the earlier (body, then headers) wins.
  return candidates.sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'path';
}

/** The request a stage's input describes, as go-ftw would send it, or why undici cannot send it. */
function buildRequest(input: Yaml): Built | { skip: string } {
  if (input.encoded_request !== undefined || input.raw_request !== undefined) return { skip: 'encoded_request/raw_request: raw bytes, not a request undici can rebuild' };
  const version = input.version === undefined ? 'HTTP/1.1' : String(input.version);
  if (version !== 'HTTP/1.1') return { skip: `version ${version}: undici sends HTTP/1.1 only` };
  if (input.autocomplete_headers === false) return { skip: 'autocomplete_headers: false (a body without Content-Length; undici always sets one)' };
  const method = input.method === undefined ? 'GET' : String(input.method);
  if (!TOKEN.test(method)) return { skip: 'method is not an HTTP token' };
  const uri = input.uri === undefined ? '/' : String(input.uri);
  if (!uri.startsWith('/')) return { skip: 'request target not a path (absolute or asterisk form)' };
  // Kept as written; only what undici refuses on a request line (space, controls, past ASCII) is percent-encoded (UTF-8).
  const target = uri.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));

  const headers: Record<string, string> = {};
  let droppedKeepAlive = false;
  for (const [rawName, value] of headerPairs(input)) {
    const name = rawName.toLowerCase();
    if (name === 'keep-alive') droppedKeepAlive = true;
    if (DROPPED_HEADERS.has(name)) continue;
    if (UNSENDABLE_HEADERS.has(name)) return { skip: `${name} header: undici refuses it` };
    if (!TOKEN.test(name)) return { skip: 'header name is not an HTTP token' };
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return { skip: 'header value with control characters' };
    if (name in headers) return { skip: 'the same header twice' };
    headers[name] = value;
  }

  // go-ftw joins a list of lines (older tests) with CRLF.
  let body: string | undefined = Array.isArray(input.data) ? input.data.map(String).join('\r\n') : input.data === undefined || input.data === null ? undefined : String(input.data);
  if (body !== undefined && body !== '') {
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
    if (headers['content-type'].toLowerCase() === 'application/x-www-form-urlencoded') body = goFormEncode(body);
  }
  // go-ftw ends multipart lines in CRLF, as RFC 7578 wants and ModSecurity insists.
  if (body !== undefined && (headers['content-type'] ?? '').toLowerCase().includes('multipart/form-data;')) body = body.replaceAll('\n', '\r\n');
  if (body === '') body = undefined;
  const unplaced = { method, target, headers, ...(body === undefined ? {} : { body }) };
  return { wire: { ...unplaced, placement: placementOf(unplaced) }, targetEscaped: target !== uri, droppedKeepAlive };
}

/** A stage's input and output; older tests wrap them in `stage:`. */
function stagesOf(test: Yaml): { input: Yaml; output: Yaml }[] {
  const stages = Array.isArray(test.stages) ? test.stages : [];
  return stages.map((entry) => {
    const stage = record(record(entry)?.stage) ?? record(entry) ?? {};
    return { input: record(stage.input) ?? {}, output: record(stage.output) ?? {} };
  });
}

export function crsRegressionRequests(repo: BareRepo): CrsCorpus {
  const attacks: EvalRequest[] = [];
  const benign: EvalRequest[] = [];
  const skipped = new Map<string, number>();
  const leftOut = new Map<string, { why: string; files: number }>();
  const skip = (why: string) => skipped.set(why, (skipped.get(why) ?? 0) + 1);
  const levels = ruleLevels(repo);
  let stages = 0;
  let targetsEscaped = 0;
  let keepAlive = 0;
  const unknownLevel = new Set<number>();

  for (const path of repo.files(TESTS_DIR).filter((p) => /\.ya?ml$/.test(p))) {
    const dir = path.slice(TESTS_DIR.length + 1).split('/')[0] ?? '';
    const fileNumber = Number(/^(?:REQUEST|RESPONSE)-(\d{3})-/.exec(dir)?.[1]);
    if (!ATTACK_FILES.has(fileNumber)) {
      const entry = leftOut.get(dir) ?? leftOut.set(dir, { why: leftOutWhy(fileNumber, dir), files: 0 }).get(dir)!;
      entry.files++;
      continue;
    }
    const doc = record(parseYaml(repo.read(path))) ?? {};
    const fileRule = Number(doc.rule_id);
    for (const test of (Array.isArray(doc.tests) ? doc.tests : []).map(record)) {
      if (!test) continue;
      for (const { input, output } of stagesOf(test)) {
        stages++;
        const { expect, noExpect } = expectation(output);
        const attackIds = expect.filter(isAttackId);
        // The id the request is filed under: the test file's own rule when the stage names it.
        let rule: number;
        let cls: string;
        if (attackIds.length > 0) {
          rule = attackIds.includes(fileRule) ? fileRule : (attackIds.find((id) => fileOf(id) === fileNumber) ?? attackIds[0]!);
          cls = ATTACK_FILES.get(fileOf(rule))!;
        } else if (expect.length > 0) {
          skip('expects only ids outside the attack files (protocol, blocking evaluation): neither attack nor benign here');
          continue;
        } else if (noExpect.some(isAttackId)) {
          rule = noExpect.includes(fileRule) ? fileRule : noExpect.find(isAttackId)!;
          cls = 'benign';
        } else {
          skip('no rule id in its expectations (a log regex without an id, or a status only)');
          continue;
        }
        const built = buildRequest(input);
        if ('skip' in built) {
          skip(built.skip);
          continue;
        }
        if (built.targetEscaped) targetsEscaped++;
        if (built.droppedKeepAlive) keepAlive++;
        const level = levels.get(rule);
        if (level === undefined) unknownLevel.add(rule);
        const request: EvalRequest = { ...built.wire, class: cls, encoding: 'as_written', source: `crs:${rule}${level === undefined ? '' : `:pl${level}`}` };
        (cls === 'benign' ? benign : attacks).push(request);
      }
    }
  }

  const notes: string[] = [];
  notes.push(`${stages} test stages in ${ATTACK_FILES.size} attack-detection rule files (${[...ATTACK_FILES.keys()].join(', ')}): ${attacks.length} attacks, ${benign.length} benign (they only rule out that file's ids), ${stages - attacks.length - benign.length} skipped`);
  for (const [why, n] of [...skipped].sort((a, b) => b[1] - a[1])) notes.push(`skipped ${n}: ${why}`);
  const byWhy = new Map<string, string[]>();
  for (const [dir, { why, files }] of leftOut) (byWhy.get(why) ?? byWhy.set(why, []).get(why)!).push(`${dir.slice(0, dir.indexOf('-', dir.indexOf('-') + 1))} (${files})`);
  for (const [why, dirs] of byWhy) notes.push(`left out ${dirs.join(', ')} test files: ${why}`);
  const perLevel = new Map<string, number>();
  for (const r of attacks) {
    const key = /:pl\d$/.exec(r.source)?.[0].slice(1) ?? 'pl?';
    perLevel.set(key, (perLevel.get(key) ?? 0) + 1);
  }
  notes.push(`attacks per paranoia level of the rule they test: ${[...perLevel].sort().map(([l, n]) => `${l} ${n}`).join(', ')} (source crs:<rule id>:pl<N>; the CRS runs these tests at paranoia level 4)`);
  if (unknownLevel.size > 0) notes.push(`no paranoia level found for rules ${[...unknownLevel].sort().join(', ')} (source without :pl)`);
  if (targetsEscaped > 0) notes.push(`${targetsEscaped} request targets had spaces, controls or non-ASCII characters percent-encoded (as UTF-8): undici refuses them on the request line`);
  if (keepAlive > 0) notes.push(`${keepAlive} requests lost their Keep-Alive header (hop-by-hop; undici refuses it)`);
  return { attacks, benign, notes };
}
