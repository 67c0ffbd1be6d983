// Masks every secret in a text before it leaves Aegis (an AI triage prompt, a source window). Two
// layers: the secrets scanner's own rules (what a secrets scan reports is exactly what gets masked)
// and broader patterns tuned for recall rather than precision — PEM private keys, credential-named
// assignments, credentials in URLs, Authorization and cookie headers, vendor token formats — since masking a non-secret costs a
// little context while leaking one is the failure that matters. Every secret found is then masked
// wherever else it occurs in the text. All matching is RE2 or plain scanning: linear time.
import RE2 from 're2';
import { findAllHits } from './decode.ts';
import { createScratch, type MatchScratch } from './match.ts';
import { loadRuleSet, type RuleSet } from './rules.ts';

/** A byte range of a text to mask, with what found it. */
export interface SecretSpan {
  start: number;
  end: number;
  /** Rule id, or `private-key`, `credential-assignment`, `url-credential`, `authorization`, `cookie`, `token`, `known-secret`, `repeated-secret`. */
  label: string;
}

export interface SpanOptions {
  /** Values known to be secret: every occurrence is masked (values under MIN_EXTRA characters are ignored). */
  extra?: readonly string[];
  /** Relative path the text comes from: path-gated scanner rules apply as in a scan of that file. */
  path?: string;
  /** Receives the secret of every scanner-rule hit (to match a secrets finding's digest). */
  ruleSecrets?: string[];
}

/** Shorter known values would mask ordinary words; no credential is this short. */
const MIN_EXTRA = 4;
/** Found values masked again wherever they recur: only from this length (a URL's `pass` is a common word). */
const MIN_REPEATED = 8;
/** Distinct found values searched for again: bounds the cost on a file with thousands of hits. */
const MAX_REPEATED_VALUES = 200;
/** Assignment values shorter than this are settings (`token: 3600` is caught only from 6). */
const MIN_ASSIGNED = 6;
const DEFAULT_PATH = 'redact.txt';

// The compiled rules are cached by loadRuleSet (per thread); the scratch buffers belong to them.
let cached: { rules: RuleSet; scratch: MatchScratch } | undefined;
function scanner(): { rules: RuleSet; scratch: MatchScratch } {
  const rules = loadRuleSet();
  if (cached === undefined || cached.rules !== rules) cached = { rules, scratch: createScratch(rules) };
  return cached;
}

