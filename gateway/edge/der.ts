// The little DER (X.690) the OCSP stapler needs: walking a certificate or an OCSP response to the
// fields it names, and writing one fixed request shape. Definite lengths only (DER has no other),
// single-byte tags only (every tag in these structures is one); every length is checked against
// the buffer, so a malformed input is null, never a read past its end.

export interface Tlv {
  tag: number;
  /** Where the element starts (its tag byte) and ends (exclusive). */
  start: number;
  end: number;
  /** Where its content starts. */
  contentStart: number;
}

export const TAG = {
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  enumerated: 0x0a,
  generalizedTime: 0x18,
  sequence: 0x30,
} as const;

/** Context-specific tag `n`, constructed (`[n] EXPLICIT` or a constructed IMPLICIT) or primitive. */
export const contextTag = (n: number, constructed: boolean): number => 0x80 | (constructed ? 0x20 : 0) | n;

/** The element at `offset`, within `limit` (default the buffer's end). */
export function readTlv(buf: Buffer, offset: number, limit = buf.length): Tlv | null {
  if (offset + 2 > limit) return null;
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) return null;
  let length = buf[offset + 1]!;
  let contentStart = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || contentStart + bytes > limit) return null;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + buf[contentStart + i]!;
    contentStart += bytes;
  }
  const end = contentStart + length;
  if (end > limit) return null;
  return { tag, start: offset, end, contentStart };
}

/** The elements inside a constructed element, or null if they do not fill it exactly. */
export function childrenOf(buf: Buffer, parent: Tlv): Tlv[] | null {
  const out: Tlv[] = [];
  for (let offset = parent.contentStart; offset < parent.end; ) {
    const child = readTlv(buf, offset, parent.end);
    if (!child) return null;
    out.push(child);
    offset = child.end;
  }
  return out;
}

export const contentOf = (buf: Buffer, tlv: Tlv): Buffer => buf.subarray(tlv.contentStart, tlv.end);
export const bytesOf = (buf: Buffer, tlv: Tlv): Buffer => buf.subarray(tlv.start, tlv.end);

/** One element: tag, DER length, content. */
export function encode(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

export const sequence = (...parts: Buffer[]): Buffer => encode(TAG.sequence, Buffer.concat(parts));

/** A GeneralizedTime's value (`YYYYMMDDHHMMSS[.fff]Z`), or null. */
export function generalizedTime(buf: Buffer, tlv: Tlv): Date | null {
  if (tlv.tag !== TAG.generalizedTime) return null;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/.exec(contentOf(buf, tlv).toString('latin1'));
  if (!m) return null;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
  return Number.isNaN(date.getTime()) ? null : date;
}
