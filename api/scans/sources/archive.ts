// Extraction of an uploaded source archive (zip, tar, tar.gz) into an empty directory.
//
// The archive is untrusted. Entry names never reach the file system unchecked: absolute names, `..`
// segments, backslashes, NUL and other control characters are skipped and reported; every path
// written is resolved and must lie inside the directory; files are opened with O_EXCL|O_NOFOLLOW.
// Only regular files and directories are created: symlinks, hard links, devices and FIFOs are
// skipped and reported (a link could point a scanner at files outside the workspace). `.git`
// entries are skipped too: a repository's config can name programs git runs (core.fsmonitor,
// core.pager, …), and the secrets history scan runs git in the extracted tree.
//
// Sizes come from the archive and are untrusted too. maxEntries and maxTotalBytes stop extraction
// with an ArchiveError; an entry over maxEntryBytes is skipped and reported (a large binary in a
// source tree should not fail the scan). For zip the declared sizes are checked before anything is
// inflated (by ../../scanners/sca/zip.ts, which also stops inflating at the declared size). For tar
// the data is read as a stream: an entry whose declared size exceeds the remaining budget stops
// extraction before it is read, the data of skipped entries counts toward maxTotalBytes (it has to
// be decompressed to get past it), and decompression stops at the end-of-archive marker.
//
// As in GitHub's archives (`owner-repo-<sha>/…`), when every entry lies under one top-level
// directory, that directory is removed from the paths: the extracted tree starts at its contents,
// so findings show `src/app.js` rather than `owner-repo-1a2b3c/src/app.js`.
//
// If extraction fails part-way the directory holds what was written so far; callers extract into a
// workspace (./workspace.ts) and discard it.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { createGunzip } from 'node:zlib';
import { readZipEntries, ZipError } from '../../../scanners/sca/zip.ts';
import { withWorkspace } from '../../../platform/git/workspace.ts';

export type ArchiveKind = 'zip' | 'tar' | 'tar.gz';

export interface ArchiveLimits {
  /** Entries of any kind (files, directories, links, …). */
  maxEntries: number;
  /** Uncompressed bytes of all entries. */
  maxTotalBytes: number;
  /** Uncompressed bytes of one file; larger files are skipped. */
  maxEntryBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 50_000, maxTotalBytes: 512 * 1024 * 1024, maxEntryBytes: 64 * 1024 * 1024 };

export interface ExtractResult {
  files: number;
  /** Bytes written. */
  bytes: number;
  /** Entries not extracted, with the reason (archive names, control characters replaced); the first 1000, then a count. */
  skipped: { path: string; reason: string }[];
  /** The top-level directory removed from all paths, or null. */
  stripped: string | null;
}

/** The archive cannot be extracted: corrupt, or over a limit. The message is safe to show. */
export class ArchiveError extends Error {}

/** The kind from the first bytes: zip (PK\x03\x04, or PK\x05\x06 when empty), gzip (taken as tar.gz), ustar tar. */
export function detectArchiveKind(bytes: Buffer): ArchiveKind | null {
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && ((bytes[2] === 3 && bytes[3] === 4) || (bytes[2] === 5 && bytes[3] === 6))) return 'zip';
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'tar.gz';
  if (bytes.length >= 262 && bytes.toString('latin1', 257, 262) === 'ustar') return 'tar';
  return null;
}

