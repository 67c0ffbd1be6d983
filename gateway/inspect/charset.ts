// Request bodies as text, in the charset their Content-Type names. Frameworks decode bodies with the
// declared charset (body-parser through iconv-lite, ASP.NET, Java), so a payload encoded in UTF-16
// or EBCDIC reads as plain text at the origin while its bytes look like nothing to a byte-level
// matcher. The gateway decodes every charset of the WHATWG Encoding standard (TextDecoder: UTF-8,
// UTF-16, the ISO-8859 and Windows code pages, the CJK encodings); anything else (IBM037 and other
// EBCDIC pages, UTF-7, UTF-32) cannot be inspected, and the caller refuses the body.
import { TextDecoder } from 'node:util';

const decoders = new Map<string, TextDecoder | null>();

/** The `charset` parameter of a Content-Type, lower case, without quotes; undefined when absent. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType);
  return match ? match[2]!.toLowerCase() : undefined;
}

function decoderFor(charset: string): TextDecoder | null {
  let decoder = decoders.get(charset);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(charset);
    } catch {
      decoder = null;
    }
    // Labels come from requests: remember only the ones TextDecoder knows (a bounded set).
    if (decoder !== null) decoders.set(charset, decoder);
  }
  return decoder;
}

/** The body as text (a BOM dropped, invalid sequences as U+FFFD), or null for a charset the gateway cannot read. */
export function decodeText(bytes: Buffer, charset: string | undefined): string | null {
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') {
    const text = bytes.toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
  const decoder = decoderFor(charset);
  return decoder ? decoder.decode(bytes) : null;
}
