// Percent-decoding as the most lenient origin would do it, so that no encoding hides an attack from
// the rules: `%XX` runs are decoded as UTF-8; an overlong UTF-8 form of an ASCII character
// (`%C0%AF` for `/`, `%C0%A7` for `'`, up to the 6-byte `%FC%80%80%80%80%AE` for `.`) is decoded to that character, as old IIS and some Java
// decoders did; IIS's `%uXXXX` is decoded to its UTF-16 code unit. Escapes that form no character
// (`%FF` alone, `%zz`, a stray `%`) are kept as written. What was met is reported in `DecodeFlags`,
// because a legitimate client never sends overlong forms or `%u` (managed rules treat them as
// protocol anomalies).

export interface DecodeFlags {
  /** An overlong UTF-8 sequence was decoded. */
  overlong: boolean;
  /** An IIS `%uXXXX` escape was decoded. */
  percentU: boolean;
  /** A `%XX` run was not valid UTF-8 and was kept as written. */
  invalid: boolean;
}

export const newDecodeFlags = (): DecodeFlags => ({ overlong: false, percentU: false, invalid: false });

const hexValue = (code: number): number => {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
};

/** The byte of `%XX` at `i`, or -1. */
function byteAt(text: string, i: number): number {
  if (text.charCodeAt(i) !== 37 /* % */ || i + 2 >= text.length) return -1;
  const hi = hexValue(text.charCodeAt(i + 1));
  const lo = hexValue(text.charCodeAt(i + 2));
  return hi < 0 || lo < 0 ? -1 : (hi << 4) | lo;
}

/** Length in bytes of the UTF-8 sequence a lead byte starts, or 0 for a byte that cannot lead. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc0 && lead < 0xe0) return 2;
  if (lead >= 0xe0 && lead < 0xf0) return 3;
  if (lead >= 0xf0 && lead < 0xf8) return 4;
  // The 5- and 6-byte forms of the original UTF-8, which old decoders still read: every one is
  // overlong or beyond Unicode (`%FC%80%80%80%80%AE` is `.`).
  if (lead >= 0xf8 && lead < 0xfc) return 5;
  if (lead >= 0xfc && lead < 0xfe) return 6;
  return 0;
}

/**
 * Decodes one UTF-8 sequence of `bytes` starting at `at`: the code point and its length, or null
 * when the bytes there do not form one. Overlong forms are accepted and flagged.
 */
function decodeSequence(bytes: number[], at: number, flags: DecodeFlags): { codePoint: number; length: number } | null {
  const lead = bytes[at]!;
  const length = sequenceLength(lead);
  if (length === 0 || at + length > bytes.length) return null;
  if (length === 1) return { codePoint: lead, length };
  let codePoint = lead & (0xff >> (length + 1));
  for (let k = 1; k < length; k++) {
    const next = bytes[at + k]!;
    if ((next & 0xc0) !== 0x80) return null;
    codePoint = (codePoint << 6) | (next & 0x3f);
  }
  const shortest = codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
  if (shortest < length) flags.overlong = true;
  if (codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return null;
  return { codePoint, length };
}

/** Appends the decoding of a run of `%XX` bytes (kept as text where they form no character). */
function appendRun(out: string[], bytes: number[], raw: string, flags: DecodeFlags): void {
  let i = 0;
  while (i < bytes.length) {
    const decoded = decodeSequence(bytes, i, flags);
    if (decoded) {
      out.push(String.fromCodePoint(decoded.codePoint));
      i += decoded.length;
    } else {
      flags.invalid = true;
      out.push(raw.slice(i * 3, i * 3 + 3));
      i += 1;
    }
  }
}

/**
 * Decodes `%XX` (leniently, see the file comment), `%uXXXX`, and `+` as a space when
 * `plusAsSpace` (query strings and form bodies). Text without `%` (or `+`) is returned as it is.
 */
export function decodePercent(text: string, plusAsSpace: boolean, flags: DecodeFlags = newDecodeFlags()): string {
  if (!text.includes('%') && !(plusAsSpace && text.includes('+'))) return text;
  const out: string[] = [];
  let literalStart = 0;
  let i = 0;
  const flushLiteral = (end: number) => {
    if (end > literalStart) out.push(text.slice(literalStart, end));
  };
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === 43 /* + */ && plusAsSpace) {
      flushLiteral(i);
      out.push(' ');
      literalStart = ++i;
      continue;
    }
    if (code !== 37 /* % */) {
      i++;
      continue;
    }
    if ((text.charCodeAt(i + 1) | 0x20) === 117 /* u */) {
      const units = [2, 3, 4, 5].map((k) => hexValue(text.charCodeAt(i + k)));
      if (units.every((u) => u >= 0)) {
        flushLiteral(i);
        out.push(String.fromCharCode((units[0]! << 12) | (units[1]! << 8) | (units[2]! << 4) | units[3]!));
        flags.percentU = true;
        literalStart = i += 6;
        continue;
      }
    }
    const bytes: number[] = [];
    let j = i;
    for (let byte = byteAt(text, j); byte >= 0; byte = byteAt(text, j)) {
      bytes.push(byte);
      j += 3;
    }
    if (bytes.length === 0) {
      i++;
      continue;
    }
    flushLiteral(i);
    appendRun(out, bytes, text.slice(i, j), flags);
    literalStart = i = j;
  }
  flushLiteral(text.length);
  return out.join('');
}