export async function extractArchive(bytes: Buffer, kind: ArchiveKind, dir: string, limits: Partial<ArchiveLimits> = {}): Promise<ExtractResult> {
  const lim: ArchiveLimits = { ...DEFAULT_ARCHIVE_LIMITS, ...limits };
  for (const [name, value] of Object.entries(lim)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
  const detected = detectArchiveKind(bytes);
  // Old (pre-POSIX) tar headers carry no magic; the parser's checksums still validate them.
  if (detected !== kind && !(kind === 'tar' && detected === null)) {
    throw new ArchiveError(`the upload is not a ${kind} archive${detected ? ` (it looks like ${detected})` : ''}`);
  }
  const root = resolve(dir);
  await mkdir(root, { recursive: true, mode: 0o700 });
  if ((await readdir(root)).length > 0) throw new Error(`extraction directory ${root} is not empty`);

  const out = new Extractor(root, lim);
  if (kind === 'zip') await extractZip(bytes, out, lim);
  else await extractTar(kind === 'tar.gz' ? gunzipChunks(bytes) : singleChunk(bytes), out, lim);
  return out.finish();
}

// ---------------------------------------------------------------------------------------------
// Writing, shared by both formats.

type Checked = { segments: string[] } | { reason: string };

/** The entry's path segments (`.` and empty ones dropped), or why it must not be extracted. */
function checkEntryName(name: string): Checked {
  if (name.includes('\0')) return { reason: 'NUL byte in name' };
  if (/[\x01-\x1f\x7f]/.test(name)) return { reason: 'control character in name' };
  if (name.includes('\\')) return { reason: 'backslash in name' };
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return { reason: 'absolute path' };
  if (Buffer.byteLength(name) > 4096) return { reason: 'name too long' };
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return { reason: "'..' in path" };
  if (segments.some((s) => Buffer.byteLength(s) > 255)) return { reason: 'name too long' };
  return { segments };
}

const MAX_SKIPPED_REPORTED = 1000;

function displayName(name: string): string {
  const shown = name.replace(/[\x00-\x1f\x7f]/g, '?');
  return shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
}

class Extractor {
  private files = 0;
  private bytes = 0;
  private entries = 0;
  private readonly skipped: { path: string; reason: string }[] = [];
  private unreported = 0;
  private readonly gitDirs = new Set<string>();
  private readonly topLevel = new Set<string>();
  private fileAtTop = false;

  constructor(
    private readonly root: string,
    private readonly limits: ArchiveLimits,
  ) {}

  countEntry(): void {
    if (++this.entries > this.limits.maxEntries) throw new ArchiveError(`archive has too many entries (limit ${this.limits.maxEntries})`);
  }

  /** Reports an entry as not extracted; it still counts for top-level stripping. */
  skip(name: string, reason: string): void {
    this.note(name, false);
    this.report(name, reason);
  }

  /** Adds to the list of entries not extracted, without counting it for stripping (accept() did, or its name is unsafe). */
  report(name: string, reason: string): void {
    // Bounded: the list is stored with the scan, and an archive can hold 50,000 symlinks.
    if (this.skipped.length < MAX_SKIPPED_REPORTED) this.skipped.push({ path: displayName(name), reason });
    else this.unreported++;
  }

  /**
   * The segments to write `name` to, or null after reporting it as skipped. Also records the
   * entry's top-level name for stripping (entries refused for their name do not count).
   */
  accept(name: string, isDir: boolean): string[] | null {
    const checked = checkEntryName(name);
    if ('reason' in checked) {
      this.report(name, checked.reason);
      return null;
    }
    const { segments } = checked;
    if (segments.length === 0) return null; // the archive's root itself (`./`)
    this.note(name, isDir);
    const git = segments.indexOf('.git');
    if (git >= 0) {
      // Reported once per repository directory, not once per object file.
      const gitDir = segments.slice(0, git + 1).join('/');
      if (!this.gitDirs.has(gitDir)) {
        this.gitDirs.add(gitDir);
        this.report(gitDir, '.git metadata is not extracted');
      }
      return null;
    }
    return segments;
  }

  private note(name: string, isDir: boolean): void {
    const checked = checkEntryName(name);
    if ('reason' in checked || checked.segments.length === 0) return;
    this.topLevel.add(checked.segments[0]!);
    if (checked.segments.length === 1 && !isDir) this.fileAtTop = true;
  }

  private pathOf(segments: string[]): string {
    const path = resolve(this.root, ...segments);
    // checkEntryName already excludes every way out; this holds the line if it ever gets it wrong.
    if (!path.startsWith(this.root + sep)) throw new ArchiveError('entry path escapes the extraction directory');
    return path;
  }

  async directory(name: string, segments: string[]): Promise<void> {
    try {
      await mkdir(this.pathOf(segments), { recursive: true, mode: 0o700 });
    } catch (err) {
      this.conflict(name, err);
    }
  }

  /** Writes a regular file from its data, in one piece or as a stream of chunks. */
  async file(name: string, segments: string[], data: Buffer | AsyncIterable<Buffer>): Promise<void> {
    const path = this.pathOf(segments);
    let handle;
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      // O_EXCL: never reuse or follow anything already there (a duplicate entry keeps the first).
      handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      this.conflict(name, err);
      if (!Buffer.isBuffer(data)) for await (const _ of data); // the stream must still be read past
      return;
    }
    let written = 0;
    try {
      if (Buffer.isBuffer(data)) {
        await handle.writeFile(data);
        written = data.length;
      } else {
        for await (const chunk of data) {
          await handle.write(chunk);
          written += chunk.length;
        }
      }
    } finally {
      await handle.close();
    }
    this.files++;
    this.bytes += written;
  }

  private conflict(name: string, err: unknown): void {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ELOOP') {
      this.report(name, code === 'EEXIST' ? 'duplicate entry or path conflict' : 'path conflicts with another entry');
      return;
    }
    throw err;
  }

  async finish(): Promise<ExtractResult> {
    let stripped: string | null = null;
    const [top] = this.topLevel;
    if (this.topLevel.size === 1 && !this.fileAtTop && top !== undefined) {
      const topPath = this.pathOf([top]);
      const present = await readdir(this.root);
      const stat = await lstat(topPath).catch(() => null);
      if (present.length === 1 && present[0] === top && stat?.isDirectory()) {
        // Moved aside under an unguessable name first: a child may have the top directory's name.
        const aside = this.pathOf([`.aegis-strip-${randomBytes(8).toString('hex')}`]);
        await rename(topPath, aside);
        for (const child of await readdir(aside)) await rename(join(aside, child), this.pathOf([child]));
        await rmdir(aside);
        stripped = top;
      }
    }
    const skipped = this.unreported > 0 ? [...this.skipped, { path: '…', reason: `${this.unreported} more entries not extracted` }] : this.skipped;
    return { files: this.files, bytes: this.bytes, skipped, stripped };
  }
}

