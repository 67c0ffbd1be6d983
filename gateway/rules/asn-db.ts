// ASN and country of an address, from an ip2asn TSV file (iptoasn.com, public domain):
//
//   range_start <TAB> range_end <TAB> AS_number <TAB> country_code <TAB> AS_description
//
// IPv4 and IPv6 rows mixed. Rows with AS 0 ("None", "Not routed") describe unrouted space: they are
// not stored, so a lookup there gives null. A country that is not two letters ("None", "") becomes
// null; codes are upper-cased. An AS number may be written "AS13335" too. Unreadable rows
// are skipped and counted rather than failing the whole file: one bad line in a half-million-row
// download should not leave the gateway without ASN rules.
//
// The file is parsed with index arithmetic instead of split()/regexes — a real file has ~500k rows
// and is loaded at start (about 0.2 s per 400k IPv4 rows here) — and ranges go into an
// IpRangeTable (binary search per lookup).
import { readFileSync } from 'node:fs';
import type { ParsedIp } from '../../schemas/checks/ip.ts';
import { parseIp } from '../../schemas/checks/ip.ts';
import { IpRangeTableBuilder, v6ToBigInt, type IpRangeTable } from './ip-ranges.ts';

export interface AsnOrigin {
  asn: number;
  country: string | null;
}

/** Dotted-decimal IPv4 between `from` and `to` as a number, or -1. */
function parseV4(text: string, from: number, to: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? value * 256 + part : -1;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

const groupsScratch = new Uint16Array(8);

/** Two letters as 1…26 each, packed in 10 bits (either case); 0 for anything else ("None", ""). */
function countryCode(a: number, b: number): number {
  const x = (a | 32) - 96;
  const y = (b | 32) - 96;
  return x >= 1 && x <= 26 && y >= 1 && y <= 26 ? (x << 5) | y : 0;
}

/**
 * Colon-separated hex groups between `from` and `to` written into groupsScratch from `at`; the
 * number of groups, or -1 when malformed.
 */
function hexGroups(text: string, from: number, to: number, at: number): number {
  if (from === to) return 0;
  let count = 0;
  let group = 0;
  let digits = 0;
  for (let i = from; i <= to; i++) {
    if (i === to || text.charCodeAt(i) === 58) {
      if (digits === 0 || at + count >= 8) return -1;
      groupsScratch[at + count++] = group;
      group = 0;
      digits = 0;
      continue;
    }
    const d = hexDigit(text.charCodeAt(i));
    if (d < 0 || ++digits > 4) return -1;
    group = group * 16 + d;
  }
  return count;
}

/** IPv6 text between `from` and `to` as a 128-bit value, or null. */
function parseV6(text: string, from: number, to: number): bigint | null {
  let gap = -1;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      // Embedded IPv4 (::ffff:192.0.2.1): rare in ip2asn, so the general parser is good enough.
      const ip = parseIp(text.slice(from, to));
      return ip?.version === 6 ? v6ToBigInt(ip.groups) : null;
    }
    if (c === 58 && i + 1 < to && text.charCodeAt(i + 1) === 58) {
      if (gap >= 0) return null;
      gap = i;
    }
  }
  groupsScratch.fill(0);
  if (gap < 0) return hexGroups(text, from, to, 0) === 8 ? v6ToBigInt(groupsScratch) : null;
  const head = hexGroups(text, from, gap, 0);
  if (head < 0 || head > 7) return null;
  // Parse the tail after the head's groups, then move it to the end of the address.
  const tail = hexGroups(text, gap + 2, to, head);
  if (tail < 0 || head + tail > 7) return null;
  groupsScratch.copyWithin(8 - tail, head, head + tail);
  groupsScratch.fill(0, head, 8 - tail);
  return v6ToBigInt(groupsScratch);
}

export class AsnDatabase {
  /** Rows that could not be read (bad address, reversed range, mixed families, bad AS number). */
  readonly skippedRows: number;

