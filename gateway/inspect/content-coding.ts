// Undoing a request body's Content-Encoding for inspection, as Express's body parsers (and most
// frameworks) do before the application reads it. The decoded bytes serve inspection only: the
// origin receives the body exactly as the client sent it.
//
// Decompression is bounded so that a small body cannot become a large one in the gateway's memory
// (a decompression bomb): output stops at `maxBytes` (zlib's maxOutputLength, so the excess is never
// produced), and past RATIO_FLOOR bytes the output may be at most `maxRatio` times the input.
// Codings are undone in reverse order of listing (RFC 9110 §8.4); at most MAX_CODINGS are accepted.
import * as zlib from 'node:zlib';

export type DecodeFailure = 'too_large' | 'ratio' | 'unsupported' | 'corrupt';
export type Decoded = { ok: true; bytes: Buffer } | { ok: false; failure: DecodeFailure; coding: string };

export const MAX_CODINGS = 3;
/** Below this many decoded bytes the ratio is not judged: tiny bodies compress absurdly well. */
export const RATIO_FLOOR = 64 * 1024;

type Inflate = (input: Buffer, options: zlib.ZlibOptions | zlib.BrotliOptions) => Buffer;

// zstd arrived in Node 22.15; where the runtime has it, it is decoded like the others.
const zstd = (zlib as unknown as { zstdDecompressSync?: Inflate }).zstdDecompressSync;

const DECODERS: Record<string, Inflate | undefined> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  // `deflate` is zlib-wrapped by the standard; some clients send raw deflate, which servers accept too.
  deflate: (input, options) => {
    try {
      return zlib.inflateSync(input, options);
    } catch (err) {
      if (isTooLarge(err)) throw err;
      return zlib.inflateRawSync(input, options);
    }
  },
  br: zlib.brotliDecompressSync,
  zstd,
};

const isTooLarge = (err: unknown): boolean => err instanceof RangeError || (err as { code?: string } | null)?.code === 'ERR_BUFFER_TOO_LARGE';

/** The codings listed in Content-Encoding, lower case, `identity` left out. */
export function contentCodings(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(',') : header;
  return text
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

export function decodeContent(raw: Buffer, codings: readonly string[], maxBytes: number, maxRatio: number): Decoded {
  if (codings.length > MAX_CODINGS) return { ok: false, failure: 'unsupported', coding: codings.join(', ') };
  let bytes = raw;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    const decode = DECODERS[coding];
    if (!decode) return { ok: false, failure: 'unsupported', coding };
    try {
      bytes = decode(bytes, { maxOutputLength: maxBytes + 1 });
    } catch (err) {
      return { ok: false, failure: isTooLarge(err) ? 'too_large' : 'corrupt', coding };
    }
    if (bytes.length > maxBytes) return { ok: false, failure: 'too_large', coding };
    if (bytes.length > RATIO_FLOOR && bytes.length > raw.length * maxRatio) return { ok: false, failure: 'ratio', coding };
  }
  return { ok: true, bytes };
}
