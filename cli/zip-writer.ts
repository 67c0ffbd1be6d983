// A minimal ZIP writer (deflate, no ZIP64) for `aegis scan` uploads: a directory tree as an archive
// the API's archive reader (api/scans/sources/archive.ts) accepts. Symlinks are not followed.
import { crc32, deflateRawSync } from 'node:zlib';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ZipEntry {
  name: string;
  data: Buffer;
}

export function buildZip(entries: readonly ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const body = deflateRawSync(e.data);
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(e.data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, body);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x800, 8);
    c.writeUInt16LE(8, 10);
    c.writeUInt16LE(0x21, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(body.length, 20);
    c.writeUInt32LE(e.data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += local.length + name.length + body.length;
    if (offset > 0xffffffff) throw new Error('archive too large');
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/** Every regular file under `root` (names relative, forward slashes), skipping directories named in `skipDirs`. */
export async function zipDirectory(root: string, options: { skipDirs: ReadonlySet<string>; maxBytes: number }): Promise<Buffer> {
  const entries: ZipEntry[] = [];
  let total = 0;
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const items = await readdir(dir, { withFileTypes: true });
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const item of items) {
      const full = join(dir, item.name);
      const name = prefix ? `${prefix}/${item.name}` : item.name;
      if (item.isDirectory()) {
        if (!options.skipDirs.has(item.name)) await walk(full, name);
      } else if (item.isFile()) {
        const st = await lstat(full);
        total += st.size;
        if (total > options.maxBytes) throw new Error(`${root} holds more than ${Math.round(options.maxBytes / 1024 / 1024)} MiB of files: too large to upload (use --local)`);
        entries.push({ name, data: await readFile(full) });
      }
    }
  };
  await walk(root, '');
  return buildZip(entries);
}
