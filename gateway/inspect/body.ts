// A request body read for inspection the way origins read bodies, so no body processor of theirs
// sees what the gateway's did not:
//   1. Content-Encoding undone (gzip, deflate, br; bounded: content-coding.ts) — and then the
//      decoded body is what the origin receives (`decoded`; the gateway rewrites the headers), so
//      an origin that does not undo codings (PHP, Werkzeug) cannot read the compressed bytes, gzip
//      header comments and all, as a form;
//   2. the declared charset decoded (charset.ts);
//   3. parsed by what it is: multipart/form-data by busboy (multipart.ts), a form as
//      application/x-www-form-urlencoded, JSON (declared `application/json` or `+json`) by the
//      field scanner (json-fields.ts) — and JSON is also *sniffed*: any body that parses as a JSON
//      object or array is inspected as JSON whatever its declared type, since some stacks parse JSON
//      regardless of type. A body with no type or `text/plain` is also read as a form (PHP and some
//      frameworks do). XML (declared `…/xml` or `+xml`, or an untyped body that starts like XML)
//      gives its element texts and attribute values as fields too (xml-fields.ts). Text bodies
//      (XML, plain text) are also kept whole as `text` for the rules that scan whole bodies.
// A body that cannot be inspected is *refused* by the pipeline when a rule needed to read it, never
// forwarded uninspected: larger than the inspection cap (after decoding), a coding or charset the
// gateway cannot decode, compressed data that is corrupt or expands beyond the bomb limits, a
// declared JSON body that does not parse, a multipart body that cannot be split at all, more
// parameters than the collector takes, or a Content-Type or Content-Encoding sent twice (Node keeps
// the first, other servers the last: the gateway and the origin would read different bodies).
// Bodies that parsers read differently are refused too (`ambiguous_body`): multipart outside the
// shape every parser agrees on (multipart-shape.ts), and forms in a charset that is not
// ASCII-compatible (a framework that ignores the charset reads the bytes as ASCII, the gateway as
// declared).
import type { IncomingMessage } from 'node:http';
import type { BodyState } from '../inspected-request.ts';
import { charsetOf, decodeText } from './charset.ts';
import type { FieldCollector } from './collector.ts';
import { contentCodings, decodeContent } from './content-coding.ts';
import { looksLikeJson, scanJson } from './json-fields.ts';
import { looksLikeXml } from './xml-fields.ts';
import { parseMultipart } from './multipart.ts';
import { ambiguousMultipart, ASCII_COMPATIBLE_CHARSETS } from './multipart-shape.ts';
import { wellFormedContentType } from './content-type.ts';
import { parameterNames } from './names.ts';

export interface BodyLimits {
  /** Decoded bytes inspected; a larger body (or multipart text parts) is not inspectable. */
  inspectBytes: number;
  /** Raw bytes a multipart body may have, file parts included (files are not inspected). */
  multipartBytes: number;
  /** Largest expansion of compressed data, past content-coding.ts RATIO_FLOOR bytes. */
  maxRatio: number;
}

/** Why a body could not be inspected: the rule id of the refusal (rule kind `inspection`). */
export type BodyRefusal = 'body_too_large' | 'decompression_limit' | 'unsupported_encoding' | 'unsupported_charset' | 'unparsable_body' | 'too_many_parameters' | 'ambiguous_headers' | 'ambiguous_body';

/** The status a refusal answers with in `block` mode. */
export const REFUSAL_STATUS: Record<BodyRefusal, 400 | 413 | 415> = {
  body_too_large: 413,
  decompression_limit: 413,
  unsupported_encoding: 415,
  unsupported_charset: 415,
  unparsable_body: 400,
  too_many_parameters: 413,
  ambiguous_headers: 400,
  ambiguous_body: 400,
};

export interface BodyInspection {
  state: BodyState;
  refusal: BodyRefusal | null;
  /** The decoded text of a declared JSON body, for rules that need the parsed document. */
  jsonText?: string;
  /** Decoded text of a text body not parsed into fields (XML, plain text); null otherwise. */
  text: string | null;
  /** The body with its Content-Encoding undone, when it had one: forwarded instead of the raw bytes. */
  decoded?: Buffer;
}

export const isMultipart = (mediaType: string): boolean => mediaType === 'multipart/form-data';
const isJsonType = (mediaType: string): boolean => mediaType === 'application/json' || mediaType.endsWith('+json');
const isXmlType = (mediaType: string): boolean => mediaType.endsWith('/xml') || mediaType.endsWith('+xml');
const isTextType = (mediaType: string): boolean =>
  mediaType === '' || mediaType.startsWith('text/') || isXmlType(mediaType) || mediaType === 'application/graphql';

/**
 * Whether a body too large to inspect may still pass when only managed rules wanted to read it: a
 * declared binary type (not text, JSON, a form or multipart) whose first bytes look like neither
 * JSON nor a form. Images, archives and documents then upload as usual, while a body padded past
 * the cap under a binary type, to be parsed as JSON or a form by a lenient origin, is refused.
 */