const KEYWORD = '(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)';
// key, optional closing quote (JSON/dict keys, \" inside a JSON string), separator, value: quoted
// (", ', `, or \"…\" when the text is itself an escaped string) or bare
const ASSIGNMENT = new RE2(
  `(?P<key>[A-Za-z0-9_.-]{0,40}(?i:${KEYWORD})[A-Za-z0-9_.-]{0,40})(?:\\\\?["'\`])?[ \\t]*(?::=|=>|\\?=|=|:)[ \\t]*` +
    `(?:\\\\"(?P<esc>[^"\\\\\\r\\n]{1,512})\\\\"|"(?P<dq>(?:[^"\\\\\\r\\n]|\\\\.){1,512})"|'(?P<sq>[^'\\r\\n]{1,512})'|\`(?P<bq>[^\`\\r\\n]{1,512})\`|(?P<bare>[^\\s'"\`,;&]{1,512}))`,
  'gdu',
);
// `?token=…&api_key=…` in URLs and form bodies (`password=…&user=…` starting a line): the value
// ends at `&`, `#` or a quote, not at the line's end
const QUERY_PARAM = new RE2(`(?:[?&]|(?m:^))(?P<key>[A-Za-z0-9_.-]{0,40}(?i:${KEYWORD})[A-Za-z0-9_.-]{0,40})=(?P<value>[^&#\\s"'<>]{1,512})`, 'gdu');
// scheme://user:password@ or scheme://long-token@ (the greedy userinfo stops at the authority's last @)
const URL_USERINFO = new RE2('[A-Za-z][A-Za-z0-9+.-]{1,30}://(?P<userinfo>[^\\s/?#\'"<>`@]{1,256}(?:@[^\\s/?#\'"<>`@]{1,256})*)@', 'gdu');
const AUTH_HEADER = new RE2(
  `(?i:(?:proxy-)?authorization)(?:\\\\?["'])?[ \\t]*(?:=>|[:=,])[ \\t]*(?:\\\\?["'\`])?(?i:bearer|basic|token|digest|apikey|api-key|negotiate|ntlm|aws4-hmac-sha256)[ \\t]+(?P<cred>[^\\s"'\`\\\\<>]{4,1000})`,
  'gdu',
);
// a bearer token wherever it appears (`"Bearer eyJ…"` built into a header in code)
const BEARER = new RE2('(?i:bearer)[ \\t]+(?P<cred>[A-Za-z0-9._~+/-]{16,1000}=*)', 'gdu');
// Vendor token formats by their prefixes alone — no checksum, entropy or placeholder test (those
// keep a scan's findings precise; here a token-shaped value with a bad checksum is still masked).
const TOKEN_SHAPES = new RE2(
  '\\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255}|glpat-[A-Za-z0-9_-]{20,64}|xox[abposre]-[A-Za-z0-9-]{10,255}|xapp-[A-Za-z0-9-]{10,255}' +
    '|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{20,64}|(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|AIza[0-9A-Za-z_-]{35}' +
    '|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,255}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,255}|hf_[A-Za-z0-9]{30,64}|dop_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}' +
    '|SG\\.[A-Za-z0-9_-]{16,64}\\.[A-Za-z0-9_-]{16,64}|eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,})\\b',
  'gdu',
);
// `Cookie:` / `Set-Cookie:` headers (request and response excerpts of URL findings): session values
const COOKIE_HEADER = new RE2('(?i:(?P<set>set-)?cookie)[ \\t]*:[ \\t]*(?P<value>[^\\r\\n]+)', 'gdu');
/** Cookie values shorter than this are flags (`consent=1`), not sessions. */
const MIN_COOKIE_VALUE = 6;
const PEM_BEGIN = new RE2('-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----', 'gdu');
const PEM_END = new RE2('-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----', 'gdu');

/** What a key named like a credential but holding a setting ends with (`token_type`, `password_min_length`). */
const SETTING_SUFFIX =
  /^[_.-]?(?:encryption|policy|length|len|min|max|hash|hashing|algorithm|alg|type|format|prompt|field|column|name|label|file|path|dir|url|uri|endpoint|expir\w*|ttl|timeout|reset|strength|rules?|version|id|ref|header|count|limit|size|regex|pattern|validat\w*|required|enabled|env|var|kind|mode|lifetime|duration|store|provider|source|location|manager|service|generator)\b/i;

const PLACEHOLDER_WORDS = ['changeme', 'change_me', 'change-me', 'placeholder', 'example', 'your_', 'your-', 'yourpassword', 'redacted', 'dummy', 'replace_me', 'replaceme', 'insert_', 'notreal', 'not_real', 'xxxx'];
const LITERALS = new Set(['null', 'none', 'nil', 'undefined', 'true', 'false', 'yes', 'no', 'required', 'optional', 'empty', 'string', 'str', 'bool', 'boolean', 'number', 'int', 'object']);

/** A value that is clearly not a credential: a template reference, a masked value, a marker of ours. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (v.startsWith('[REDACTED')) return true;
  if (/\$\{|\{\{|%\(|…|\.\.\.|\*{3}/.test(v)) return true;
  if (/^<[^<>]*>$/.test(v) || /^\$[A-Za-z_]\w*$/.test(v) || /^%[A-Za-z_]\w*%$/.test(v)) return true;
  if (/^(.)\1*$/.test(v)) return true;
  const lower = v.toLowerCase();
  if (LITERALS.has(lower)) return true;
  return PLACEHOLDER_WORDS.some((w) => lower.includes(w));
}

/** A bare (unquoted) value that is code, not a literal: `req.body.password`, `getToken()`, `DB_PASSWORD`. */
function isExpression(value: string): boolean {
  return (
    /[()[\]{}]/.test(value) ||
    /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value) ||
    /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(value) ||
    /^(?:process\.env|os\.environ|ENV|env|config|settings|self|this)\b/.test(value)
  );
}

