// Collects a request's fields (fields.ts) and the anomalies met while reading them. Query strings and
// form bodies are split here with the lenient decoder (percent.ts), not URLSearchParams, so that
// overlong UTF-8 and `%u` escapes read as the origins that accept them read them.
//
// Repeated parameters (HTTP parameter pollution): every value is a field of its own, since
// frameworks differ in which one they keep (PHP the last, Java's getParameter the first, Express
// all of them), and the values joined with `,` are one more field, as ASP.NET reads them
// (`q=union&q=select` → `union,select`).
import type { Anomaly, Field, FieldSource } from './fields.ts';
import type { JsonSink } from './json-fields.ts';
import { scanXml } from './xml-fields.ts';
import { parameterNames, pathNames } from './names.ts';
import { decodePercent, newDecodeFlags, type DecodeFlags } from './percent.ts';

/** `%00`, encoded any number of times more (`%2500`, `%252500`). */
const ENCODED_NUL = /%(?:25)*00/;
/**
 * Overlong UTF-8 forms, encoded again: C0 or C1 and any byte (no valid text has either lead byte;
 * lenient decoders read `%c0%2e` as `.`), E0 8x/9x or F0 8x and their continuation bytes.
 */
const ENCODED_OVERLONG = /%(?:25)*(?:c[01]%(?:25)*[0-9a-f]{2}|(?:e0%(?:25)*[89][0-9a-f]|f0%(?:25)*8[0-9a-f]%(?:25)*[89ab][0-9a-f])%(?:25)*[89ab][0-9a-f])/i;

/** More fields than this, and the request is not inspected (it is refused when a rule needs it). */
export const MAX_FIELDS = 4096;

export class FieldCollector {
  readonly fields: Field[] = [];
  readonly anomalies = new Set<Anomaly>();
  /** More than MAX_FIELDS were offered. */
  overflow = false;

  add(source: FieldSource, raw: string, names: readonly string[], value: string): boolean {
    if (this.fields.length >= MAX_FIELDS) {
      this.overflow = true;
      return false;
    }
    if (value.includes('\0') || raw.includes('\0')) this.anomalies.add('nul_byte');
    if (value.includes('%')) this.noteEncodedAgain(value);
    this.fields.push({ source, raw, names, value });
    return true;
  }

  /**
   * Adds an XML body's element texts and attribute values (xml-fields.ts), each under its local name.
   * Past MAX_FIELDS it stops without refusing: a large data document is ordinary XML, and the rules
   * that read a whole body still read all of it.
   */
  addXml(text: string): void {
    scanXml(text, (path, name, value) => this.fields.length < MAX_FIELDS && this.add('xml', path, [name], value));
  }

  /** Adds the fields of a query string or an application/x-www-form-urlencoded body. */
  addUrlEncoded(text: string, source: FieldSource): void {
    if (text === '') return;
    const flags = newDecodeFlags();
    let start = 0;
    while (start <= text.length) {
      let end = text.indexOf('&', start);
      if (end < 0) end = text.length;
      if (end > start) {
        const pair = text.slice(start, end);
        const eq = pair.indexOf('=');
        const raw = decodePercent(eq < 0 ? pair : pair.slice(0, eq), true, flags);
        const value = eq < 0 ? '' : decodePercent(pair.slice(eq + 1), true, flags);
        if (!this.add(source, raw, parameterNames(raw), value)) break;
      }
      start = end + 1;
    }
    this.noteFlags(flags);
  }

  /** Adds the cookies of a Cookie header (`a=1; b=2`), values percent-decoded as most frameworks do. */
  addCookies(header: string | undefined): void {
    if (!header) return;
    const flags = newDecodeFlags();
    for (const pair of header.split(';')) {
      const eq = pair.indexOf('=');
      // A pair without `=` is a name alone, as PHP reads it; an empty name is nothing.
      const name = (eq < 0 ? pair : pair.slice(0, eq)).trim();
      if (name === '') continue;
      let value = eq < 0 ? '' : pair.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (!this.add('cookie', name, [name.toLowerCase()], decodePercent(value, false, flags))) break;
    }
    this.noteFlags(flags);
  }

  /** Adds a JSON scalar found at `keys` (json-fields.ts). */
  addJson(keys: readonly string[], value: string): boolean {
    const lower = keys.map((key) => key.toLowerCase());
    return this.add('json', keys.join('.'), keys.length === 0 ? [''] : pathNames(lower), value);
  }

  /** A sink for json-fields.ts: scalars become fields, repeated keys an anomaly; it stops at MAX_FIELDS. */
  jsonSink(): JsonSink {
    return {
      value: (keys, value) => this.addJson(keys, value),
      duplicateKey: () => this.anomalies.add('duplicate_json_key'),
    };
  }

  /**
   * A NUL or an overlong UTF-8 form still percent-encoded after the value was decoded (`%2500`,
   * `%25c0%25af`): an encoding layer added to hide it from a single decode, which no client adds
   * to a real value. Counted as the anomaly itself, as if sent once-encoded.
   */
  private noteEncodedAgain(value: string): void {
    if (ENCODED_NUL.test(value)) this.anomalies.add('nul_byte');
    if (ENCODED_OVERLONG.test(value)) this.anomalies.add('overlong_utf8');
  }

  noteFlags(flags: DecodeFlags): void {
    if (flags.overlong) this.anomalies.add('overlong_utf8');
    if (flags.percentU) this.anomalies.add('percent_u');
    if (flags.invalid) this.anomalies.add('invalid_utf8');
  }

  /** Adds, for each parameter sent more than once under one name, its values joined with `,`. */
  addJoinedRepeats(): void {
    // By name ignoring case (ASP.NET's collections do), but `q[]` is an array, not a repeat of `q`.
    let groups: Map<string, Field[]> | undefined;
    const seen = new Map<string, Field>();
    for (const field of this.fields) {
      if (field.source !== 'query' && field.source !== 'form' && field.source !== 'multipart') continue;
      const key = field.raw.toLowerCase();
      const first = seen.get(key);
      if (!first) {
        seen.set(key, field);
        continue;
      }
      groups ??= new Map();
      const group = groups.get(key);
      if (group) group.push(field);
      else groups.set(key, [first, field]);
    }
    if (!groups) return;
    this.anomalies.add('parameter_pollution');
    for (const group of groups.values()) {
      const first = group[0]!;
      this.add(first.source, first.raw, first.names, group.map((f) => f.value).join(','));
    }
  }
}
