// Active checks: payloads into one parameter (or the URL path) at a time, each finding backed by
// proof in the response rather than a guess. Check families and what counts as proof:
//   xss        a random marker sent as `"'><marker>` comes back unescaped in HTML, not in a
//              comment/textarea/title, and not inside a tag unless the quotes survived too;
//   ssti       `{{a*b}}`, `${a*b}`, `<%= a*b %>`, `#{a*b}` between markers, random a and b: the
//              product appears between the markers (the expression was evaluated);
//   sqli       error: `'"` appended brings a database error signature the baseline lacks;
//              boolean: `AND 1=1` keeps the baseline response and `AND 1=2` changes it, twice over
//              with other constants (numeric form for numeric values, then quoted). OR payloads are
//              never sent: in an UPDATE or DELETE they would touch every row;
//              time: a database sleep (PostgreSQL, MySQL, SQL Server) of LONG s delays the
//              response by LONG s (less 0.3 s of slack) over the same payload sleeping 0 s, and
//              SHORT s delays it by SHORT s and by LONG−SHORT less than LONG — a page that is slow
//              anyway, or slow by chance once, does not pass all three;
//   cmdi       the same timing proof with `sleep` behind `;`, `$( )` and a closing quote;
//   redirect   (URL-valued parameters) an absolute or protocol-relative URL of a host we chose
//              comes back as a 3xx Location to that host;
//   traversal  (file-valued parameters, and the raw path below directories serving files)
//              `../`, absolute, double-encoded and filter-evading forms return /etc/passwd
//              (`root:x:0:0:`) or win.ini content the baseline lacks.
// A family stops on a parameter at its first confirmed finding. Command injection payloads are for
// POSIX shells only (no `& timeout /T` or `ping -n` for cmd.exe).
import { randomBytes, randomInt } from 'node:crypto';
import type { HttpExchange, ScanRequest } from '../web/http.ts';
import { pointName, pointValue, withValue, type InjectionPoint } from './check.ts';
import { decodeEntities, escapeHtml, inInertContext } from './html.ts';
import { around, clip, type Prober } from './probe.ts';

export interface ActiveHit {
  rule: string;
  /** Short proof for Finding.evidence. */
  evidence: string;
  /** The exchange that shows it. */
  exchange: HttpExchange;
  /** The part of the body worth quoting in details.response. */
  proof?: string;
  variant: string;
}

export interface ActiveEnv {
  prober: Prober;
  /** Sleep lengths for timing proofs, seconds. */
  delays: { long: number; short: number };
}

/** Prefix of every XSS marker (tests look for it to prove a rule was not run). */
export const XSS_MARKER_PREFIX = 'aegisxss';
export const REDIRECT_HOST = 'aegis-redirect-check.example';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

async function send(env: ActiveEnv, req: ScanRequest): Promise<HttpExchange | null> {
  return env.prober.send(req);
}

function isHtml(ex: HttpExchange): boolean {
  return /html/i.test(ex.headers['content-type'] ?? '');
}

// ---------------------------------------------------------------- XSS

export async function checkXss(env: ActiveEnv, point: InjectionPoint): Promise<ActiveHit | null> {
  const marker = `${XSS_MARKER_PREFIX}${hex(5)}`;
  const tag = `<${marker}>`;
  const payload = `"'>${tag}`;
  const ex = await send(env, withValue(point, payload));
  if (!ex || !isHtml(ex)) return null;
  for (let at = ex.body.indexOf(tag); at >= 0; at = ex.body.indexOf(tag, at + 1)) {
    if (inInertContext(ex.body, at)) continue;
    const whole = ex.body.startsWith(payload, at - 3);
    // Inside a tag a raw `<` only matters if the quotes that close the attribute came through too.
    const before = ex.body.slice(0, at);
    const insideTag = before.lastIndexOf('<') > before.lastIndexOf('>');
    if (!whole && insideTag) continue;
    return { rule: 'dast-xss-reflected', variant: 'tag', exchange: ex, evidence: `reflected unescaped: ${around(ex.body, at, tag.length, 50)}`, proof: around(ex.body, at, tag.length, 120) };
  }
  return null;
}