/** True when some credential word of `key` is a whole word of it and not a setting's name. */
function credentialKey(key: string): boolean {
  const re = /password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret/gi;
  for (let m = re.exec(key); m !== null; m = re.exec(key)) {
    const rest = key.slice(m.index + m[0].length);
    if (rest === '' || rest.toLowerCase() === 's') return true;
    const next = rest[0]!;
    const camel = /[A-Z]/.test(next) && /[a-z]/.test(m[0].slice(-1));
    if (!(/[_.\-0-9]/.test(next) || camel)) continue; // `tokenizer`, `passwordless`
    if (!SETTING_SUFFIX.test(rest)) return true;
  }
  return false;
}

/** Offset moved off UTF-8 continuation bytes (backward for a start, forward for an end). */
function charBoundary(buf: Buffer, offset: number, forward: boolean): number {
  let i = offset;
  while (i > 0 && i < buf.length && (buf[i]! & 0xc0) === 0x80) i += forward ? 1 : -1;
  return i;
}

interface Indices {
  [index: number]: [number, number] | undefined;
  groups?: Record<string, [number, number] | undefined>;
}

function* matches(re: RE2, buf: Buffer): Generator<Indices> {
  re.lastIndex = 0;
  for (;;) {
    const m = re.exec(buf);
    if (m === null) return;
    const indices = (m as unknown as { indices: Indices }).indices;
    const [s, e] = indices[0]!;
    if (e === s) re.lastIndex = e + 1;
    yield indices;
  }
}

function group(indices: Indices, name: string): [number, number] | undefined {
  return indices.groups?.[name];
}

function lineEndsAfter(buf: Buffer, offset: number): boolean {
  let i = offset;
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x09)) i++;
  if (i >= buf.length || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x23) return true;
  // a line break written as `\n` (the text is an escaped string, e.g. JSON)
  return buf[i] === 0x5c && buf[i + 1] === 0x6e;
}

function assignmentSpans(buf: Buffer, out: SecretSpan[]): void {
  for (const m of matches(ASSIGNMENT, buf)) {
    const key = group(m, 'key');
    if (key === undefined || !credentialKey(buf.toString('utf8', key[0], key[1]))) {
      // the value may itself hold an assignment (`db: password: x`): resume right after the key
      if (key !== undefined) ASSIGNMENT.lastIndex = key[1];
      continue;
    }
    let range: [number, number] | undefined;
    let bare = false;
    for (const name of ['esc', 'dq', 'sq', 'bq', 'bare']) {
      range = group(m, name);
      if (range !== undefined) {
        bare = name === 'bare';
        break;
      }
    }
    if (range === undefined) continue;
    const value = buf.toString('utf8', range[0], range[1]);
    if ([...value.trim()].length < MIN_ASSIGNED || isPlaceholder(value)) continue;
    // a bare value counts when it ends its line (.env, YAML, properties), not as an expression in code
    if (bare && (!lineEndsAfter(buf, range[1]) || isExpression(value))) {
      ASSIGNMENT.lastIndex = range[0];
      continue;
    }
    out.push({ start: range[0], end: range[1], label: 'credential-assignment' });
  }
  for (const m of matches(QUERY_PARAM, buf)) {
    const range = group(m, 'value')!;
    const key = group(m, 'key')!;
    const value = buf.toString('utf8', range[0], range[1]);
    if (!credentialKey(buf.toString('utf8', key[0], key[1])) || value.length < MIN_ASSIGNED || isPlaceholder(value) || isExpression(value)) continue;
    out.push({ start: range[0], end: range[1], label: 'credential-assignment' });
  }
}

function urlSpans(buf: Buffer, out: SecretSpan[]): void {
  for (const m of matches(URL_USERINFO, buf)) {
    const [s, e] = group(m, 'userinfo')!;
    const colon = buf.indexOf(0x3a, s);
    if (colon >= 0 && colon < e) {
      const password = buf.toString('utf8', colon + 1, e);
      if (password.length > 0 && !isPlaceholder(password)) out.push({ start: colon + 1, end: e, label: 'url-credential' });
    } else if (e - s >= 16 && !isPlaceholder(buf.toString('utf8', s, e))) {
      // a token as the user name (https://<token>@github.com)
      out.push({ start: s, end: e, label: 'url-credential' });
    }
  }
}