export function opaqueBody(mediaType: string, head: Buffer): boolean {
  if (isTextType(mediaType) || isJsonType(mediaType) || isMultipart(mediaType) || mediaType === 'application/x-www-form-urlencoded') return false;
  const start = head.subarray(0, 1024).toString('latin1');
  return !looksLikeJson(start) && !/^\s*[\w.%[\]-]+=/.test(start);
}

/** Raw bytes to buffer for a body of this type: multipart bodies carry files, which are not inspected. */
export function bufferLimit(mediaType: string, limits: BodyLimits): number {
  return isMultipart(mediaType) ? limits.multipartBytes : limits.inspectBytes;
}

const refused = (state: BodyState, refusal: BodyRefusal): BodyInspection => ({ state, refusal, text: null });

/**
 * Inspects a complete body: its fields go to `collector`. `mediaType` is the Content-Type's media
 * type in lower case; `wantsFile(name)` says whether a multipart file part's content is read.
 */
export async function inspectBody(
  raw: Buffer,
  req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>,
  mediaType: string,
  limits: BodyLimits,
  collector: FieldCollector,
  wantsFile: (name: string) => boolean,
): Promise<BodyInspection> {
  if (raw.length === 0) return { state: 'none', refusal: null, text: null };
  if (repeatsFramingHeader(req.rawHeaders)) return refused('unparsable', 'ambiguous_headers');
  const { headers } = req;
  const multipart = isMultipart(mediaType);
  const maxBytes = multipart ? limits.multipartBytes : limits.inspectBytes;

  const codings = contentCodings(headers['content-encoding']);
  if (codings.length === 0) return inspectDecoded(raw, headers, mediaType, limits, collector, wantsFile);
  const decoded = decodeContent(raw, codings, maxBytes, limits.maxRatio);
  if (!decoded.ok) return refused('unparsable', decoded.failure === 'unsupported' ? 'unsupported_encoding' : decoded.failure === 'corrupt' ? 'unparsable_body' : 'decompression_limit');
  return { ...(await inspectDecoded(decoded.bytes, headers, mediaType, limits, collector, wantsFile)), decoded: decoded.bytes };
}

async function inspectDecoded(bytes: Buffer, headers: IncomingMessage['headers'], mediaType: string, limits: BodyLimits, collector: FieldCollector, wantsFile: (name: string) => boolean): Promise<BodyInspection> {
  const contentType = headerText(headers['content-type']);
  if (contentType !== undefined && !wellFormedContentType(contentType)) return refused('unparsable', 'ambiguous_headers');
  if (isMultipart(mediaType)) {
    if (ambiguousMultipart(bytes, contentType ?? '') !== null) return refused('unparsable', 'ambiguous_body');
    const result = await parseMultipart(bytes, headers, limits.inspectBytes, wantsFile);
    if (result.invalid) collector.anomalies.add('multipart_invalid');
    for (const part of result.parts) {
      if (part.fileName !== undefined) {
        collector.add('file_name', part.name, [part.name.toLowerCase()], part.fileName);
        if (part.value !== '') collector.add('multipart', part.name, parameterNames(part.name), part.value);
      } else collector.add('multipart', part.name, parameterNames(part.name), part.value);
    }
    if (result.tooLarge) return refused('too_large', 'body_too_large');
    if (result.invalid && result.parts.length === 0) return refused('unparsable', 'unparsable_body');
    return finish(collector, { state: 'multipart', refusal: null, text: null });
  }

  const charset = charsetOf(contentType);
  if (mediaType === 'application/x-www-form-urlencoded' && charset !== undefined && !ASCII_COMPATIBLE_CHARSETS.has(charset)) return refused('unparsable', 'ambiguous_body');
  const text = decodeText(bytes, charset);
  if (text === null) return refused('unparsable', 'unsupported_charset');

  if (isJsonType(mediaType)) {
    const scanned = scanJson(text, collector.jsonSink());
    if (scanned !== 'ok') return refused('unparsable', scanned === 'stopped' ? 'too_many_parameters' : 'unparsable_body');
    return finish(collector, { state: 'json', refusal: null, jsonText: text, text: null });
  }

  // Sniffing: JSON whatever the type; a form when the type says nothing more specific.
  const sniffedJson = looksLikeJson(text) && scanJson(text, collector.jsonSink()) === 'ok';
  if (mediaType === 'application/x-www-form-urlencoded') {
    collector.addUrlEncoded(text, 'form');
    return finish(collector, { state: 'form', refusal: null, text: null });
  }
  const untyped = mediaType === '' || mediaType === 'text/plain';
  if (!sniffedJson && untyped && text.includes('=')) collector.addUrlEncoded(text, 'form');
  if (isXmlType(mediaType) || (!sniffedJson && untyped && looksLikeXml(text))) collector.addXml(text);
  return finish(collector, { state: 'other', refusal: null, text: isTextType(mediaType) ? text : null });
}

function finish(collector: FieldCollector, inspection: BodyInspection): BodyInspection {
  return collector.overflow ? refused(inspection.state, 'too_many_parameters') : inspection;
}

/** Whether Content-Type or Content-Encoding appears more than once. */
function repeatsFramingHeader(rawHeaders: readonly string[]): boolean {
  let type = 0;
  let encoding = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (name === 'content-type') type++;
    else if (name === 'content-encoding') encoding++;
  }
  return type > 1 || encoding > 1;
}

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