// ---------------------------------------------------------------- SSTI

const SSTI_SYNTAXES: Array<{ key: string; engine: string; wrap: (expr: string) => string }> = [
  { key: 'a', engine: 'Jinja2/Twig/Nunjucks', wrap: (e) => `{{${e}}}` },
  { key: 'b', engine: 'FreeMarker/Velocity/EL/JS template', wrap: (e) => `\${${e}}` },
  { key: 'c', engine: 'ERB/EJS', wrap: (e) => `<%= ${e} %>` },
  { key: 'd', engine: 'Pug/Ruby/Thymeleaf', wrap: (e) => `#{${e}}` },
];

export async function checkSsti(env: ActiveEnv, point: InjectionPoint): Promise<ActiveHit | null> {
  const m = `aegisst${hex(3)}`;
  const a = randomInt(101, 999);
  const b = randomInt(101, 999);
  const expr = `${a}*${b}`;
  const payload = SSTI_SYNTAXES.map((s) => `${m}${s.key}${s.wrap(expr)}`).join('') + `${m}z`;
  const ex = await send(env, withValue(point, payload));
  if (!ex) return null;
  const product = String(a * b);
  for (const [i, s] of SSTI_SYNTAXES.entries()) {
    const next = SSTI_SYNTAXES[i + 1]?.key ?? 'z';
    const evaluated = `${m}${s.key}${product}${m}${next}`;
    const at = ex.body.indexOf(evaluated);
    if (at >= 0 && !ex.body.includes(s.wrap(expr))) {
      return { rule: 'dast-ssti', variant: s.key, exchange: ex, evidence: `${s.wrap(expr)} rendered as ${product} (${s.engine} syntax)`, proof: around(ex.body, at, evaluated.length, 80) };
    }
  }
  return null;
}

// ---------------------------------------------------------------- SQL injection

const SQL_ERRORS: Array<[db: string, pattern: RegExp]> = [
  ['MySQL', /You have an error in your SQL syntax[^<\n]{0,160}|check the manual that corresponds to your (?:MySQL|MariaDB) server version|Warning: mysqli?_\w+\(\)|MySqlException|com\.mysql\.jdbc/i],
  ['PostgreSQL', /ERROR:\s+(?:syntax error at or near|unterminated quoted (?:string|identifier) at or near)[^<\n]{0,120}|PSQLException|pg_query\(\)|PG::SyntaxError/i],
  ['SQLite', /SQLITE_ERROR[^<\n]{0,120}|sqlite3\.OperationalError[^<\n]{0,120}|SQLiteException|unrecognized token: "[^"<\n]{0,60}"|near "[^"<\n]{0,40}": syntax error/i],
  ['SQL Server', /Unclosed quotation mark after the character string[^<\n]{0,80}|Microsoft OLE DB Provider for (?:SQL Server|ODBC)|System\.Data\.SqlClient\.SqlException|SQLServerException/i],
  ['Oracle', /\bORA-0\d{4}:[^<\n]{0,100}|quoted string not properly terminated|oracle\.jdbc/i],
  ['ODBC/JDBC', /\[ODBC [^\]]{0,60}Driver\]|SQLSTATE\[\w+\][^<\n]{0,100}|java\.sql\.SQLSyntaxErrorException/i],
];

export function sqlError(body: string): { db: string; text: string; index: number } | null {
  for (const [db, pattern] of SQL_ERRORS) {
    const m = pattern.exec(body);
    if (m) return { db, text: m[0], index: m.index };
  }
  return null;
}

export async function checkSqliError(env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange): Promise<ActiveHit | null> {
  const ex = await send(env, withValue(point, `${pointValue(point)}'"`));
  if (!ex) return null;
  const err = sqlError(ex.body);
  if (!err || sqlError(baseline.body)?.db === err.db) return null;
  return { rule: 'dast-sqli-error', variant: 'quote', exchange: ex, evidence: `${err.db} error: ${clip(decodeEntities(err.text), 160)}`, proof: around(ex.body, err.index, err.text.length, 100) };
}

