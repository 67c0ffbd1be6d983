// Base64 carriers: a parameter or header whose whole value is base64 or base64url (padded or not) of
// text. Testing tools and real attackers wrap payloads this way because applications decode such
// values (tokens, "state", serialized filters) before using them. A value is decoded only when it
// could be base64 of printable ASCII — every 4-character group of such text starts with a character
// worth less than 32 (`A`–`Z`, `a`–`f`), which random tokens and hashes almost never satisfy — and
// the decoded bytes are kept only when they are mostly printable text. Bounded: one decoding, at most
// MAX_LENGTH characters.

const MIN_LENGTH = 8;
const MAX_LENGTH = 16 * 1024;
/** Share of decoded bytes that must be printable ASCII (or tab / line breaks). */
const PRINTABLE_SHARE = 0.95;

/** A space stands for `+`: base64 sent unencoded in a query string or form loses its `+` to a space. */
const isBase64Char = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95 || c === 32;
/** Characters worth 0–31 in base64: the first of each group when the group's first byte is below 0x80. */
const isLowSextet = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 102);

/** Whether `raw` has the shape of base64(url) of ASCII text (cheap: no decoding). */
export function mayBeBase64Text(raw: string): boolean {
  let end = raw.length;
  if (end < MIN_LENGTH || end > MAX_LENGTH) return false;
  while (end > 0 && raw.charCodeAt(end - 1) === 61 /* = */) end--;
  if (raw.length - end > 2 || end % 4 === 1) return false;
  for (let i = 0; i < end; i++) {
    const c = raw.charCodeAt(i);
    if (!isBase64Char(c)) return false;
    if (i % 4 === 0 && !isLowSextet(c)) return false;
  }
  // A word in lower case alone is more likely a word than base64 (`cabbage`, `deadbeef`); spaces
  // stand for `+` only inside a run, never at its ends (where they are words' spaces).
  const body = raw.slice(0, end);
  return !/^[a-z]+$/.test(body) && !(body.includes(' ') && (body.startsWith(' ') || body.endsWith(' ') || body.includes('  ')));
}

/** The text `raw` decodes to, or null when it is not base64 of mostly printable text. */
export function base64Text(raw: string): string | null {
  if (!mayBeBase64Text(raw)) return null;
  const bytes = Buffer.from(raw.includes(' ') ? raw.replaceAll(' ', '+') : raw, 'base64');
  if (bytes.length === 0) return null;
  let printable = 0;
  for (const b of bytes) if ((b >= 0x20 && b < 0x7f) || b === 9 || b === 10 || b === 13) printable++;
  if (printable < bytes.length * PRINTABLE_SHARE) return null;
  return bytes.toString('latin1');
}