// ---------------------------------------------------------------------------------------------
// zip, through the SCA advisory reader (which reads from a file).

async function extractZip(bytes: Buffer, out: Extractor, lim: ArchiveLimits): Promise<void> {
  await withWorkspace(async (tmp) => {
    const file = join(tmp, 'upload.zip');
    await writeFile(file, bytes, { mode: 0o600 });
    // Names are checked before the reader inflates anything: refused entries are never read.
    const pending = new Map<string, string[]>();
    const accept = (name: string): boolean => {
      const segments = out.accept(name, false);
      if (segments) pending.set(name, segments);
      return segments !== null;
    };
    try {
      for await (const entry of readZipEntries(file, { maxEntries: lim.maxEntries, maxEntryBytes: lim.maxEntryBytes, maxTotalBytes: lim.maxTotalBytes }, accept)) {
        out.countEntry();
        if ('error' in entry) {
          // Names the reader refuses itself never reach accept(); the others did, already noted.
          if (pending.delete(entry.name)) out.report(entry.name, entry.error);
          else out.skip(entry.name, entry.error);
          continue;
        }
        const segments = pending.get(entry.name);
        pending.delete(entry.name);
        if (segments) await out.file(entry.name, segments, entry.data);
      }
    } catch (err) {
      if (err instanceof ZipError) throw new ArchiveError(`invalid zip archive: ${err.message}`);
      throw err;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// tar (ustar, GNU long names, pax), read as a stream.

const BLOCK = 512;
/** Payload of one pax or GNU long-name header. */
const MAX_META_BYTES = 1024 * 1024;
/** Extension headers (x, g, L, K) in a row before a real entry; real archives use at most three. */
const MAX_META_RUN = 8;

async function* singleChunk(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

async function* gunzipChunks(bytes: Buffer): AsyncGenerator<Buffer> {
  const gunzip = createGunzip();
  gunzip.end(bytes);
  try {
    // Pulled on demand: nothing is decompressed ahead of what the tar reader consumes.
    for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
  } catch (err) {
    throw new ArchiveError(`invalid gzip data: ${(err as Error).message}`);
  } finally {
    gunzip.destroy();
  }
}

class ByteReader {
  private chunks: Buffer[] = [];
  private available = 0;
  private done = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.available < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else if (next.value.length > 0) {
        this.chunks.push(next.value);
        this.available += next.value.length;
      }
    }
    return this.available >= n;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.available -= n;
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - off);
      c.copy(out, off, 0, k);
      off += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.available -= n;
    return out;
  }

  /** Exactly n bytes; null at a clean end of input (nothing left), ArchiveError if cut short. */
  async read(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) {
      if (this.available === 0) return null;
      throw new ArchiveError('truncated tar archive');
    }
    return this.take(n);
  }

  /** The next n bytes as they arrive. */
  async *pieces(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.available === 0 && !(await this.fill(1))) throw new ArchiveError('truncated tar archive');
      const piece = this.take(Math.min(left, this.chunks[0]!.length));
      left -= piece.length;
      yield piece;
    }
  }

  async skip(n: number): Promise<void> {
    for await (const _ of this.pieces(n));
  }

  async close(): Promise<void> {
    await this.source.return?.();
  }
}

