// Canonicalisation: the one text each input is turned into before the rules see it, so that a rule
// is written once against plain lower-case text and every encoding of an attack reads the same.
// Field values arrive percent-decoded once (the way the origin's framework reads them); from there:
//
//   1. percent-decoding again, up to twice more, while `%XX` / `%uXXXX` escapes remain (double and
//      triple encoding: `%2527` → `%27` → `'`), leniently as inspect/percent.ts decodes (overlong
//      UTF-8 and `%u` included). `+` is left alone: it was already read as a space or sent as `%2B`.
//      A `%A0` left over (not UTF-8 on its own) is a Latin-1 no-break space, read as a space;
//   2. HTML and XML character references: decimal and hex (`&#60;`, `&#x3c`, with or without `;`,
//      any number of leading zeros) and the named ones that matter for markup and scripts (`&lt;`,
//      `&colon;`, `&Tab;`, `&lpar;`, …; the legacy ones — lt, gt, amp, quot, nbsp — also without `;`),
//      twice when the first pass leaves references behind (`&amp;lpar;`);
//   3. JavaScript escapes `\xXX`, `\uXXXX`, `\u{…}` (a string or identifier in a script context);
//   4. NUL characters and invisible format characters (zero-width spaces, soft hyphens) removed;
//   5. text with non-ASCII characters is NFKC-normalised (fullwidth `＜ｓｃｒｉｐｔ＞`, `①⑥⑨`,
//      ligatures) and typographic quotes and slashes are mapped to their ASCII forms (’ → ', ∕ → /);
//   6. lower case;
//   7. SQL block comments: `/*!50000union*/` (a MySQL executable comment) keeps its content, every
//      other `/* … */` becomes one space (`un/**/ion` is two tokens to SQL too; `union/**/select`
//      is `union select`), and a stray `*/` is a space. `/*` means nothing to HTML, so when a closed
//      comment held something, a second text keeps it (only the delimiters become spaces) and both
//      are matched: `/*<svg onload=alert(1)>*/` must not vanish;
//   8. whitespace runs collapse to one space, or to one `\n` when the run holds a line break
//      (line breaks separate shell commands and end SQL `#`/`--` comments, so they are kept).
//
// The `shell` form (for command-injection rules, built only when the text holds one of `; | & $ \``
// or a line break, written or escaped as `\n`) reads an escaped `\n` or `\r` as the line break
// `echo -e`, a JSON string or a log line makes of it, and removes what a shell removes before
// running a word: quotes, `\` inside or before a word, `^` (cmd.exe), `$@`, `$*`, `$1`, empty `$()`
// and `${…}` expansions, a variable glued to the end of a word or the start of a path (`uname$u`,
// `c$u\at`, `$u/bin$u/cat`: unset, it is empty); `$IFS` and `${IFS}` become spaces, and so do
// braces, commas, input redirection (`{cat,/etc/passwd}`, `cat</etc/passwd`) and a `+` between a
// word and a path or an option (`cat+/etc/passwd`: a form-encoded space, which an application
// decoding the value once more turns into one).
//
// Further texts an input is also matched as (canonicalForms): the decoded text of a value that is
// wholly base64 or base64url of printable text (base64-text.ts) — also once its JavaScript escapes
// are undone, as a chain of encoders leaves it (`\u0063\u006dVx…` is base64) —, and the text with string
// concatenations folded — `'un'||'ion'`, `"ex"&"e"&"cute"`, `'sel'+'ect'` become one literal, the
// way SQL, VBScript and JavaScript join them before running them — and the text with short tags
// inside words and CDATA markers removed (`o<x>nfocus` → `onfocus`, `<![CDATA[<]]>script` →
// `<script`), as a tag-stripping sanitiser or an XML parser would leave it, and — for a text with a
// backslash or a block comment — the text as CSS reads it: escapes decoded (`\6a\61vascript`,
// `@im\port`) and, beside a declaration's `:`, comments removed without a space (`x:expr/**/ession(`).
//
// Every step is a bounded scan: regular expressions here have no nested or overlapping quantifiers,
// and comment pairing is done with indexOf, so canonicalising is linear in the input.
import RE2 from 're2';
import { ATTACK_COMMAND_LINE, COMMAND_LINE, WILDCARD_ROOT } from '../../../schemas/managed-rules/data/fragments.ts';
import { decodePercent } from '../../inspect/percent.ts';
import { base64Text } from './base64-text.ts';
import { isInert } from './prefilter.ts';