  private constructor(
    private readonly table: IpRangeTable<AsnOrigin>,
    skippedRows: number,
  ) {
    this.skippedRows = skippedRows;
  }

  static load(path: string): AsnDatabase {
    return AsnDatabase.parse(readFileSync(path, 'utf8'));
  }

  static parse(text: string): AsnDatabase {
    const builder = new IpRangeTableBuilder<AsnOrigin>();
    // One shared object per (ASN, country): far fewer objects, and equal neighbours merge.
    const origins = new Map<number, AsnOrigin>();
    let skipped = 0;
    for (let row = 0; row < text.length; ) {
      let lineEnd = text.indexOf('\n', row);
      if (lineEnd < 0) lineEnd = text.length;
      const next = lineEnd + 1;
      if (lineEnd > row && text.charCodeAt(lineEnd - 1) === 13) lineEnd--; // CRLF
      if (lineEnd === row || text.charCodeAt(row) === 35 /* # comment */) {
        row = next;
        continue;
      }
      const t1 = text.indexOf('\t', row);
      const t2 = t1 >= 0 && t1 < lineEnd ? text.indexOf('\t', t1 + 1) : -1;
      const t3 = t2 >= 0 && t2 < lineEnd ? text.indexOf('\t', t2 + 1) : -1;
      let t4 = t3 >= 0 && t3 < lineEnd ? text.indexOf('\t', t3 + 1) : -1;
      if (t4 < 0 || t4 > lineEnd) t4 = lineEnd;
      const rowStart = row;
      row = next;
      if (t3 < 0 || t3 >= lineEnd) {
        skipped++;
        continue;
      }

      if (lineEnd - t4 === 11 && text.startsWith('Not routed', t4 + 1)) continue; // unrouted space
      // Rows share few (ASN, country) pairs: both are read from char codes into one numeric key
      // (no substrings, no string hashing), and one shared origin object is kept per key.
      let asn = 0;
      let p = t2 + 1;
      const c0 = text.charCodeAt(p);
      if (c0 === 65 || c0 === 97) p += 2; // tolerate "AS13335"
      else if (c0 === 78 && t3 - p === 4 && text.startsWith('None', p)) continue; // unrouted space
      if (p >= t3) asn = -1;
      for (; p < t3 && asn >= 0; p++) {
        const c = text.charCodeAt(p);
        asn = c >= 48 && c <= 57 ? asn * 10 + (c - 48) : -1;
      }
      if (asn === 0) continue; // AS 0: unrouted space
      if (asn < 0 || asn > 4_294_967_295) {
        skipped++;
        continue;
      }
      const country = t4 - t3 === 3 ? countryCode(text.charCodeAt(t3 + 1), text.charCodeAt(t3 + 2)) : 0;
      const key = asn * 1024 + country;
      let origin = origins.get(key);
      if (origin === undefined) {
        origin = { asn, country: country === 0 ? null : String.fromCharCode(65 + (country >> 5) - 1, 65 + (country & 31) - 1) };
        origins.set(key, origin);
      }

      // The family from the first field only (an unbounded indexOf would scan ahead into later rows).
      let isV6 = false;
      for (let i = rowStart; i < t1 && !isV6; i++) isV6 = text.charCodeAt(i) === 58;
      if (!isV6) {
        const start = parseV4(text, rowStart, t1);
        const end = parseV4(text, t1 + 1, t2);
        if (start < 0 || end < start) {
          skipped++;
          continue;
        }
        builder.addV4(start, end, origin);
      } else {
        const start = parseV6(text, rowStart, t1);
        const end = start === null ? null : parseV6(text, t1 + 1, t2);
        if (start === null || end === null || end < start) {
          skipped++;
          continue;
        }
        builder.addV6(start, end, origin);
      }
    }
    return new AsnDatabase(builder.build(), skipped);
  }

  /** Number of stored (routed) ranges, after merging equal neighbours. */
  get size(): number {
    return this.table.size;
  }

  lookup(ip: ParsedIp): AsnOrigin | null {
    return this.table.lookup(ip) ?? null;
  }
}
