// Advisory sources and the OSV file readers behind `aegis advisories import DIR|ZIP`.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOsvDirectory, loadOsvZip, MemoryAdvisorySource } from '../../scanners/sca/advisory-source.ts';
import { parseOsvRecord, type OsvRecord } from '../../scanners/sca/osv.ts';
import { isSafeEntryName, readZipEntries, ZipError } from '../../scanners/sca/zip.ts';
import { buildZip } from './sca-zip-writer.ts';

const ADVISORIES = resolve('test/fixtures/scanners/sca/advisories');
const work = mkdtempSync(join(tmpdir(), 'aegis-sca-adv-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
function writeZip(buf: Buffer): string {
  const path = join(work, `a${n++}.zip`);
  writeFileSync(path, buf);
  return path;
}

function osv(id: string, ecosystem: string, name: string, modified = '2024-01-01T00:00:00Z'): OsvRecord {
  const r = parseOsvRecord({ id, modified, affected: [{ package: { ecosystem, name }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }] }] });
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.record;
}

const fixtureFiles = readdirSync(ADVISORIES).filter((f) => f.endsWith('.json')).sort();

describe('MemoryAdvisorySource', () => {
  it('finds records by any spelling of a package name the ecosystem treats as the same', async () => {
    const src = new MemoryAdvisorySource([osv('A-1', 'PyPI', 'Django'), osv('A-2', 'npm', 'Lodash'), osv('A-3', 'Go', 'github.com/sirupsen/logrus')]);
    expect((await src.forPackages([{ ecosystem: 'PyPI', name: 'django' }])).map((r) => r.id)).toEqual(['A-1']);
    expect(await src.forPackages([{ ecosystem: 'npm', name: 'lodash' }])).toEqual([]);
    expect(await src.forPackages([{ ecosystem: 'Go', name: 'github.com/Sirupsen/logrus' }])).toEqual([]);
    expect(await src.forPackages([{ ecosystem: 'npm', name: 'django' }])).toEqual([]);
  });

  it('upserts by id, replacing only with a newer modified, and re-indexes replaced records', async () => {
    const src = new MemoryAdvisorySource();
    expect(await src.upsert([osv('A-1', 'npm', 'a'), osv('A-2', 'npm', 'b')])).toEqual({ inserted: 2, updated: 0, unchanged: 0 });
    expect(await src.upsert([osv('A-1', 'npm', 'c', '2023-01-01T00:00:00Z'), osv('A-2', 'npm', 'c', '2025-01-01T00:00:00Z')])).toEqual({ inserted: 0, updated: 1, unchanged: 1 });
    expect((await src.forPackages([{ ecosystem: 'npm', name: 'c' }])).map((r) => r.id)).toEqual(['A-2']);
    expect(await src.forPackages([{ ecosystem: 'npm', name: 'b' }])).toEqual([]);
    expect(src.size).toBe(2);
  });
});

describe('loadOsvDirectory', () => {
  it('loads every fixture record without errors or warnings', async () => {
    const r = await loadOsvDirectory(ADVISORIES);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.files).toBe(fixtureFiles.length);
    expect(r.records.map((x) => x.id).sort()).toEqual(fixtureFiles.map((f) => f.replace(/\.json$/, '')));
  });

  it('walks subdirectories, accepts arrays, reports bad files, ignores symlinks and other files', async () => {
    const dir = join(work, 'dir');
    mkdirSync(join(dir, 'npm'), { recursive: true });
    writeFileSync(join(dir, 'npm', 'A-1.json'), JSON.stringify(osv('A-1', 'npm', 'a')));
    writeFileSync(join(dir, 'bundle.json'), JSON.stringify([osv('A-2', 'npm', 'b'), { id: 'broken' }]));
    writeFileSync(join(dir, 'invalid.json'), '{ not json');
    writeFileSync(join(dir, 'README.md'), '# not an advisory');
    writeFileSync(join(dir, 'big.json'), JSON.stringify({ ...osv('A-3', 'npm', 'c'), details: 'x'.repeat(5000) }));
    const outside = join(work, 'outside.json');
    writeFileSync(outside, JSON.stringify(osv('A-9', 'npm', 'z')));
    symlinkSync(outside, join(dir, 'link.json'));
    const r = await loadOsvDirectory(dir, { maxFileBytes: 4096 });
    expect(r.records.map((x) => x.id).sort()).toEqual(['A-1', 'A-2']);
    expect(r.errors.map((e) => e.file).sort()).toEqual(['big.json', 'bundle.json[1]', 'invalid.json']);
  });
});