interface BooleanVariant {
  name: string;
  numericOnly: boolean;
  pairs: Array<[t: (v: string) => string, f: (v: string) => string]>;
}

const BOOLEAN_VARIANTS: BooleanVariant[] = [
  { name: 'numeric', numericOnly: true, pairs: [[(v) => `${v} AND 1=1`, (v) => `${v} AND 1=2`], [(v) => `${v} AND 7=7`, (v) => `${v} AND 7=8`]] },
  { name: 'quoted', numericOnly: false, pairs: [[(v) => `${v}' AND '1'='1`, (v) => `${v}' AND '1'='2`], [(v) => `${v}' AND '7'='7`, (v) => `${v}' AND '7'='8`]] },
];

// Ways a page may echo what it was sent: these are removed before responses are compared, so an
// echoed payload does not make two otherwise equal pages differ.
function echoes(value: string): string[] {
  const forms = new Set([value, escapeHtml(value), escapeHtml(value).replace(/&#39;/g, '&#x27;'), escapeHtml(value).replace(/&#39;/g, '&apos;'), encodeURIComponent(value), value.replace(/'/g, "''")]);
  return [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

function normalized(ex: HttpExchange, sent: string, original: string): string {
  let body = ex.body;
  for (const e of echoes(sent)) body = body.split(e).join('');
  // The original value only when long enough not to erase unrelated digits or letters.
  if (original.length >= 3) for (const e of echoes(original)) body = body.split(e).join('');
  return `${ex.status}\n${body}`;
}

const NUMERIC = /^-?\d+(?:\.\d+)?$/;

export function sqliVariantsFor(value: string): string[] {
  return BOOLEAN_VARIANTS.filter((v) => !v.numericOnly || NUMERIC.test(value)).map((v) => v.name);
}

export async function checkSqliBoolean(env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange, first?: string): Promise<ActiveHit | null> {
  const v = pointValue(point);
  const base = normalized(baseline, '', v);
  const order = BOOLEAN_VARIANTS.filter((b) => !b.numericOnly || NUMERIC.test(v)).sort((a, b) => Number(b.name === first) - Number(a.name === first));
  for (const variant of order) {
    let falsePage: string | null = null;
    let proof: { t: HttpExchange; f: HttpExchange; tp: string; fp: string } | null = null;
    let ok = true;
    for (const [t, f] of variant.pairs) {
      const tp = t(v);
      const te = await send(env, withValue(point, tp));
      if (!te || normalized(te, tp, v) !== base) {
        ok = false;
        break;
      }
      const fp = f(v);
      const fe = await send(env, withValue(point, fp));
      if (!fe) {
        ok = false;
        break;
      }
      const fNorm = normalized(fe, fp, v);
      // The false page must differ from the true one, and the same way each time.
      if (fNorm === base || (falsePage !== null && fNorm !== falsePage)) {
        ok = false;
        break;
      }
      falsePage = fNorm;
      proof ??= { t: te, f: fe, tp, fp };
    }
    if (ok && proof) {
      const describe = (ex: HttpExchange): string => `${ex.status}, ${ex.body.length} bytes`;
      return {
        rule: 'dast-sqli-boolean',
        variant: variant.name,
        exchange: proof.f,
        evidence: `${pointName(point)}=${proof.tp} → ${describe(proof.t)} (as baseline); ${pointName(point)}=${proof.fp} → ${describe(proof.f)}; repeated with 7=7/7=8`,
      };
    }
  }
  return null;
}

// ---------------------------------------------------------------- timing (SQL and command injection)

interface TimedVariant {
  name: string;
  numericOnly?: boolean;
  payload: (v: string, seconds: number) => string;
}

const SQL_SLEEPS: TimedVariant[] = [
  { name: 'pg-stacked', payload: (v, n) => `${v}';SELECT pg_sleep(${n})--` },
  { name: 'mysql-and', payload: (v, n) => `${v}' AND (SELECT 1 FROM (SELECT SLEEP(${n}))x)-- -` },
  { name: 'mssql-stacked', payload: (v, n) => `${v}';WAITFOR DELAY '0:0:${n}'--` },
  { name: 'pg-stacked-numeric', numericOnly: true, payload: (v, n) => `${v};SELECT pg_sleep(${n})--` },
  { name: 'mysql-and-numeric', numericOnly: true, payload: (v, n) => `${v} AND (SELECT 1 FROM (SELECT SLEEP(${n}))x)` },
  { name: 'mssql-stacked-numeric', numericOnly: true, payload: (v, n) => `${v};WAITFOR DELAY '0:0:${n}'--` },
];

const SHELL_SLEEPS: TimedVariant[] = [
  { name: 'semicolon', payload: (v, n) => `${v};sleep ${n};` },
  { name: 'substitution', payload: (v, n) => `${v}$(sleep ${n})` },
  { name: 'single-quoted', payload: (v, n) => `${v}';sleep ${n};'` },
];

// Slack for network and server jitter on each side of a timing comparison. Three comparisons must
// all hold (long vs none, short vs none, long vs short), which random slowness does not fake.
const TIMING_TOLERANCE_MS = 300;

async function timingProof(env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange, variants: TimedVariant[], rule: string, first?: string): Promise<ActiveHit | null> {
  const v = pointValue(point);
  const { long, short } = env.delays;
  const order = variants.filter((t) => !t.numericOnly || NUMERIC.test(v)).sort((a, b) => Number(b.name === first) - Number(a.name === first));
  const tol = TIMING_TOLERANCE_MS;
  for (const variant of order) {
    const slow = await send(env, withValue(point, variant.payload(v, long)));
    if (!slow || slow.durationMs < baseline.durationMs + long * 1000 - tol) continue;
    // Same payload, no delay: a page that is slow for this input anyway stops here.
    const control = await send(env, withValue(point, variant.payload(v, 0)));
    if (!control || slow.durationMs - control.durationMs < long * 1000 - tol) continue;
    const shorter = await send(env, withValue(point, variant.payload(v, short)));
    if (!shorter || shorter.durationMs - control.durationMs < short * 1000 - tol || slow.durationMs - shorter.durationMs < (long - short) * 1000 - tol) continue;
    const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
    return {
      rule,
      variant: variant.name,
      exchange: slow,
      evidence: `${pointName(point)}=${variant.payload(v, long)} took ${s(slow.durationMs)}; with ${short} s: ${s(shorter.durationMs)}; with 0 s: ${s(control.durationMs)} (baseline ${s(baseline.durationMs)})`,
    };
  }
  return null;
}

export function checkSqliTime(env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange, first?: string): Promise<ActiveHit | null> {
  return timingProof(env, point, baseline, SQL_SLEEPS, 'dast-sqli-time', first);
}

export function checkCmdiTime(env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange, first?: string): Promise<ActiveHit | null> {
  return timingProof(env, point, baseline, SHELL_SLEEPS, 'dast-cmdi-time', first);
}

// ---------------------------------------------------------------- open redirect

const URLISH_NAME = /(?:^|[_-])(?:url|uri|redirect|redir|next|return|returnto|return_?url|goto|go|dest|destination|continue|target|to|back|callback|forward|r|u|link|out)$/i;

export function looksUrlValued(point: InjectionPoint): boolean {
  const v = pointValue(point);
  return /^(?:https?:)?\/\//i.test(v) || v.startsWith('/') || URLISH_NAME.test(pointName(point));
}

const REDIRECT_PAYLOADS: Array<[name: string, value: string]> = [
  ['absolute', `https://${REDIRECT_HOST}/`],
  ['protocol-relative', `//${REDIRECT_HOST}/`],
];

export async function checkOpenRedirect(env: ActiveEnv, point: InjectionPoint, first?: string): Promise<ActiveHit | null> {
  const order = [...REDIRECT_PAYLOADS].sort((a, b) => Number(b[0] === first) - Number(a[0] === first));
  for (const [name, value] of order) {
    const ex = await send(env, withValue(point, value));
    const location = ex?.headers.location;
    if (!ex || ex.status < 300 || ex.status >= 400 || !location) continue;
    let host: string;
    try {
      host = new URL(location, ex.request.url).hostname;
    } catch {
      continue;
    }
    if (host === REDIRECT_HOST) return { rule: 'dast-open-redirect', variant: name, exchange: ex, evidence: `${ex.status} Location: ${clip(location, 150)}` };
  }
  return null;
}

// ---------------------------------------------------------------- path traversal

const FILEISH_NAME = /file|path|doc|folder|dir|template|include|page|load|read|download|attachment|image|img/i;

export function looksFileValued(point: InjectionPoint): boolean {
  const v = pointValue(point);
  if (/^[^\s@/]+@[^\s@/]+$/.test(v)) return false; // an e-mail address, not a file name
  return /\.[a-z0-9]{1,5}$/i.test(v) || v.includes('/') || v.includes('\\') || FILEISH_NAME.test(pointName(point));
}

const FILE_SIGNATURES: Array<[file: string, pattern: RegExp]> = [
  ['/etc/passwd', /\broot:[x*!]?:0:0:[^\n<]{0,60}/],
  ['win.ini', /; for 16-bit app support|\[mci extensions\]/i],
];

export function fileSignature(body: string): { file: string; text: string } | null {
  for (const [file, pattern] of FILE_SIGNATURES) {
    const m = pattern.exec(body);
    if (m) return { file, text: m[0] };
  }
  return null;
}

const UP = '../'.repeat(8);
const TRAVERSAL_PAYLOADS: Array<[name: string, value: string]> = [
  ['relative', `${UP}etc/passwd`],
  ['absolute', '/etc/passwd'],
  ['double-encoded', `${'..%2f'.repeat(8)}etc%2fpasswd`],
  ['filter-evading', `${'....//'.repeat(8)}etc/passwd`],
  ['windows', `${'..\\'.repeat(8)}windows\\win.ini`],
];

export async function checkTraversalParam(env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange, first?: string): Promise<ActiveHit | null> {
  if (fileSignature(baseline.body)) return null;
  const order = [...TRAVERSAL_PAYLOADS].sort((a, b) => Number(b[0] === first) - Number(a[0] === first));
  for (const [name, value] of order) {
    const ex = await send(env, withValue(point, value));
    const sig = ex ? fileSignature(ex.body) : null;
    if (ex && sig) return { rule: 'dast-path-traversal', variant: name, exchange: ex, evidence: `${pointName(point)}=${value} returned ${sig.file}: ${clip(sig.text, 80)}`, proof: clip(sig.text, 200) };
  }
  return null;
}

// Traversal in the URL path itself, sent raw (ScanHttp does not normalise `..`).
const PATH_PAYLOADS: Array<[name: string, suffix: string]> = [
  ['raw', `${UP}etc/passwd`],
  ['encoded-slash', `${'..%2f'.repeat(8)}etc%2fpasswd`],
];

export async function checkTraversalPath(env: ActiveEnv, dirUrl: string, baseline: HttpExchange, first?: string): Promise<ActiveHit | null> {
  if (fileSignature(baseline.body)) return null;
  const order = [...PATH_PAYLOADS].sort((a, b) => Number(b[0] === first) - Number(a[0] === first));
  for (const [name, suffix] of order) {
    const ex = await send(env, { method: 'GET', url: `${dirUrl}${suffix}` });
    const sig = ex ? fileSignature(ex.body) : null;
    if (ex && sig) return { rule: 'dast-path-traversal', variant: name, exchange: ex, evidence: `GET ${new URL(dirUrl).pathname}${suffix} returned ${sig.file}: ${clip(sig.text, 80)}`, proof: clip(sig.text, 200) };
  }
  return null;
}
