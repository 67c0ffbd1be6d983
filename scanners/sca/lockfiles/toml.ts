// A small TOML reader, enough for poetry.lock and Cargo.lock (no TOML package is installed, and
// these two files use only the common parts of TOML 1.0): comments, bare/quoted/dotted keys, the four
// string forms, integers, floats, booleans, date-times (kept as text), arrays, inline tables,
// `[table]` and `[[array of tables]]` headers. It is lenient where lockfiles never go (re-opening a
// table is allowed) and strict where a wrong guess would misread data (duplicate keys, unterminated
// strings, junk after a value).

import type { ParseIssue } from './types.ts';

export type TomlValue = string | number | boolean | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

export class TomlError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`${message} (line ${line})`);
  }
}

const MAX_DEPTH = 64;
const BARE_KEY = /[A-Za-z0-9_-]/;

export function isTable(v: TomlValue | undefined): v is TomlTable {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function parseToml(text: string): TomlTable {
  return new Reader(text).document();
}

class Reader {
  private pos = 0;
  private readonly root: TomlTable = Object.create(null) as TomlTable;

  constructor(private readonly src: string) {
    if (src.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  document(): TomlTable {
    let current = this.root;
    for (;;) {
      this.skipBlank(true);
      if (this.pos >= this.src.length) return this.root;
      if (this.src[this.pos] === '[') {
        const arrayTable = this.src[this.pos + 1] === '[';
        this.pos += arrayTable ? 2 : 1;
        this.skipSpaces();
        const path = this.keyPath();
        this.skipSpaces();
        this.expect(arrayTable ? ']]' : ']');
        current = arrayTable ? this.openArrayTable(path) : this.openTable(path);
      } else {
        this.keyValue(current, 0);
      }
      this.endOfLine();
    }
  }

  private fail(message: string): never {
    let line = 1;
    for (let i = 0; i < this.pos && i < this.src.length; i++) if (this.src[i] === '\n') line++;
    throw new TomlError(message, line);
  }

  private expect(token: string): void {
    if (!this.src.startsWith(token, this.pos)) this.fail(`expected '${token}'`);
    this.pos += token.length;
  }

  private skipSpaces(): void {
    while (this.src[this.pos] === ' ' || this.src[this.pos] === '\t') this.pos++;
  }

  /** Spaces and comments; newlines too when `newlines`. */
  private skipBlank(newlines: boolean): void {
    for (;;) {
      const c = this.src[this.pos];
      if (c === ' ' || c === '\t') this.pos++;
      else if (newlines && (c === '\n' || (c === '\r' && this.src[this.pos + 1] === '\n'))) this.pos += c === '\r' ? 2 : 1;
      else if (c === '#') {
        while (this.pos < this.src.length && this.src[this.pos] !== '\n') this.pos++;
      } else return;
    }
  }

  private endOfLine(): void {
    this.skipBlank(false);
    if (this.pos >= this.src.length) return;
    if (this.src[this.pos] === '\n') return void this.pos++;
    if (this.src.startsWith('\r\n', this.pos)) return void (this.pos += 2);
    this.fail('unexpected text after value');
  }

  private keyPath(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skipSpaces();
      const c = this.src[this.pos];
      if (c === '"') parts.push(this.basicString());
      else if (c === "'") parts.push(this.literalString());
      else {
        const start = this.pos;
        while (this.pos < this.src.length && BARE_KEY.test(this.src[this.pos]!)) this.pos++;
        if (this.pos === start) this.fail('expected a key');
        parts.push(this.src.slice(start, this.pos));
      }
      this.skipSpaces();
      if (this.src[this.pos] !== '.') return parts;
      this.pos++;
    }
  }

  /** Walks to the table a dotted key names, creating tables on the way; arrays of tables resolve to their last element. */
  private descend(from: TomlTable, keys: string[]): TomlTable {
    let t = from;
    for (const k of keys) {
      const existing = t[k];
      if (existing === undefined) {
        const next = Object.create(null) as TomlTable;
        t[k] = next;
        t = next;
      } else if (isTable(existing)) {
        t = existing;
      } else if (Array.isArray(existing) && isTable(existing[existing.length - 1])) {
        t = existing[existing.length - 1] as TomlTable;
      } else {
        this.fail(`key '${k}' is not a table`);
      }
    }
    return t;
  }

  private openTable(path: string[]): TomlTable {
    return this.descend(this.root, path);
  }

  private openArrayTable(path: string[]): TomlTable {
    const parent = this.descend(this.root, path.slice(0, -1));
    const last = path[path.length - 1]!;
    const existing = parent[last];
    const table = Object.create(null) as TomlTable;
    if (existing === undefined) parent[last] = [table];
    else if (Array.isArray(existing)) existing.push(table);
    else this.fail(`key '${last}' is not an array of tables`);
    return table;
  }

  private keyValue(target: TomlTable, depth: number): void {
    const path = this.keyPath();
    this.skipSpaces();
    this.expect('=');
    this.skipSpaces();
    const value = this.value(depth);
    const table = this.descend(target, path.slice(0, -1));
    const last = path[path.length - 1]!;
    if (last in table) this.fail(`duplicate key '${last}'`);
    table[last] = value;
  }

  private value(depth: number): TomlValue {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    const c = this.src[this.pos];
    if (c === '"') return this.src.startsWith('"""', this.pos) ? this.multilineBasic() : this.basicString();
    if (c === "'") return this.src.startsWith("'''", this.pos) ? this.multilineLiteral() : this.literalString();
    if (c === '[') return this.array(depth);
    if (c === '{') return this.inlineTable(depth);
    if (this.src.startsWith('true', this.pos) && !BARE_KEY.test(this.src[this.pos + 4] ?? '')) return (this.pos += 4), true;
    if (this.src.startsWith('false', this.pos) && !BARE_KEY.test(this.src[this.pos + 5] ?? '')) return (this.pos += 5), false;
    return this.scalar();
  }

  private scalar(): string | number {
    const start = this.pos;
    while (this.pos < this.src.length && /[0-9A-Za-z_:+.\-]/.test(this.src[this.pos]!)) this.pos++;
    // A date-time may use a space instead of `T` between date and time.
    if (/^\d{4}-\d{2}-\d{2}$/.test(this.src.slice(start, this.pos)) && /^ \d{2}:/.test(this.src.slice(this.pos, this.pos + 4))) {
      this.pos++;
      while (this.pos < this.src.length && /[0-9A-Za-z:+.\-]/.test(this.src[this.pos]!)) this.pos++;
    }
    const token = this.src.slice(start, this.pos);
    if (token === '') this.fail('expected a value');
    if (/^\d{4}-\d{2}-\d{2}|^\d{2}:\d{2}:\d{2}/.test(token)) return token;
    const clean = token.replace(/_/g, '');
    if (/^[+-]?(inf|nan)$/.test(token)) return token.includes('nan') ? Number.NaN : token.startsWith('-') ? -Infinity : Infinity;
    if (/^0x[0-9A-Fa-f_]+$/.test(token)) return parseInt(clean.slice(2), 16);
    if (/^0o[0-7_]+$/.test(token)) return parseInt(clean.slice(2), 8);
    if (/^0b[01_]+$/.test(token)) return parseInt(clean.slice(2), 2);
    if (/^[+-]?\d[\d_]*(\.\d[\d_]*)?([eE][+-]?\d[\d_]*)?$/.test(token)) return Number(clean);
    this.fail(`invalid value '${token.slice(0, 40)}'`);
  }

  private array(depth: number): TomlValue[] {
    this.pos++;
    const out: TomlValue[] = [];
    for (;;) {
      this.skipBlank(true);
      if (this.src[this.pos] === ']') return this.pos++, out;
      out.push(this.value(depth + 1));
      this.skipBlank(true);
      if (this.src[this.pos] === ',') this.pos++;
      else if (this.src[this.pos] === ']') return this.pos++, out;
      else this.fail("expected ',' or ']' in array");
    }
  }

  private inlineTable(depth: number): TomlTable {
    this.pos++;
    const table = Object.create(null) as TomlTable;
    this.skipBlank(true);
    if (this.src[this.pos] === '}') return this.pos++, table;
    for (;;) {
      this.skipBlank(true);
      this.keyValue(table, depth + 1);
      this.skipBlank(true);
      if (this.src[this.pos] === ',') this.pos++;
      else if (this.src[this.pos] === '}') return this.pos++, table;
      else this.fail("expected ',' or '}' in inline table");
    }
  }

  private literalString(): string {
    this.pos++;
    const end = this.src.indexOf("'", this.pos);
    const nl = this.src.indexOf('\n', this.pos);
    if (end < 0 || (nl >= 0 && nl < end)) this.fail('unterminated string');
    const s = this.src.slice(this.pos, end);
    this.pos = end + 1;
    return s;
  }

  private multilineLiteral(): string {
    this.pos += 3;
    if (this.src[this.pos] === '\n') this.pos++;
    else if (this.src.startsWith('\r\n', this.pos)) this.pos += 2;
    const end = this.src.indexOf("'''", this.pos);
    if (end < 0) this.fail('unterminated string');
    // `''''` / `'''''`: up to two quotes before the closing delimiter are content.
    let extra = 0;
    while (extra < 2 && this.src[end + 3 + extra] === "'") extra++;
    const s = this.src.slice(this.pos, end + extra);
    this.pos = end + 3 + extra;
    return s;
  }

  private basicString(): string {
    this.pos++;
    let out = '';
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined || c === '\n') this.fail('unterminated string');
      if (c === '"') return this.pos++, out;
      if (c === '\\') out += this.escape();
      else out += c, this.pos++;
    }
  }

  private multilineBasic(): string {
    this.pos += 3;
    if (this.src[this.pos] === '\n') this.pos++;
    else if (this.src.startsWith('\r\n', this.pos)) this.pos += 2;
    let out = '';
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined) this.fail('unterminated string');
      if (this.src.startsWith('"""', this.pos)) {
        // `""""` / `"""""`: the extra quotes are content.
        let extra = 0;
        while (extra < 2 && this.src[this.pos + 3 + extra] === '"') extra++;
        out += '"'.repeat(extra);
        this.pos += 3 + extra;
        return out;
      }
      if (c === '\\') {
        // A backslash at the end of a line swallows the newline and following whitespace.
        const rest = /^\\[ \t]*\r?\n/.exec(this.src.slice(this.pos, this.pos + 64));
        if (rest) {
          this.pos += rest[0].length;
          while (/[ \t\r\n]/.test(this.src[this.pos] ?? '')) this.pos++;
          continue;
        }
        out += this.escape();
      } else {
        out += c;
        this.pos++;
      }
    }
  }

  private escape(): string {
    const e = this.src[this.pos + 1];
    this.pos += 2;
    switch (e) {
      case 'b': return '\b';
      case 't': return '\t';
      case 'n': return '\n';
      case 'f': return '\f';
      case 'r': return '\r';
      case 'e': return '\x1b';
      case '"': return '"';
      case '\\': return '\\';
      case 'u':
      case 'U': {
        const len = e === 'u' ? 4 : 8;
        const hex = this.src.slice(this.pos, this.pos + len);
        if (!new RegExp(`^[0-9A-Fa-f]{${len}}$`).test(hex)) this.fail('invalid unicode escape');
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) this.fail('invalid unicode scalar');
        this.pos += len;
        return String.fromCodePoint(cp);
      }
      default:
        this.fail('invalid escape');
    }
  }
}

/**
 * The `[[package]]` tables of a TOML lockfile (Cargo.lock, poetry.lock), or the parse problem as a
 * lockfile issue.
 */
export function packageTables(text: string, path: string): { tables: TomlTable[] } | { issue: ParseIssue } {
  let doc: TomlTable;
  try {
    doc = parseToml(text);
  } catch (e) {
    const line = e instanceof TomlError ? e.line : undefined;
    return { issue: { path, ...(line ? { line } : {}), reason: 'parse_error', message: `invalid TOML: ${(e as Error).message}` } };
  }
  const list = doc.package;
  return { tables: (Array.isArray(list) ? list : []).filter(isTable) };
}