describe('loadOsvZip', () => {
  it('loads an archive written by this test (deflated and stored entries)', async () => {
    const path = writeZip(buildZip(fixtureFiles.map((f, i) => ({ name: f, data: readFileSync(join(ADVISORIES, f)), method: i % 2 === 0 ? 8 : 0 }))));
    const r = await loadOsvZip(path);
    expect(r.errors).toEqual([]);
    expect(r.records).toHaveLength(fixtureFiles.length);
  });

  it('loads a ZIP64 archive', async () => {
    const path = writeZip(buildZip([{ name: 'A-1.json', data: JSON.stringify(osv('A-1', 'npm', 'a')) }, { name: 'sub/A-2.json', data: JSON.stringify(osv('A-2', 'npm', 'b')), method: 0 }], { zip64: true, comment: 'osv' }));
    const r = await loadOsvZip(path);
    expect(r.errors).toEqual([]);
    expect(r.records.map((x) => x.id)).toEqual(['A-1', 'A-2']);
  });

  const hasZip = spawnSync('zip', ['-v']).status === 0;
  it.skipIf(!hasZip)('loads an archive made by the zip command', async () => {
    const path = join(work, 'cli.zip');
    execFileSync('zip', ['-q', '-r', path, '.'], { cwd: ADVISORIES });
    const r = await loadOsvZip(path);
    expect(r.errors).toEqual([]);
    expect(r.records).toHaveLength(fixtureFiles.length);
  });

  it('rejects zip-slip names and keeps the safe entries', async () => {
    const good = JSON.stringify(osv('A-1', 'npm', 'a'));
    const names = ['../evil.json', '/etc/evil.json', 'a/../../evil.json', 'C:/evil.json', 'dir\\..\\evil.json', '../evil.txt'];
    const path = writeZip(buildZip([{ name: 'ok/A-1.json', data: good }, ...names.map((name) => ({ name, data: good }))]));
    const r = await loadOsvZip(path);
    expect(r.records.map((x) => x.id)).toEqual(['A-1']);
    expect(r.errors.map((e) => [e.file, e.message])).toEqual(names.map((name) => [name, 'unsafe entry name']));
    expect(['a/b.json', 'a..b.json', 'x/..y/z.json'].every(isSafeEntryName)).toBe(true);
  });

  it('rejects oversized entries, lying sizes, bad CRCs and unknown methods per entry', async () => {
    const data = JSON.stringify(osv('A-1', 'npm', 'a'));
    const bomb = Buffer.alloc(1024 * 1024, 0x20);
    const path = writeZip(
      buildZip([
        { name: 'big.json', data: Buffer.concat([Buffer.from(data), Buffer.alloc(5000, 0x20)]) },
        // A deflate bomb that claims to be small: inflation stops at the declared size.
        { name: 'bomb.json', data: bomb, declaredSize: 4000 },
        // Claims 10 bytes but carries kilobytes of incompressible data.
        { name: 'padded.json', data: randomBytes(3000), declaredSize: 10 },
        { name: 'crc.json', data, crc: 12345 },
        { name: 'stored-lie.json', data, method: 0, declaredSize: 10 },
        { name: 'encrypted.json', data, flags: 1 },
        { name: 'fine.json', data },
      ]),
    );
    const r = await loadOsvZip(path, { maxFileBytes: 4096 });
    expect(r.records).toHaveLength(1);
    const byFile = Object.fromEntries(r.errors.map((e) => [e.file, e.message]));
    expect(byFile['big.json']).toMatch(/too large/);
    expect(byFile['bomb.json']).toMatch(/inflate|size mismatch/);
    expect(byFile['padded.json']).toMatch(/compressed size larger/);
    expect(byFile['crc.json']).toBe('CRC mismatch');
    expect(byFile['stored-lie.json']).toMatch(/size mismatch/);
    expect(byFile['encrypted.json']).toBe('encrypted entry');
  });

  it('stops at the total-size and entry-count limits and on files that are not archives', async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({ name: `A-${i}.json`, data: JSON.stringify(osv(`A-${i}`, 'npm', 'a')) }));
    const path = writeZip(buildZip(entries));
    await expect(loadOsvZip(path, { zip: { maxTotalBytes: 400 } })).rejects.toThrow(/archive too large/);
    await expect(loadOsvZip(path, { zip: { maxEntries: 4 } })).rejects.toThrow(/too many entries/);
    const notZip = join(work, 'not.zip');
    writeFileSync(notZip, 'PK but not really a zip archive at all');
    await expect(loadOsvZip(notZip)).rejects.toBeInstanceOf(ZipError);
    const truncated = writeZip(buildZip(entries).subarray(0, 200));
    await expect(loadOsvZip(truncated)).rejects.toBeInstanceOf(ZipError);
  });

  it('readZipEntries skips directories and entries the caller does not accept, unread', async () => {
    const path = writeZip(buildZip([{ name: 'dir/', data: '', method: 0 }, { name: 'dir/a.json', data: '{}' }, { name: 'dir/b.bin', data: 'x', crc: 1 }]));
    const got: string[] = [];
    for await (const e of readZipEntries(path, {}, (name) => name.endsWith('.json'))) got.push(e.name);
    expect(got).toEqual(['dir/a.json']);
  });
});
