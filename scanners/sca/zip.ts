// A bounded ZIP reader for advisory archives (OSV publishes `all.zip` per ecosystem); no ZIP
// package is installed, and only reading is needed. It reads the central directory (ZIP64 included:
// large ecosystems exceed 65,535 entries) and inflates entries with node:zlib. Supported: stored and
// deflated entries, one disk, no encryption. Every size comes from the archive and is untrusted:
// entry count, per-entry and total uncompressed size are capped, inflation is cut off at the declared
// size, data must lie before the central directory, and CRC-32 is checked. Entry names are never
// used as file-system paths, but names that would be unsafe if they were (absolute, `..`, `\`,
// NUL) are rejected so that nothing downstream is tempted.
import { open, type FileHandle } from 'node:fs/promises';
import { crc32, inflateRaw } from 'node:zlib';
import { promisify } from 'node:util';

const inflateRawAsync = promisify(inflateRaw) as (buf: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

export interface ZipLimits {
  maxEntries: number;
  /** Uncompressed bytes of one entry. */
  maxEntryBytes: number;
  /** Uncompressed bytes of all entries read. */
  maxTotalBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 1_000_000, maxEntryBytes: 16 * 1024 * 1024, maxTotalBytes: 4 * 1024 * 1024 * 1024 };

/** The archive as a whole cannot be read (or a total limit was hit): reading stops. */
export class ZipError extends Error {}

export type ZipEntryResult = { name: string; data: Buffer } | { name: string; error: string };

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const MAX_CENTRAL_DIRECTORY = 512 * 1024 * 1024;

interface CentralEntry {
  name: string;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** True when a name could not escape a directory it was extracted into. */
export function isSafeEntryName(name: string): boolean {
  if (name === '' || name.length > 1024 || name.includes('\0') || name.includes('\\')) return false;
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return false;
  return !name.split('/').some((seg) => seg === '..');
}

/**
 * Yields every file entry (directories are skipped) with its data or the reason it was rejected;
 * entries `accept` turns down are skipped unread (unsafe names are reported regardless).
 * Throws ZipError when the archive is unreadable or a whole-archive limit is exceeded.
 */
export async function* readZipEntries(path: string, limits: Partial<ZipLimits> = {}, accept: (name: string) => boolean = () => true): AsyncGenerator<ZipEntryResult> {
  const lim: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const fh = await open(path, 'r');
  try {
    const { size: fileSize } = await fh.stat();
    const { entries, cdOffset } = await readCentralDirectory(fh, fileSize, lim);
    let total = 0;
    for (const e of entries) {
      if (e.name.endsWith('/')) continue;
      if (!isSafeEntryName(e.name)) {
        yield { name: e.name, error: 'unsafe entry name' };
        continue;
      }
      if (!accept(e.name)) continue;
      if (e.flags & 1) {
        yield { name: e.name, error: 'encrypted entry' };
        continue;
      }
      if (e.method !== 0 && e.method !== 8) {
        yield { name: e.name, error: `unsupported compression method ${e.method}` };
        continue;
      }
      if (e.size > lim.maxEntryBytes) {
        yield { name: e.name, error: `entry too large (${e.size} bytes, limit ${lim.maxEntryBytes})` };
        continue;
      }
      // Deflate never grows data by more than a few bytes per 16 KiB block; anything bigger is not
      // what the header claims, and would be read into memory before inflation noticed.
      if (e.compressedSize > e.size + (e.size >>> 10) + 1024) {
        yield { name: e.name, error: 'compressed size larger than the data it claims to hold' };
        continue;
      }
      total += e.size;
      if (total > lim.maxTotalBytes) throw new ZipError(`archive too large: more than ${lim.maxTotalBytes} bytes uncompressed`);
      const result = await readEntry(fh, e, cdOffset);
      yield typeof result === 'string' ? { name: e.name, error: result } : { name: e.name, data: result };
    }
  } finally {
    await fh.close();
  }
}

async function readAt(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, offset);
  if (bytesRead !== length) throw new ZipError('unexpected end of archive');
  return buf;
}

function u64(buf: Buffer, at: number): number {
  const v = buf.readBigUInt64LE(at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError('ZIP64 value out of range');
  return Number(v);
}

async function readCentralDirectory(fh: FileHandle, fileSize: number, lim: ZipLimits): Promise<{ entries: CentralEntry[]; cdOffset: number }> {
  if (fileSize < 22) throw new ZipError('not a ZIP archive');
  // The end record is the last 22 bytes plus a comment of up to 65,535 bytes.
  const tailLen = Math.min(fileSize, 22 + 0xffff);
  const tailStart = fileSize - tailLen;
  const tail = await readAt(fh, tailStart, tailLen);
  let eocd = -1;
  for (let i = tailLen - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === SIG_EOCD && i + 22 + tail.readUInt16LE(i + 20) === tailLen) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError('not a ZIP archive (no end of central directory)');
  if (tail.readUInt16LE(eocd + 4) !== 0 || tail.readUInt16LE(eocd + 6) !== 0) throw new ZipError('multi-disk archives are not supported');
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  const eocdAbs = tailStart + eocd;
  let cdEnd = eocdAbs;
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    if (eocdAbs < 20) throw new ZipError('ZIP64 locator missing');
    const loc = await readAt(fh, eocdAbs - 20, 20);
    if (loc.readUInt32LE(0) !== SIG_ZIP64_LOCATOR) throw new ZipError('ZIP64 locator missing');
    const z64At = u64(loc, 8);
    if (z64At + 56 > eocdAbs - 20) throw new ZipError('ZIP64 end record out of bounds');
    const z64 = await readAt(fh, z64At, 56);
    if (z64.readUInt32LE(0) !== SIG_ZIP64_EOCD) throw new ZipError('ZIP64 end record missing');
    if (z64.readUInt32LE(16) !== 0 || z64.readUInt32LE(20) !== 0) throw new ZipError('multi-disk archives are not supported');
    count = u64(z64, 32);
    cdSize = u64(z64, 40);
    cdOffset = u64(z64, 48);
    cdEnd = z64At;
  }
  if (count > lim.maxEntries) throw new ZipError(`too many entries (${count}, limit ${lim.maxEntries})`);
  if (cdOffset + cdSize > cdEnd || cdSize > MAX_CENTRAL_DIRECTORY) throw new ZipError('central directory out of bounds');
  const cd = await readAt(fh, cdOffset, cdSize);
  const entries: CentralEntry[] = [];
  let p = 0;
  for (let n = 0; n < count; n++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== SIG_CENTRAL) throw new ZipError('corrupt central directory');
    const flags = cd.readUInt16LE(p + 8);
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    if (p + 46 + nameLen + extraLen + commentLen > cd.length) throw new ZipError('corrupt central directory');
    // Bit 11 marks UTF-8 names; others are CP437, whose ASCII range (all that safe names use) agrees.
    const nameBytes = cd.subarray(p + 46, p + 46 + nameLen);
    const name = flags & 0x800 ? nameBytes.toString('utf8') : nameBytes.toString('latin1');
    const entry: CentralEntry = {
      name,
      flags,
      method: cd.readUInt16LE(p + 10),
      crc: cd.readUInt32LE(p + 16),
      compressedSize: cd.readUInt32LE(p + 20),
      size: cd.readUInt32LE(p + 24),
      localOffset: cd.readUInt32LE(p + 42),
    };
    applyZip64Extra(entry, cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen));
    entries.push(entry);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return { entries, cdOffset };
}