function tokenShapeSpans(buf: Buffer, out: SecretSpan[]): void {
  for (const m of matches(TOKEN_SHAPES, buf)) {
    const [s, e] = m[0]!;
    out.push({ start: s, end: e, label: 'token' });
  }
}

/** The values of a cookie header's `name=value` pairs (Set-Cookie: the first pair only; the attributes stay). */
function cookieSpans(buf: Buffer, out: SecretSpan[]): void {
  for (const m of matches(COOKIE_HEADER, buf)) {
    const [s, e] = group(m, 'value')!;
    const onlyFirst = group(m, 'set') !== undefined;
    let pos = s;
    while (pos < e) {
      let end = buf.indexOf(0x3b, pos); // ;
      if (end < 0 || end > e) end = e;
      const eq = buf.indexOf(0x3d, pos); // =
      if (eq >= 0 && eq < end) {
        let vs = eq + 1;
        let ve = end;
        while (vs < ve && (buf[vs] === 0x20 || buf[vs] === 0x22)) vs++;
        while (ve > vs && (buf[ve - 1] === 0x20 || buf[ve - 1] === 0x22)) ve--;
        if (ve - vs >= MIN_COOKIE_VALUE && !isPlaceholder(buf.toString('utf8', vs, ve))) out.push({ start: vs, end: ve, label: 'cookie' });
      }
      if (onlyFirst) break;
      pos = end + 1;
    }
  }
}

function authorizationSpans(buf: Buffer, out: SecretSpan[]): void {
  for (const re of [AUTH_HEADER, BEARER]) {
    for (const m of matches(re, buf)) {
      const [s, e] = group(m, 'cred')!;
      if (!isPlaceholder(buf.toString('utf8', s, e))) out.push({ start: s, end: e, label: 'authorization' });
    }
  }
}

