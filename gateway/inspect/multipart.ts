// multipart/form-data bodies read into fields with busboy (the parser multer and
// @fastify/multipart use, so the gateway splits parts the way Node origins do). Text parts become
// fields; a file part contributes its file name (a `file_name` field: traversal hides there) and,
// only when a rule names its part, its content. Anything busboy stumbles on — no boundary, a body
// that ends before the closing boundary, part headers it cannot read, a transfer encoding other
// than 7bit/8bit/binary — is a `multipart_invalid` anomaly: other parsers (PHP, Java, Ruby) may
// read such a body differently, so what was read is inspected and the oddity itself reported.
import { Busboy } from '@fastify/busboy';
import type { IncomingHttpHeaders } from 'node:http';

export interface MultipartPart {
  name: string;
  value: string;
  /** Set for file parts: the value is the file's content (only when wanted) and this its name. */
  fileName?: string;
}

export interface MultipartResult {
  parts: MultipartPart[];
  invalid: boolean;
  /** Text parts (and wanted files) held more than `maxFieldBytes` in total. */
  tooLarge: boolean;
}

const PLAIN_TRANSFER_ENCODINGS = new Set(['7bit', '8bit', 'binary', '']);

/**
 * Parses a complete multipart body. `wantsFile(name)` says whether a file part's content is to be
 * read (lower-case part name). Text parts and wanted files together are read up to `maxFieldBytes`.
 */
export function parseMultipart(body: Buffer, headers: IncomingHttpHeaders, maxFieldBytes: number, wantsFile: (name: string) => boolean): Promise<MultipartResult> {
  const result: MultipartResult = { parts: [], invalid: false, tooLarge: false };
  let budget = maxFieldBytes;
  const take = (bytes: number): boolean => {
    budget -= bytes;
    if (budget < 0) result.tooLarge = true;
    return budget >= 0;
  };
  return new Promise((resolve) => {
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: headers as IncomingHttpHeaders & { 'content-type': string },
        limits: { fieldNameSize: 1024, fieldSize: maxFieldBytes + 1, headerPairs: 64 },
        preservePath: true,
      });
    } catch {
      // No boundary, or not multipart after all.
      result.invalid = true;
      return resolve(result);
    }
    const pending: Promise<void>[] = [];
    parser.on('field', (name, value, nameTruncated, valueTruncated, transferEncoding) => {
      if (nameTruncated || !PLAIN_TRANSFER_ENCODINGS.has(transferEncoding.toLowerCase())) result.invalid = true;
      if (valueTruncated) result.tooLarge = true;
      if (take(Buffer.byteLength(name) + Buffer.byteLength(value))) result.parts.push({ name, value });
    });
    parser.on('file', (name, stream, fileName, transferEncoding) => {
      if (!PLAIN_TRANSFER_ENCODINGS.has(transferEncoding.toLowerCase())) result.invalid = true;
      const wanted = wantsFile(name.toLowerCase());
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (wanted && take(chunk.length)) chunks.push(chunk);
      });
      pending.push(
        new Promise<void>((done) => {
          stream.on('end', () => {
            result.parts.push({ name, fileName, value: wanted ? Buffer.concat(chunks).toString('utf8') : '' });
            done();
          });
          stream.on('error', () => {
            result.invalid = true;
            done();
          });
        }),
      );
    });
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      void Promise.all(pending).then(() => resolve(result));
    };
    parser.on('finish', finish);
    parser.on('error', () => {
      result.invalid = true;
      finish();
    });
    parser.end(body);
  });
}