const PERCENT_ESCAPE = /%(?:[0-9a-f]{2}|u[0-9a-f]{4})/i;
/** Decoding passes after the framework's one: double and triple encoding. */
const EXTRA_DECODES = 2;

/** Named character references worth decoding: markup, script and URL punctuation, and quotes. */
const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  lt: '<', gt: '>', amp: '&', quot: '"', apos: "'", nbsp: ' ', tab: '\t', newline: '\n', colon: ':', semi: ';', comma: ',',
  period: '.', excl: '!', quest: '?', num: '#', dollar: '$', percnt: '%', lpar: '(', rpar: ')', ast: '*', midast: '*', plus: '+',
  sol: '/', bsol: '\\', lsqb: '[', rsqb: ']', lbrack: '[', rbrack: ']', lcub: '{', rcub: '}', lbrace: '{', rbrace: '}', verbar: '|',
  vert: '|', equals: '=', lowbar: '_', grave: '`', hat: '^', commat: '@', hyphen: '-', dash: '-', lsquo: "'", rsquo: "'", ldquo: '"',
  rdquo: '"', sbquo: "'", bdquo: '"', prime: "'", lsaquo: '<', rsaquo: '>',
};
/** Named references browsers decode even without the `;` (the legacy set, in text). */
const LEGACY_ENTITIES: ReadonlySet<string> = new Set(['lt', 'gt', 'amp', 'quot', 'nbsp']);
const ENTITY = /&(?:#x([0-9a-f]+)|#(\d+)|([a-z][a-z0-9]{1,31}))(;?)/gi;

function fromCodePoint(value: number): string {
  if (value === 0) return '';
  if (!(value > 0 && value <= 0x10ffff) || (value >= 0xd800 && value <= 0xdfff)) return '\ufffd';
  return String.fromCodePoint(value);
}

function decodeEntities(text: string): string {
  return text.replace(ENTITY, (match: string, hex: string | undefined, dec: string | undefined, name: string | undefined, semi: string) => {
    if (hex !== undefined) return fromCodePoint(hex.length > 8 ? -1 : Number.parseInt(hex, 16));
    if (dec !== undefined) return fromCodePoint(dec.length > 10 ? -1 : Number(dec));
    const lower = name!.toLowerCase();
    const decoded = NAMED_ENTITIES[lower];
    if (decoded === undefined || (semi === '' && !LEGACY_ENTITIES.has(lower))) return match;
    return decoded;
  });
}

const JS_ESCAPE = /\\(?:x([0-9a-f]{2})|u\{([0-9a-f]{1,6})\}|u([0-9a-f]{4}))/gi;

function decodeJsEscapes(text: string): string {
  return text.replace(JS_ESCAPE, (_m: string, x: string | undefined, braced: string | undefined, u: string | undefined) => fromCodePoint(Number.parseInt((x ?? braced ?? u)!, 16)));
}

const NON_ASCII = /[^\x00-\x7f]/;
/** Typographic look-alikes NFKC keeps, and invisible characters: mapped to ASCII or removed. */
const LOOKALIKE = /[\u2018\u2019\u201a\u201b\u2032\u02bc\u02b9\u201c\u201d\u201e\u201f\u2033\u02ba\u2215\u2216\u2044\u29f8\u29f9\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]/g;
const LOOKALIKE_MAP: Readonly<Record<string, string>> = {
  '\u2018': "'", '\u2019': "'", '\u201a': "'", '\u201b': "'", '\u2032': "'", '\u02bc': "'", '\u02b9': "'",
  '\u201c': '"', '\u201d': '"', '\u201e': '"', '\u201f': '"', '\u2033': '"', '\u02ba': '"',
  '\u2215': '/', '\u2044': '/', '\u29f8': '/', '\u29f9': '\\', '\u2216': '\\',
};

/** `/* … *\/` → `joiner` (one space by default), pairing each opener with the next closer; an unclosed opener stays. */
function stripBlockComments(text: string, joiner = ' '): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = text.indexOf('/*', at);
    if (open < 0) break;
    const close = text.indexOf('*/', open + 2);
    if (close < 0) break;
    out += text.slice(at, open) + joiner;
    at = close + 2;
  }
  return at === 0 ? text : out + text.slice(at);
}

const WHITESPACE_TO_COLLAPSE = /\s\s|[^\S ]/;
const WHITESPACE_RUN = /\s+/g;
const LINE_BREAK = /[\n\r\u2028\u2029\x85]/;
const collapseRun = (run: string): string => (LINE_BREAK.test(run) ? '\n' : ' ');

