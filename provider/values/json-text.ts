// A JSON parser that keeps numbers as their source text: Terraform writes state numbers with full
// precision (integers beyond 2^53, long decimals) and JSON.parse on Node 20 would round them.

export class JsonNumberText {
  constructor(readonly text: string) {}
}

export type JsonTextValue = null | boolean | string | JsonNumberText | JsonTextValue[] | { [key: string]: JsonTextValue };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

export function parseJsonText(text: string): JsonTextValue {
  let pos = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`invalid JSON at offset ${pos}: ${what}`);
  };
  const skip = (): void => {
    WHITESPACE.lastIndex = pos;
    WHITESPACE.exec(text);
    pos = WHITESPACE.lastIndex;
  };
  const token = (pattern: RegExp): string | null => {
    pattern.lastIndex = pos;
    const match = pattern.exec(text);
    if (!match) return null;
    pos = pattern.lastIndex;
    return match[0];
  };
  const parseString = (): string => {
    const literal = token(STRING) ?? fail('expected a string');
    return JSON.parse(literal) as string;
  };
  const value = (): JsonTextValue => {
    skip();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const object: { [key: string]: JsonTextValue } = {};
      skip();
      if (text[pos] === '}') {
        pos++;
        return object;
      }
      for (;;) {
        skip();
        const key = parseString();
        skip();
        if (text[pos++] !== ':') fail('expected ":"');
        object[key] = value();
        skip();
        const next = text[pos++];
        if (next === '}') return object;
        if (next !== ',') fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      pos++;
      const array: JsonTextValue[] = [];
      skip();
      if (text[pos] === ']') {
        pos++;
        return array;
      }
      for (;;) {
        array.push(value());
        skip();
        const next = text[pos++];
        if (next === ']') return array;
        if (next !== ',') fail('expected "," or "]"');
      }
    }
    if (c === '"') return parseString();
    if (text.startsWith('true', pos)) return (pos += 4), true;
    if (text.startsWith('false', pos)) return (pos += 5), false;
    if (text.startsWith('null', pos)) return (pos += 4), null;
    const number = token(NUMBER);
    if (number !== null) return new JsonNumberText(number);
    return fail('unexpected character');
  };
  const result = value();
  skip();
  if (pos !== text.length) fail('trailing characters');
  return result;
}