/** ZIP64 extra field (id 1): 8-byte values for whichever 32-bit fields were saturated, in this order. */
function applyZip64Extra(e: CentralEntry, extra: Buffer): void {
  let p = 0;
  while (p + 4 <= extra.length) {
    const id = extra.readUInt16LE(p);
    const len = extra.readUInt16LE(p + 2);
    const body = extra.subarray(p + 4, p + 4 + len);
    if (id === 0x0001) {
      let q = 0;
      const next = (): number => {
        if (q + 8 > body.length) throw new ZipError('corrupt ZIP64 extra field');
        const v = u64(body, q);
        q += 8;
        return v;
      };
      if (e.size === 0xffffffff) e.size = next();
      if (e.compressedSize === 0xffffffff) e.compressedSize = next();
      if (e.localOffset === 0xffffffff) e.localOffset = next();
      return;
    }
    p += 4 + len;
  }
}

/** The entry's bytes, or a reason it could not be read. */
async function readEntry(fh: FileHandle, e: CentralEntry, cdOffset: number): Promise<Buffer | string> {
  if (e.localOffset + 30 > cdOffset) return 'local header out of bounds';
  const local = await readAt(fh, e.localOffset, 30);
  if (local.readUInt32LE(0) !== SIG_LOCAL) return 'local header missing';
  const dataStart = e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (dataStart + e.compressedSize > cdOffset) return 'entry data out of bounds';
  const compressed = await readAt(fh, dataStart, e.compressedSize);
  let data: Buffer;
  if (e.method === 0) {
    if (e.compressedSize !== e.size) return 'stored entry size mismatch';
    data = compressed;
  } else {
    try {
      // Inflation stops at the declared size, so a lying header cannot make it expand further.
      data = await inflateRawAsync(compressed, { maxOutputLength: Math.max(1, e.size) });
    } catch (err) {
      return `cannot inflate: ${(err as Error).message}`;
    }
  }
  if (data.length !== e.size) return 'size mismatch';
  if (crc32(data) >>> 0 !== e.crc >>> 0) return 'CRC mismatch';
  return data;
}
