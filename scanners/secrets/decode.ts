// Encoded secrets: base64 and hex values (a Kubernetes Secret's `data:`, a base64 blob in YAML,
// JSON or .env, a hex-encoded token) decoded once and matched against the same rules. Bounded so it
// keeps the scanner's throughput and cannot be made to loop:
//   - candidates are whole runs of the encoding's alphabet of a plausible length (base64 16–4096
//     characters, hex 32–4096) shaped like an encoding of text (see CANDIDATE), at most
//     MAX_CANDIDATES a text and MAX_DECODED_BYTES decoded;
//   - what does not decode to mostly printable ASCII (images, compressed data, hashes, keys in
//     binary form) is dropped;
//   - depth 1: a decoded value is matched, never decoded again.
// The decoded value is matched inside its line (the text before the encoded token, e.g. the key
// name `password:`, stays in front of it), and only hits whose secret lies in the decoded part
// count. A finding from a decoded value points at the encoded token (line, column, evidence with the
// token redacted) and carries `details.encoding`.
import RE2 from 're2';
import { findHits, IGNORE_MARKERS, type Hit, type MatchScratch } from './match.ts';
import type { RuleSet } from './rules.ts';

export type Encoding = 'base64' | 'hex';

const MIN_BASE64 = 16;
const MIN_HEX = 32;
const MAX_TOKEN = 4096;
const MAX_CANDIDATES = 1000;
const MAX_DECODED_BYTES = 256 * 1024;
/** Share of printable ASCII (plus tab, CR, LF) a decoded value needs. */
const MIN_PRINTABLE = 0.95;
/** Bytes of the line kept before / after the encoded token when matching its decoded value. */
const PREFIX_BYTES = 96;
const SUFFIX_BYTES = 32;

// Candidates, in one RE2 pass: hex whose every byte is printable ASCII (high nibble 2–7) or tab,
// LF, CR; or base64 quads as base64 of such text has them — the first character holds the top six
// bits of a byte (C–D for tab/LF/CR, I–Z and a–f for printable), the second the low two bits of that
// byte and the high nibble of the next. Identifiers, words and base64 of binary data (images,
// hashes, keys) rarely fit, so few runs reach the decoder. A candidate must be a whole run (checked
// in code: RE2 has no lookaround).
const HEX = `(?:[2-7][0-9a-fA-F]|0[9aAdD]){${MIN_HEX / 2},}`;
const QUAD = '[C-DI-Za-f][A-HQ-Xg-nw-z0-3]';
const BASE64 = `(?:${QUAD}[A-Za-z0-9+/]{2}){${MIN_BASE64 / 4},}(?:${QUAD}[A-Za-z0-9+/]?=?=?)?`;
// (no capture group: RE2 then never leaves its DFA; a hex candidate starts with a digit, which a
// base64 one never does)
const CANDIDATE = new RE2(`${HEX}|${BASE64}`, 'g');

const NL = 10;

/** Bytes of the base64 alphabet, which a candidate must not be next to (`=` only after it). */
const B64_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') B64_BYTE[c.charCodeAt(0)] = 1;

/** Hex of one case only (mixed case is a word, not hex). */
function oneCase(buf: Buffer, start: number, end: number): boolean {
  let upper = false;
  let lower = false;
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b >= 0x61) lower = true;
    else if (b >= 0x41) upper = true;
  }
  return !(upper && lower);
}

/** Base64 of text has capitals and lower-case letters or digits; a whole number of bytes. */
function plausibleBase64(buf: Buffer, start: number, end: number): boolean {
  let n = end - start;
  while (n > 0 && buf[start + n - 1] === 0x3d) n--;
  if (n % 4 === 1) return false;
  let upper = false;
  let other = false;
  for (let i = start; i < start + n; i++) {
    const b = buf[i]!;
    if (b >= 0x41 && b <= 0x5a) upper = true;
    else if ((b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39)) other = true;
  }
  return upper && other;
}

function mostlyPrintable(bytes: Buffer): boolean {
  if (bytes.length === 0) return false;
  let bad = 0;
  const limit = bytes.length * (1 - MIN_PRINTABLE);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b < 0x20 && b !== 9 && b !== 10 && b !== 13) || b > 0x7e) {
      bad++;
      if (bad > limit) return false;
    }
  }
  return true;
}

function lineStartOf(buf: Buffer, offset: number): number {
  return offset > 0 ? buf.lastIndexOf(NL, offset - 1) + 1 : 0;
}

