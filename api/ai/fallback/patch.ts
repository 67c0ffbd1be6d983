// Patches the fallback can write without a model: one-line rewrites whose result is fully
// determined by the line itself (and, for SQL placeholders and crypto imports, by what the source
// window shows). Each rewriter returns the new line or undefined; any doubt means no patch.
import { callArgs, concatParts, type Part } from './calls.ts';
import { lineAt, replaceLineDiff, splitWindow, type WindowLines } from './diff.ts';
import type { Family } from './rules.ts';
import type { FindingView } from './view.ts';

const JS_FILE = /\.(?:[cm]?js|[cm]?ts|jsx|tsx)$/i;
const PY_FILE = /\.py$/i;

export interface PatchResult {
  patch: string;
  /** What the patch does, for the fix summary. */
  note: string;
}

type Rewrite = (line: string, window: string, path: string) => { line: string; note: string } | undefined;

// ---- SQL: concatenation into .query()/.execute() → placeholders and a values array ----

/** Placeholder style of the driver the window shows: `$n` (pg, postgres) or `?` (mysql, sqlite). */
function placeholderStyle(window: string): 'dollar' | 'question' | undefined {
  const pg = /require\(\s*['"]pg['"]\s*\)|from\s+['"]pg['"]|\bnew\s+(?:pg\.)?(?:Pool|Client)\s*\(|\bpostgres(?:ql)?\b|\$\d+\b/i.test(window);
  const qm = /\bmysql2?\b|\bsqlite3?\b|better-sqlite3/i.test(window);
  if (pg === qm) return undefined;
  return pg ? 'dollar' : 'question';
}

// A bound parameter can stand only where SQL expects a value: after a comparison, LIKE, LIMIT,
// OFFSET, or inside VALUES (…)/IN (…). Elsewhere (a table or column name, ORDER BY) it would change
// the query's meaning, so no patch.
const VALUE_POSITION = /(?:=|<|>|<>|!=|\blike|\bilike|\blimit|\boffset|\bvalues\s*\(|\bin\s*\()\s*$/i;
const IN_VALUE_LIST = /\b(?:values|in)\s*\([^)]*$/i;

function sqlRewrite(line: string, window: string): { line: string; note: string } | undefined {
  const style = placeholderStyle(window);
  if (!style) return undefined;
  const call = /\.(?:query|execute)\s*\(/g;
  for (const m of line.matchAll(call)) {
    const paren = m.index + m[0].length - 1;
    const args = callArgs(line, paren);
    // A second argument (values, options, callback) already there: not a shape we rewrite.
    if (!args || args.args.length !== 1) continue;
    const parts = concatParts(args.args[0]!);
    if (!parts || parts[0]?.kind !== 'literal' || !parts.some((p) => p.kind === 'expr')) continue;
    const quote = parts[0].quote;
    if (parts.some((p) => p.kind === 'literal' && p.quote !== quote)) continue;
    const built = buildSql(parts, quote, style);
    if (!built) continue;
    const text = `${quote}${built.sql}${quote}, [${built.values.join(', ')}]`;
    return {
      line: line.slice(0, args.open) + text + line.slice(args.close),
      note: `binds ${built.values.join(', ')} as ${built.values.length === 1 ? 'a parameter' : 'parameters'} (${style === 'dollar' ? '$1…' : '?'}) instead of concatenating ${built.values.length === 1 ? 'it' : 'them'} into the SQL text`,
    };
  }
  return undefined;
}

function buildSql(input: readonly Part[], quote: string, style: 'dollar' | 'question'): { sql: string; values: string[] } | undefined {
  const parts = [...input];
  // The SQL quote as written in this JS literal: ' inside "…" or `…`, \' inside '…'.
  const sqlQuote = quote === "'" ? "\\'" : "'";
  let sql = '';
  const values: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.kind === 'literal') {
      sql += p.raw;
      continue;
    }
    const next = parts[i + 1];
    let nextRaw = next?.kind === 'literal' ? next.raw : undefined;
    if (sql.endsWith(sqlQuote)) {
      // A quoted SQL string around the value: the placeholder replaces the quotes too. Only when
      // the quotes close right after it (`'%' + x + '%'` style patterns are not rewritten).
      if (nextRaw === undefined || !nextRaw.startsWith(sqlQuote)) return undefined;
      sql = sql.slice(0, -sqlQuote.length);
      nextRaw = nextRaw.slice(sqlQuote.length);
      parts[i + 1] = { kind: 'literal', quote, raw: nextRaw };
    } else if (nextRaw?.startsWith(sqlQuote) || sql.endsWith('%') || nextRaw?.startsWith('%') || sql.endsWith('"')) return undefined;
    if (!VALUE_POSITION.test(sql) && !(sql.trimEnd().endsWith(',') && IN_VALUE_LIST.test(sql))) return undefined;
    values.push(p.text);
    sql += style === 'dollar' ? `$${values.length}` : '?';
  }
  if (quote === '`' && sql.includes('${')) return undefined;
  return { sql, values };
}

// ---- eval of JSON → JSON.parse ----

function evalRewrite(line: string): { line: string; note: string } | undefined {
  const m = /(?<![\w$.])eval\s*\(/.exec(line);
  if (!m) return undefined;
  const args = callArgs(line, m.index + m[0].length - 1);
  if (!args || args.args.length !== 1) return undefined;
  const parts = concatParts(args.args[0]!);
  if (!parts) return undefined;
  let expr: string | undefined;
  // `eval('(' + text + ')')`: the parentheses are the old idiom for evaluating a JSON object.
  if (parts.length === 3 && parts[0]!.kind === 'literal' && parts[0]!.raw === '(' && parts[1]!.kind === 'expr' && parts[2]!.kind === 'literal' && parts[2]!.raw === ')') expr = parts[1]!.text;
  // `eval(jsonText)`: the name says it holds JSON.
  else if (parts.length === 1 && parts[0]!.kind === 'expr' && /json/i.test(parts[0]!.text)) expr = parts[0]!.text;
  if (expr === undefined) return undefined;
  return { line: `${line.slice(0, m.index)}JSON.parse(${expr})${line.slice(args.close + 1)}`, note: `parses ${expr} with JSON.parse instead of evaluating it` };
}

// ---- PyYAML: yaml.load → yaml.safe_load ----

const UNSAFE_LOADER = /^Loader\s*=\s*(?:yaml\.)?(?:Loader|FullLoader|UnsafeLoader|CLoader|CFullLoader|CUnsafeLoader)$/;

function yamlRewrite(line: string): { line: string; note: string } | undefined {
  if (/'''|"""/.test(line)) return undefined;
  const m = /\byaml\.load(_all)?\s*\(/.exec(line);
  if (!m) return undefined;
  const args = callArgs(line, m.index + m[0].length - 1);
  if (!args) return undefined;
  const [stream, loader, ...rest] = args.args;
  if (!stream || rest.length > 0 || stream.includes('=') || (loader !== undefined && !UNSAFE_LOADER.test(loader))) return undefined;
  const fn = m[1] ? 'safe_load_all' : 'safe_load';
  return { line: `${line.slice(0, m.index)}yaml.${fn}(${stream})${line.slice(args.close + 1)}`, note: `uses yaml.${fn}, which builds plain data only` };
}

// ---- Math.random() for security values → crypto ----

/** How the window lets this line reach node:crypto: `crypto.` (a binding), `` (named imports) or an inline require. */
function cryptoAccess(window: string, path: string, fn: 'randomBytes' | 'randomInt'): string | undefined {
  const ns = /(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\(\s*['"](?:node:)?crypto['"]\s*\)|import\s+(?:\*\s+as\s+)?([A-Za-z_$][\w$]*)\s+from\s+['"](?:node:)?crypto['"]/.exec(window);
  if (ns) return `${ns[1] ?? ns[2]}.`;
  const named = /(?:(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\(\s*['"](?:node:)?crypto['"]\s*\)|import\s*\{([^}]*)\}\s*from\s+['"](?:node:)?crypto['"])/.exec(window);
  if (named && new RegExp(`(?:^|[\\s,])${fn}(?:$|[\\s,])`).test(named[1] ?? named[2] ?? '')) return '';
  // CommonJS server code with no import in view: require inline. Not for browser components
  // (JSX/TSX), where node:crypto does not exist, nor for ES modules, where require does not.
  if (/\brequire\s*\(|\bmodule\.exports\b|\bexports\.[\w$]+\s*=/.test(window) && !/\bimport\s.+\sfrom\s/.test(window) && !/\.(?:jsx|tsx|mjs|mts)$/i.test(path)) return "require('node:crypto').";
  return undefined;
}

function randomRewrite(line: string, window: string, path: string): { line: string; note: string } | undefined {
  if ((line.match(/Math\.random\s*\(\s*\)/g) ?? []).length !== 1) return undefined;
  const str = /Math\.random\s*\(\s*\)\.toString\(\s*36\s*\)(?:\.(?:slice|substring|substr)\(\s*2\s*(?:,\s*\d+\s*)?\))?/.exec(line);
  if (str) {
    const c = cryptoAccess(window, path, 'randomBytes');
    if (c === undefined) return undefined;
    return { line: line.slice(0, str.index) + `${c}randomBytes(16).toString('hex')` + line.slice(str.index + str[0].length), note: 'draws the value from crypto.randomBytes (128 bits, hex)' };
  }
  const int = /Math\.floor\(\s*Math\.random\s*\(\s*\)\s*\*\s*(\d+|[A-Za-z_$][\w$.]*)\s*\)/.exec(line);
  if (int) {
    const c = cryptoAccess(window, path, 'randomInt');
    if (c === undefined) return undefined;
    return { line: line.slice(0, int.index) + `${c}randomInt(${int[1]})` + line.slice(int.index + int[0].length), note: `draws the number from crypto.randomInt(${int[1]})` };
  }
  return undefined;
}

/** The rewriters that apply to a family and a file type. */
function rewritersFor(family: Family, path: string): Rewrite[] {
  if (JS_FILE.test(path)) {
    if (family.id === 'sql-injection') return [(l, w) => sqlRewrite(l, w)];
    if (family.id === 'code-injection') return [(l) => evalRewrite(l)];
    if (family.id === 'insecure-randomness') return [randomRewrite];
  }
  if (PY_FILE.test(path) && family.id === 'deserialization') return [(l) => yamlRewrite(l)];
  return [];
}

/** The finding's evidence is the trimmed start of its line: a check that the window is aligned. */
function matchesEvidence(line: string, evidence: string): boolean {
  const e = evidence.replace(/…$/, '').trim();
  return e === '' || line.trim().startsWith(e);
}

/** A patch for a code finding with a source window, or undefined. */
export function derivePatch(v: FindingView, family: Family | undefined): PatchResult | undefined {
  const l = v.location;
  // History findings point at an old commit, whose text the current file may no longer have.
  if (!family || l.kind !== 'file' || l.commit || !v.sourceWindow) return undefined;
  const win: WindowLines | undefined = splitWindow(v.sourceWindow);
  if (!win) return undefined;
  const line = lineAt(win, l.line);
  if (line === undefined || !matchesEvidence(line, v.evidence)) return undefined;
  const bare = line.replace(/\r$/, '');
  for (const rewrite of rewritersFor(family, l.path)) {
    const r = rewrite(bare, v.sourceWindow.text, l.path);
    if (!r) continue;
    const patch = replaceLineDiff(l.path, win, l.line, r.line);
    if (patch) return { patch, note: r.note };
  }
  return undefined;
}
