// Reads a JSON text into fields without building it: every scalar value at any depth, with its path,
// including the earlier values of a key an object repeats (JSON.parse keeps only the last, but
// some parsers keep the first — an attack hidden in either copy must be seen). Strict RFC 8259
// syntax: what this refuses, JSON.parse refuses too, so "parses as JSON" means the same for the
// gateway's body sniffing and for an origin that sniffs.

export interface JsonSink {
  /** One scalar: strings unescaped, numbers as written, `true`/`false`/`null` as text. False stops the scan. */
  value(keys: readonly string[], value: string): boolean;
  /** An object carried the same key twice. */
  duplicateKey(): void;
}

export type JsonScanResult = 'ok' | 'invalid' | 'too_deep' | 'stopped';

/** Deeper documents are refused rather than walked: no legitimate body nests this far. */
export const MAX_JSON_DEPTH = 128;

class Stop extends Error {
  constructor(readonly result: JsonScanResult) {
    super(result);
  }
}

const isWhitespace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

class Scanner {
  at = 0;
  readonly keys: string[] = [];

  constructor(
    private readonly text: string,
    private readonly sink: JsonSink,
  ) {}

  skipWhitespace(): void {
    while (this.at < this.text.length && isWhitespace(this.text.charCodeAt(this.at))) this.at++;
  }

  fail(): never {
    throw new Stop('invalid');
  }

  emit(value: string): void {
    if (!this.sink.value(this.keys, value)) throw new Stop('stopped');
  }

  value(depth: number): void {
    if (depth > MAX_JSON_DEPTH) throw new Stop('too_deep');
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.at);
    if (c === 123 /* { */) return this.object(depth);
    if (c === 91 /* [ */) return this.array(depth);
    if (c === 34 /* " */) return this.emit(this.string());
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) return this.emit(this.number());
    for (const literal of ['true', 'false', 'null']) {
      if (this.text.startsWith(literal, this.at)) {
        this.at += literal.length;
        return this.emit(literal);
      }
    }
    this.fail();
  }

  object(depth: number): void {
    this.at++;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.at) === 125 /* } */) {
      this.at++;
      return;
    }
    // Small objects are the rule: a list is cheaper than a Set until they grow.
    let seen: string[] | Set<string> = [];
    for (;;) {
      this.skipWhitespace();
      if (this.text.charCodeAt(this.at) !== 34) this.fail();
      const key = this.string();
      if (Array.isArray(seen)) {
        if (seen.includes(key)) this.sink.duplicateKey();
        seen.push(key);
        if (seen.length > 16) seen = new Set(seen);
      } else {
        if (seen.has(key)) this.sink.duplicateKey();
        seen.add(key);
      }
      this.skipWhitespace();
      if (this.text.charCodeAt(this.at) !== 58 /* : */) this.fail();
      this.at++;
      this.keys.push(key);
      this.value(depth + 1);
      this.keys.pop();
      this.skipWhitespace();
      const next = this.text.charCodeAt(this.at++);
      if (next === 125 /* } */) return;
      if (next !== 44 /* , */) this.fail();
    }
  }

  array(depth: number): void {
    this.at++;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.at) === 93 /* ] */) {
      this.at++;
      return;
    }
    for (let index = 0; ; index++) {
      this.keys.push(String(index));
      this.value(depth + 1);
      this.keys.pop();
      this.skipWhitespace();
      const next = this.text.charCodeAt(this.at++);
      if (next === 93 /* ] */) return;
      if (next !== 44 /* , */) this.fail();
    }
  }

  string(): string {
    const start = ++this.at;
    // Fast path: no escapes.
    for (;;) {
      const c = this.text.charCodeAt(this.at);
      if (Number.isNaN(c) || c < 0x20) this.fail();
      if (c === 34) return this.text.slice(start, this.at++);
      if (c === 92 /* \ */) break;
      this.at++;
    }
    const parts: string[] = [this.text.slice(start, this.at)];
    for (;;) {
      const c = this.text.charCodeAt(this.at);
      if (Number.isNaN(c) || c < 0x20) this.fail();
      if (c === 34) {
        this.at++;
        return parts.join('');
      }
      if (c !== 92) {
        parts.push(this.text[this.at++]!);
        continue;
      }
      const escape = this.text[this.at + 1];
      this.at += 2;
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          parts.push(escape);
          break;
        case 'b':
          parts.push('\b');
          break;
        case 'f':
          parts.push('\f');
          break;
        case 'n':
          parts.push('\n');
          break;
        case 'r':
          parts.push('\r');
          break;
        case 't':
          parts.push('\t');
          break;
        case 'u': {
          const hex = this.text.slice(this.at, this.at + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail();
          parts.push(String.fromCharCode(Number.parseInt(hex, 16)));
          this.at += 4;
          break;
        }
        default:
          this.fail();
      }
    }
  }

  number(): string {
    const match = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    match.lastIndex = this.at;
    const found = match.exec(this.text);
    if (!found) this.fail();
    this.at += found[0].length;
    return found[0];
  }
}

/** Walks `text` as one JSON document, handing every scalar to `sink`. */
export function scanJson(text: string, sink: JsonSink): JsonScanResult {
  const scanner = new Scanner(text, sink);
  try {
    scanner.value(0);
    scanner.skipWhitespace();
    return scanner.at === text.length ? 'ok' : 'invalid';
  } catch (err) {
    if (err instanceof Stop) return err.result;
    // A document deep enough to exhaust the stack before MAX_JSON_DEPTH (it cannot be: one frame
    // per level), or anything else unexpected, is not inspectable.
    if (err instanceof RangeError) return 'too_deep';
    throw err;
  }
}

/** Whether a body looks like JSON at all (an object or array), before trying to scan it. */
export function looksLikeJson(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c) || c === 0xfeff) continue;
    return c === 123 || c === 91;
  }
  return false;
}
