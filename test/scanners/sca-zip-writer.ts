// A tiny ZIP writer for tests: enough to build archives the reader must accept (stored, deflated,
// ZIP64) and archives it must refuse (unsafe names, lying sizes, bad CRCs), which `zip` itself
// will not produce.
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipInput {
  name: string;
  data: Buffer | string;
  /** 0 stored, 8 deflated (default). */
  method?: 0 | 8;
  /** Uncompressed size written to the headers instead of the real one. */
  declaredSize?: number;
  /** CRC-32 written instead of the real one. */
  crc?: number;
  flags?: number;
}

export interface ZipOptions {
  /** Write ZIP64 end records and per-entry ZIP64 extra fields. */
  zip64?: boolean;
  comment?: string;
}

export function buildZip(entries: ZipInput[], options: ZipOptions = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const raw = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, 'utf8');
    const method = e.method ?? 8;
    const body = method === 8 ? deflateRawSync(raw) : raw;
    const name = Buffer.from(e.name, 'utf8');
    const crc = e.crc ?? crc32(raw) >>> 0;
    const size = e.declaredSize ?? raw.length;
    const flags = (e.flags ?? 0) | 0x800;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, body);

    let extra = Buffer.alloc(0);
    if (options.zip64) {
      extra = Buffer.alloc(28);
      extra.writeUInt16LE(1, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(size), 4);
      extra.writeBigUInt64LE(BigInt(body.length), 12);
      extra.writeBigUInt64LE(BigInt(offset), 20);
    }
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(options.zip64 ? 45 : 20, 4);
    c.writeUInt16LE(options.zip64 ? 45 : 20, 6);
    c.writeUInt16LE(flags, 8);
    c.writeUInt16LE(method, 10);
    c.writeUInt16LE(0x21, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(options.zip64 ? 0xffffffff : body.length, 20);
    c.writeUInt32LE(options.zip64 ? 0xffffffff : size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt16LE(extra.length, 30);
    c.writeUInt32LE(options.zip64 ? 0xffffffff : offset, 42);
    central.push(c, name, extra);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(central);
  const cdOffset = offset;
  const tail: Buffer[] = [];
  if (options.zip64) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE(45, 12);
    z.writeUInt16LE(45, 14);
    z.writeBigUInt64LE(BigInt(entries.length), 24);
    z.writeBigUInt64LE(BigInt(entries.length), 32);
    z.writeBigUInt64LE(BigInt(cd.length), 40);
    z.writeBigUInt64LE(BigInt(cdOffset), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(cdOffset + cd.length), 8);
    loc.writeUInt32LE(1, 16);
    tail.push(z, loc);
  }
  const comment = Buffer.from(options.comment ?? '', 'utf8');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(options.zip64 ? 0xffff : entries.length, 8);
  end.writeUInt16LE(options.zip64 ? 0xffff : entries.length, 10);
  end.writeUInt32LE(options.zip64 ? 0xffffffff : cd.length, 12);
  end.writeUInt32LE(options.zip64 ? 0xffffffff : cdOffset, 16);
  end.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...parts, cd, ...tail, end, comment]);
}