function cString(buf: Buffer, start: number, length: number): string {
  const field = buf.subarray(start, start + length);
  const nul = field.indexOf(0);
  return field.toString('utf8', 0, nul < 0 ? field.length : nul);
}

/** An octal field, or GNU base-256 (high bit of the first byte set) for large values. */
function tarNumber(buf: Buffer, start: number, length: number): number {
  const field = buf.subarray(start, start + length);
  if (field[0]! & 0x80) {
    if (field[0]! & 0x40) throw new ArchiveError('negative number in tar header');
    let value = BigInt(field[0]! & 0x3f);
    for (let i = 1; i < field.length; i++) value = value * 256n + BigInt(field[i]!);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new ArchiveError('number out of range in tar header');
    return Number(value);
  }
  const text = field.toString('latin1').replace(/[\0 ]+$/, '').replace(/^ +/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new ArchiveError('invalid number in tar header');
  return parseInt(text, 8);
}

function checksumOk(header: Buffer): boolean {
  const stored = tarNumber(header, 148, 8);
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : header[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  // Some old tars summed signed bytes.
  return stored === unsigned || stored === signed;
}

/** pax extended header records: `<length> <key>=<value>\n`. */
function parsePax(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let p = 0;
  while (p < data.length) {
    if (data[p] === 0) break; // NUL padding some writers leave
    const space = data.indexOf(0x20, p);
    const lengthText = space < 0 ? '' : data.toString('latin1', p, space);
    if (!/^[1-9][0-9]{0,7}$/.test(lengthText)) throw new ArchiveError('invalid pax header');
    const end = p + Number(lengthText);
    if (end > data.length || end <= space + 1 || data[end - 1] !== 0x0a) throw new ArchiveError('invalid pax header');
    const record = data.subarray(space + 1, end - 1);
    const eq = record.indexOf(0x3d);
    if (eq <= 0) throw new ArchiveError('invalid pax header');
    records.set(record.toString('utf8', 0, eq), record.toString('utf8', eq + 1));
    p = end;
  }
  return records;
}

const TYPE_NAMES: Record<string, string> = { '1': 'hard link', '2': 'symbolic link', '3': 'character device', '4': 'block device', '6': 'FIFO' };

async function extractTar(source: AsyncGenerator<Buffer>, out: Extractor, lim: ArchiveLimits): Promise<void> {
  const reader = new ByteReader(source);
  let budget = lim.maxTotalBytes;
  const spend = (size: number): void => {
    if (size > budget) throw new ArchiveError(`archive too large: more than ${lim.maxTotalBytes} bytes uncompressed`);
    budget -= size;
  };
  const padding = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

  let longName: string | null = null;
  let paxPath: string | null = null;
  let paxSize: number | null = null;
  let metaRun = 0;
  try {
    for (;;) {
      const header = await reader.read(BLOCK);
      // The end is marked by zero blocks; a missing marker after a complete entry is tolerated.
      if (header === null || header.every((b) => b === 0)) break;
      if (!checksumOk(header)) throw new ArchiveError('invalid tar header (checksum mismatch)');
      const type = String.fromCharCode(header[156]!);
      let size = tarNumber(header, 124, 12);

      if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
        if (++metaRun > MAX_META_RUN) throw new ArchiveError('too many tar extension headers in a row');
        if (size > MAX_META_BYTES) throw new ArchiveError('tar extension header too large');
        spend(size);
        const data = size === 0 ? Buffer.alloc(0) : await reader.read(size);
        if (data === null) throw new ArchiveError('truncated tar archive');
        await reader.skip(padding(size));
        if (type === 'L') longName = cString(data, 0, data.length);
        else if (type === 'x') {
          const pax = parsePax(data);
          const path = pax.get('path');
          if (path !== undefined) paxPath = path;
          const paxSizeText = pax.get('size');
          if (paxSizeText !== undefined) {
            if (!/^\d{1,16}$/.test(paxSizeText) || !Number.isSafeInteger(Number(paxSizeText))) throw new ArchiveError('invalid size in pax header');
            paxSize = Number(paxSizeText);
          }
        } else if (type === 'g') parsePax(data); // validated, otherwise unused (GitHub puts the commit id there)
        // K (GNU long link target): links are not extracted, the target is not needed.
        continue;
      }
      metaRun = 0;
      out.countEntry();

      // POSIX ustar splits long names into prefix + name; GNU's "ustar  " magic uses that space otherwise.
      const posix = header.toString('latin1', 257, 263) === 'ustar\0';
      const prefix = posix ? cString(header, 345, 155) : '';
      const headerName = prefix !== '' ? `${prefix}/${cString(header, 0, 100)}` : cString(header, 0, 100);
      const name = paxPath ?? longName ?? headerName;
      if (paxSize !== null) size = paxSize;
      longName = paxPath = paxSize = null;

      if (type in TYPE_NAMES) {
        // No data follows these (POSIX); a size here would make readers disagree on where the next header is.
        if (size !== 0) throw new ArchiveError(`invalid tar header: ${TYPE_NAMES[type]} with data`);
        out.skip(name, `${TYPE_NAMES[type]} not extracted`);
        continue;
      }
      spend(size);
      const isFile = type === '0' || type === '\0' || type === '7';
      // Pre-POSIX tars mark directories by a trailing slash only.
      const isDir = type === '5' || (isFile && size === 0 && name.endsWith('/'));
      if (isDir) {
        const segments = out.accept(name, true);
        if (segments) await out.directory(name, segments);
        await reader.skip(size + padding(size));
      } else if (isFile) {
        const segments = out.accept(name, false);
        if (segments && size > lim.maxEntryBytes) {
          out.report(name, `entry too large (${size} bytes, limit ${lim.maxEntryBytes})`);
          await reader.skip(size);
        } else if (segments) await out.file(name, segments, reader.pieces(size));
        else await reader.skip(size);
        await reader.skip(padding(size));
      } else {
        out.skip(name, `unsupported tar entry type '${type.replace(/[^\x21-\x7e]/g, '?')}'`);
        await reader.skip(size + padding(size));
      }
    }
  } finally {
    await reader.close();
  }
}