function lineEndOf(buf: Buffer, offset: number): number {
  const i = buf.indexOf(NL, offset);
  return i < 0 ? buf.length : i;
}

/** An encoded value of `buf`, decoded. */
export interface DecodedToken {
  start: number;
  end: number;
  encoding: Encoding;
  decoded: Buffer;
}

/** Encoded tokens of a text that decode to mostly printable text (bounded; see the header). */
export function decodedTokens(buf: Buffer): DecodedToken[] {
  const out: DecodedToken[] = [];
  let candidates = 0;
  let decodedBytes = 0;
  CANDIDATE.lastIndex = 0;
  for (;;) {
    const m = CANDIDATE.exec(buf);
    if (m === null) break;
    const start = m.index;
    const end = start + (m[0] as unknown as Buffer).length;
    if (end - start > MAX_TOKEN) continue;
    // a whole run: not the middle of a longer identifier or blob
    if ((start > 0 && B64_BYTE[buf[start - 1]!] === 1) || (end < buf.length && (B64_BYTE[buf[end]!] === 1 || buf[end] === 0x3d))) continue;
    const encoding: Encoding = buf[start]! <= 0x39 ? 'hex' : 'base64';
    if (encoding === 'hex' ? !oneCase(buf, start, end) : !plausibleBase64(buf, start, end)) continue;
    if (++candidates > MAX_CANDIDATES || decodedBytes > MAX_DECODED_BYTES) break;
    const decoded = Buffer.from(buf.toString('latin1', start, end), encoding);
    decodedBytes += decoded.length;
    if (mostlyPrintable(decoded)) out.push({ start, end, encoding, decoded });
  }
  return out;
}

/**
 * Hits of the rules in the decoded values of `buf`, placed on the encoded tokens: match and secret
 * ranges are the token's, `secret` the decoded secret, `details.encoding` set.
 */
export function findDecodedHits(buf: Buffer, set: RuleSet, path: string, scratch: MatchScratch): Hit[] {
  const tokens = decodedTokens(buf);
  if (tokens.length === 0) return [];
  const out: Hit[] = [];
  for (const t of tokens) {
    const lineStart = lineStartOf(buf, t.start);
    const lineEnd = lineEndOf(buf, t.end);
    // an inline ignore marker anywhere on the encoded token's line(s) covers its decoded value
    const line = buf.toString('latin1', lineStart, lineEnd);
    if (IGNORE_MARKERS.some((m) => line.includes(m))) continue;
    const ls = Math.max(lineStart, t.start - PREFIX_BYTES);
    const le = Math.min(lineEnd, t.end + SUFFIX_BYTES);
    const prefix = buf.subarray(ls, t.start);
    const text = Buffer.concat([prefix, t.decoded, buf.subarray(t.end, le)]);
    const from = prefix.length;
    const to = from + t.decoded.length;
    const { hits } = findHits(text, set, path, scratch);
    for (const h of hits) {
      if (h.secretEnd <= from || h.secretStart >= to) continue;
      out.push({ ...h, matchStart: t.start, matchEnd: t.end, secretStart: t.start, secretEnd: t.end, details: { encoding: t.encoding } });
    }
  }
  return out;
}

/**
 * The hits of a text: its own (findHits) and those of its decoded values. A decoded hit on a token
 * already reported by a specific rule is dropped; a generic hit on the encoded token itself gives
 * way to a specific rule's hit on its decoded value.
 */
export function findAllHits(buf: Buffer, set: RuleSet, path: string, scratch: MatchScratch): { hits: Hit[]; redact: Hit[] } {
  const own = findHits(buf, set, path, scratch);
  const decoded = findDecodedHits(buf, set, path, scratch);
  if (decoded.length === 0) return own;
  const overlaps = (a: Hit, b: Hit): boolean => a.secretStart < b.secretEnd && b.secretStart < a.secretEnd;
  const kept = decoded.filter((d) => !own.hits.some((h) => overlaps(h, d) && (!h.rule.generic || d.rule.generic)));
  // one decoded finding per token and rule
  const seen = new Set<string>();
  const unique = kept.filter((d) => {
    const k = `${d.secretStart}:${d.rule.id}:${d.secret}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  if (unique.length === 0) return own;
  const hits = own.hits.filter((h) => !unique.some((d) => overlaps(h, d) && !d.rule.generic));
  return { hits: [...hits, ...unique], redact: [...own.redact, ...unique] };
}