export interface CanonicalOptions {
  /**
   * The input has not been percent-decoded yet and is a URL (the Referer header): decode once
   * with `+` as a space first, as the origin would read its query string.
   */
  rawUrl?: boolean;
  /** The input is a request path: base64 carriers are its segments (base64-text.ts). */
  path?: boolean;
  /**
   * The input is a User-Agent: a list of `product/version` tokens, never a command, so one that
   * starts like any command line (`ansible-playbook site.yml`, `env --version`) gets its shell form.
   */
  userAgent?: boolean;
}

/** Steps 1–6 of the file comment: decoding, NUL, Unicode, case. */
function decoded(raw: string, options: CanonicalOptions | undefined): string {
  let text = options?.rawUrl ? decodePercent(raw, true) : raw;
  for (let pass = 0; pass < EXTRA_DECODES && text.includes('%') && PERCENT_ESCAPE.test(text); pass++) {
    const next = decodePercent(text, false);
    if (next === text) break;
    text = next;
  }
  // A lone %A0 is no UTF-8, so it stays escaped; in Latin-1 it is a no-break space, which MySQL reads as one.
  if (text.includes('%')) text = text.replace(/%a0/gi, ' ');
  if (text.includes('&')) {
    text = decodeEntities(text);
    if (text.includes('&')) text = decodeEntities(text);
  }
  if (text.includes('\\')) text = decodeJsEscapes(text);
  if (text.includes('\0')) text = text.replace(/\0/g, '');
  if (NON_ASCII.test(text)) text = text.normalize('NFKC').replace(LOOKALIKE, (ch) => LOOKALIKE_MAP[ch] ?? '');
  return text.toLowerCase();
}

const collapse = (text: string): string => (WHITESPACE_TO_COLLAPSE.test(text) ? text.replace(WHITESPACE_RUN, collapseRun) : text);
const MYSQL_EXECUTABLE_COMMENT = /\/\*!\d*/g;

/** Steps 7–8 on a decoded text: the SQL reading of block comments. */
function withoutComments(text: string): string {
  let out = text;
  if (out.includes('/*')) out = stripBlockComments(out.replace(MYSQL_EXECUTABLE_COMMENT, ' '));
  if (out.includes('*/')) out = out.replaceAll('*/', ' ');
  return collapse(out);
}

/** The canonical text of one input (see the file comment): the SQL reading of comments. */
export function canonicalText(raw: string, options?: CanonicalOptions): string {
  return withoutComments(decoded(raw, options));
}

/**
 * Every text an input is matched as: the canonical text, and — when block comments removed
 * something — the same text with the comments' content kept (see step 7).
 */
export function canonicalForms(raw: string, options?: CanonicalOptions): readonly string[] {
  const forms = textForms(decoded(raw, options));
  for (const candidate of options?.path ? pathCarriers(raw) : valueCarriers(raw)) {
    const carried = base64Text(candidate);
    if (carried !== null) return [...forms, ...textForms(decoded(carried, undefined))];
  }
  return forms;
}

/**
 * Where a value may carry base64: all of it — once its JavaScript escapes are decoded, when it has a
 * backslash (no base64 alphabet has one, so the value as sent cannot be base64 then).
 */
function valueCarriers(raw: string): string[] {
  const value = raw.trim();
  return [value.includes('\\') ? decodeJsEscapes(value).trim() : value];
}

/** Where a path may carry base64: everything after the first slash, or its last segment. */
function pathCarriers(path: string): string[] {
  const rest = path.replace(/^\/+/, '');
  const last = rest.slice(rest.lastIndexOf('/') + 1);
  return last === rest ? [rest] : [rest, last];
}