const isBase64Byte = (b: number): boolean =>
  (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2b || b === 0x2f || b === 0x3d;

/** A whole line of a key body: base64, maybe inside string-literal quoting, or an armor header. */
function keyBodyLine(line: string, last: boolean): boolean {
  if (/^\s*(?:Proc-Type|DEK-Info|Version|Comment):/.test(line)) return true;
  const bare = line.replace(/\\n|\\r|["'`+,;\s]/g, '');
  // the block's last line may be short; a short line further up is more likely code
  return bare.length >= (last ? 1 : 16) && /^[A-Za-z0-9+/=]+$/.test(bare);
}

/** Where the body of a block whose BEGIN is cut off starts: the key-like text just before its END. */
function cutBlockStart(buf: Buffer, endAt: number, floor: number): number {
  let i = endAt;
  // on END's own line: base64 and `\n` escapes (a key inside a one-line string)
  while (i > floor && (isBase64Byte(buf[i - 1]!) || buf[i - 1] === 0x5c)) i--;
  if (i > floor && buf[i - 1] !== 0x0a) return i;
  while (i > floor) {
    // (a negative offset would make lastIndexOf search from the end)
    const lineStart = Math.max(floor, i >= 2 ? buf.lastIndexOf(0x0a, i - 2) + 1 : 0);
    if (!keyBodyLine(buf.toString('utf8', lineStart, i - 1), i === endAt)) break;
    i = lineStart;
  }
  return i;
}

/**
 * PEM private key bodies. A block cut by the edge of the text (an excerpt, a window) is masked to
 * that edge: BEGIN without END to the end, END without BEGIN from where the key-like lines above it start.
 */
function pemSpans(buf: Buffer, out: SecretSpan[]): void {
  const push = (start: number, end: number): void => {
    const body = buf.toString('utf8', start, end).trim();
    // already masked (a text redacted twice) or empty
    if (body !== '' && !(body.startsWith('[REDACTED') && body.endsWith(']') && !body.includes('\n'))) out.push({ start, end, label: 'private-key' });
  };
  let consumed = 0;
  const begins = [...matches(PEM_BEGIN, buf)].map((m) => m[0]!);
  const ends = [...matches(PEM_END, buf)].map((m) => m[0]!);
  let e = 0;
  for (const b of begins) {
    if (b[0] < consumed) continue;
    // an END before this BEGIN with no BEGIN of its own: the tail of a block cut off above
    while (e < ends.length && ends[e]![0] < b[0]) {
      push(cutBlockStart(buf, ends[e]![0], consumed), ends[e]![0]);
      consumed = ends[e]![1];
      e++;
    }
    const end = e < ends.length ? ends[e]! : undefined;
    push(b[1], end?.[0] ?? buf.length);
    consumed = end?.[1] ?? buf.length;
    if (end !== undefined) e++;
  }
  for (; e < ends.length; e++) {
    push(cutBlockStart(buf, ends[e]![0], consumed), ends[e]![0]);
    consumed = ends[e]![1];
  }
}

function occurrences(buf: Buffer, value: string, label: string, out: SecretSpan[], min: number): void {
  if ([...value].length < min) return;
  const needle = Buffer.from(value, 'utf8');
  for (let i = buf.indexOf(needle); i >= 0; i = buf.indexOf(needle, i + needle.length)) out.push({ start: i, end: i + needle.length, label });
}

/** Overlapping spans merged (the first one's label kept), in order, on character boundaries. */
function mergeSpans(buf: Buffer, spans: SecretSpan[]): SecretSpan[] {
  const sorted = spans
    .map((s) => ({ start: charBoundary(buf, s.start, false), end: charBoundary(buf, s.end, true), label: s.label }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const out: SecretSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && s.start < last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** The secret spans of a text (byte offsets into `buf`), merged and sorted. */
export function secretSpans(buf: Buffer, options: SpanOptions = {}): SecretSpan[] {
  const spans: SecretSpan[] = [];
  const { rules, scratch } = scanner();
  const { hits, redact } = findAllHits(buf, rules, options.path ?? DEFAULT_PATH, scratch);
  for (const h of [...hits, ...redact]) {
    spans.push({ start: h.secretStart, end: h.secretEnd, label: h.rule.id });
    options.ruleSecrets?.push(h.secret);
  }
  pemSpans(buf, spans);
  assignmentSpans(buf, spans);
  urlSpans(buf, spans);
  authorizationSpans(buf, spans);
  tokenShapeSpans(buf, spans);
  cookieSpans(buf, spans);
  // every value found, and every value the caller knows, masked wherever else it occurs
  const found = new Set<string>();
  for (const s of spans) {
    if (found.size >= MAX_REPEATED_VALUES) break;
    if (s.label !== 'private-key') found.add(buf.toString('utf8', s.start, s.end));
  }
  for (const value of found) occurrences(buf, value, 'repeated-secret', spans, MIN_REPEATED);
  for (const value of new Set(options.extra ?? [])) occurrences(buf, value, 'known-secret', spans, MIN_EXTRA);
  return mergeSpans(buf, spans);
}

/** What replaces a secret: its finder and length, none of its characters. */
export function redactionMarker(label: string, secret: string): string {
  return `[REDACTED ${label} …(${[...secret].length})]`;
}

/**
 * The text with each span replaced by its marker. `keepLines`: a masked multi-line value keeps its
 * line breaks after the marker, so line numbers of the rest stay true (source windows).
 */
export function applySpans(buf: Buffer, spans: readonly SecretSpan[], keepLines = false): string {
  let out = '';
  let pos = 0;
  for (const s of spans) {
    out += buf.toString('utf8', pos, s.start);
    const secret = buf.toString('utf8', s.start, s.end);
    out += redactionMarker(s.label, secret);
    if (keepLines) {
      let n = 0;
      for (let i = buf.indexOf(0x0a, s.start); i >= 0 && i < s.end; i = buf.indexOf(0x0a, i + 1)) n++;
      out += '\n'.repeat(n);
    }
    pos = s.end;
  }
  return out + buf.toString('utf8', pos);
}

/** `extra`: values known to be secret (a finding's own), masked wherever they appear. */
export function redactSecrets(text: string, extra: readonly string[] = []): { text: string; count: number } {
  const buf = Buffer.from(text, 'utf8');
  const spans = secretSpans(buf, { extra });
  if (spans.length === 0) return { text, count: 0 };
  return { text: applySpans(buf, spans), count: spans.length };
}