/** String literals joined by a concatenation operator: `'a' || 'b'`, `"a"&"b"`, `'a'+'b'`, `'a' 'b'`. */
const CONCATENATION = /(['"])\s*(?:\|\||&|\+|\.)?\s*\1/g;

/**
 * A short comment inside a word (`uni/**\/on`), which a filter that strips comments removes, joining
 * the word; not after a path segment (`src/tests/**\/x` is a glob).
 */
const COMMENT_INSIDE_WORD = /(^|[^\w/])(\w+)\/\*[^*\n]{0,16}\*\/(?=[a-z_])/g;

/** A short tag inside a word (`o<x>nfocus`), which a tag-stripping sanitiser removes, joining the word. */
const TAG_INSIDE_WORD = /([a-z])<\/?[a-z]{0,8}>(?=[a-z(])/g;

function textForms(text: string): string[] {
  const primary = withoutComments(text);
  const forms = [primary];
  if (text.includes('/*')) {
    const kept = collapse(text.replace(MYSQL_EXECUTABLE_COMMENT, ' ').replaceAll('/*', ' ').replaceAll('*/', ' '));
    if (kept !== primary) forms.push(kept);
    const joined = withoutComments(text.replace(COMMENT_INSIDE_WORD, '$1$2'));
    if (joined !== primary) forms.push(joined);
  }
  if (primary.includes("'") || primary.includes('"')) {
    const folded = primary.replace(CONCATENATION, '');
    if (folded !== primary) forms.push(folded);
  }
  if (primary.includes('<')) {
    const stripped = primary.replace(TAG_INSIDE_WORD, '$1').replaceAll('<![cdata[', '').replaceAll(']]>', '');
    if (stripped !== primary) forms.push(stripped);
  }
  const css = cssReading(text);
  if (css !== null && !forms.includes(css)) forms.push(css);
  return forms;
}

/** A CSS escape: up to six hex digits and one optional space, or `\` before any other character but a line break. */
const CSS_ESCAPE = /\\(?:([0-9a-f]{1,6}) ?|([^\n0-9a-f]))/g;

/**
 * The text as a style sheet reads it, when that differs: CSS escapes decoded (`\0075\0072\006c(` is
 * `url(`, `@im\port` is `@import`) and, in a text with a declaration's `:`, comments removed without
 * a trace (`x:expr/**\/ession(` is `x:expression(`, as old Internet Explorer and comment-stripping
 * sanitisers read it; a path glob, `src/**\/test`, has no colon).
 */
function cssReading(text: string): string | null {
  const escaped = text.includes('\\');
  const commented = text.includes('/*') && text.includes(':');
  if (!escaped && !commented) return null;
  let css = escaped ? text.replace(CSS_ESCAPE, (_m: string, hex: string | undefined, char: string | undefined) => (hex !== undefined ? fromCodePoint(Number.parseInt(hex, 16)) : char!)).toLowerCase() : text;
  if (commented) css = stripBlockComments(css, '');
  return collapse(css);
}

/**
 * Characters without which no command can be injected into a larger command — the shell form is
 * only built with one; an escaped line break counts —, the Windows interpreters, which a value can name whole (`powershell
 * -nop -c "…"`), bash's network redirection (`/dev/tcp/`) and a path spelled with wildcards (`/???/b??h`).
 */
const SHELL_TRIGGER = new RegExp(String.raw`[;|&\x60$\n]|\\[nr]|\b(?:powershell|pwsh|cmd)\b|/dev/(?:tcp|udp)/|${WILDCARD_ROOT}`);
/**
 * A value that is an attack-shaped command line on its own (`ls -la /etc/`, `net user x /add`:
 * fragments.ts ATTACK_COMMAND_LINE, matched by cmdi.command_line) needs no metacharacter, only not
 * to be a text the fast path skips (prefilter.ts): words alone (`sleep 100`) stay words. RE2: it
 * reads values.
 */
const LEADING_COMMAND = new RE2(`^\\s*(?:['"]\\s*)?(?:${ATTACK_COMMAND_LINE})`, 'u');
/** Any command line, quoted or not, where a User-Agent should stand. RE2: it reads headers. */
const LEADING_COMMAND_LINE = new RE2(`^\\s*['"]?(?:${COMMAND_LINE})`, 'u');

export function mayHoldCommand(canonical: string, options?: CanonicalOptions): boolean {
  return SHELL_TRIGGER.test(canonical) || (LEADING_COMMAND.test(canonical) && !isInert(canonical)) || (options?.userAgent === true && LEADING_COMMAND_LINE.test(canonical));
}

/** The shell form of a canonical text (see the file comment). */
export function shellForm(canonical: string): string {
  return canonical
    .replace(/\\[nr]/g, '\n')
    .replace(/\$\{ifs\}|\$ifs\b/g, ' ')
    .replace(/\$(?=['"])|\$\{[^}\n]{0,64}\}|\$[@*#?!\d-]|\$\(\s*\)|``|['"^]/g, '')
    .replace(/([a-z])\$[a-z_]\w{0,30}(?![\w(\[])|(^|[\s;|&+])\$[a-z_]\w{0,30}(?=\/)/g, '$1$2')
    .replace(/([a-z])\\(?=[a-z])|(^|[\s;|&`(])\\(?=[a-z])/g, '$1$2')
    .replace(/[{},<]/g, ' ')
    .replace(/([a-z\d])\+(?=[/~-])/g, '$1 ')
    .replace(/ {2,}/g, ' ');
}
