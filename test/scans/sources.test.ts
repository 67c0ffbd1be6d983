// Scan sources: git URL and ref validation, cloning (against a repository made here, as a local
// source), and safe extraction of zip / tar / tar.gz archives built here byte by byte.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveError, detectArchiveKind, extractArchive, type ArchiveKind } from '../../api/scans/sources/archive.ts';
import { cloneRepository, GitCloneError } from '../../platform/git/clone.ts';
import { checkRef, parseGitSource, redactText, redactUrl, withoutCredentials, type GitSource } from '../../platform/git/url.ts';
import { withWorkspace } from '../../platform/git/workspace.ts';
import { tenantPolicy } from '../../platform/net/outbound.ts';

// ---------------------------------------------------------------------------------------------
// URLs and refs

describe('parseGitSource: URLs', () => {
  const accepted: [string, string, boolean?][] = [
    ['https://github.com/Owner/Repo.git', 'https://github.com/Owner/Repo'],
    ['https://GitHub.COM/owner/repo/', 'https://github.com/owner/repo'],
    ['https://user:tok3n@github.com/o/r.git', 'https://github.com/o/r'],
    ['https://x-access-token:ghp_abc%40def@GITHUB.com:443/o/r', 'https://github.com/o/r'],
    ['http://git.internal:8080/scm/proj/repo.git', 'http://git.internal:8080/scm/proj/repo'],
    ['http://git.internal:80/repo', 'http://git.internal/repo'],
    ['ssh://git@github.com/o/r.git', 'ssh://github.com/o/r'],
    ['ssh://git:pw@host.example:2222/o/r.git', 'ssh://host.example:2222/o/r'],
    ['git@github.com:o/r.git', 'ssh://github.com/o/r'],
    ['github.com:o/r', 'ssh://github.com/o/r'],
    ['git@host.example:/srv/git/r.git', 'ssh://host.example/srv/git/r'],
    ['git://git.kernel.org/pub/scm/git/git.git', 'git://git.kernel.org/pub/scm/git/git'],
    ['https://[::1]:8443/r.git', 'https://[::1]:8443/r'],
    ['https://host.example//o//r.git/', 'https://host.example/o/r'],
    ['https://host.example/~user/r%20x', 'https://host.example/~user/r%20x'],
    ['https://host.example/.git', 'https://host.example/.git'],
    ['file:///srv/git/repo.git', 'file:///srv/git/repo', true],
    ['file://localhost/srv/git/repo', 'file:///srv/git/repo', true],
    ['/srv/git/repo/', 'file:///srv/git/repo', true],
  ];
  it.each(accepted)('accepts %s', (url, target, allowLocal = false) => {
    const r = parseGitSource(url, undefined, { allowLocal });
    expect(r).toEqual({ ok: true, source: { kind: 'git', url, ref: null, target } });
  });

  const refused: [string, RegExp, boolean?][] = [
    ['ext::sh -c touch% /tmp/pwned', /transport helpers/],
    ['ext::sh%20-c%20touch', /transport helpers/],
    ['fd::17', /transport helpers/],
    ['foo+bar::https://github.com/o/r', /transport helpers/],
    ['--upload-pack=touch /tmp/pwned', /must not start with '-'/],
    ['-oProxyCommand=x', /must not start with '-'/],
    ['ssh://-oProxyCommand=touch%20x/r', /invalid host name/],
    ['ssh://-user@host.example/r', /user name must not start with '-'/],
    ['git@-oProxyCommand=x:r', /invalid host name/],
    ['-x@host:r', /must not start with '-'/],
    ['host.example:-u/r', /must not start with '-'/],
    ['file:///etc', /file:\/\/ URLs are not allowed/],
    ['/etc/passwd', /local paths are not allowed/],
    ['file://remote.example/srv/r', /must not name a host/, true],
    ['relative/path', /is not a git URL/],
    ['./repo', /is not a git URL/],
    ['repo', /is not a git URL/],
    ['https://github.com/o/r\n', /without spaces or control characters/],
    ['https://github.com/o r', /without spaces/],
    [' https://github.com/o/r', /without spaces/],
    ['https://github.com/o/r\u0000', /control characters/],
    ['https://héllo.example/r', /ASCII/],
    ['https://github.com/o/r?x=1', /query or fragment/],
    ['https://github.com/o/r#main', /query or fragment/],
    ['https://evil.example\\@github.com/o/r', /backslashes/],
    ['https://a@evil.example@github.com/o/r', /percent-encoded/],
    ['https://gith%75b.com/o/r', /invalid host name/],
    ['https://github.com:/o/r', /invalid port/],
    ['https://host.example:0/r', /invalid port/],
    ['https://host.example:99999/r', /invalid port/],
    ['https://[::zz]/r', /IPv6/],
    ['ftp://host.example/r', /unsupported scheme/],
    ['HTTPS://host.example/r', /unsupported scheme/],
    ['https://github.com', /repository path/],
    ['https://github.com/', /repository path/],
    ['https:///o/r', /must name a host/],
    ['https://github.com/o/../r', /'\.\.' segments/],
    ['https://github.com/o/./r', /segments/],
    ['https://github.com/o/r<x>', /invalid characters/],
    ['git://user@host.example/r', /do not take credentials/],
    ['', /empty/],
    [`https://host.example/${'a'.repeat(2100)}`, /at most 2048/],
  ];
  it.each(refused)('refuses %j', (url, reason, allowLocal = false) => {
    const r = parseGitSource(url, undefined, { allowLocal });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.field).toBe('url');
      expect(r.reason).toMatch(reason);
    }
  });
});

describe('parseGitSource: refs', () => {
  const sha1 = 'A'.repeat(40);
  const sha256 = 'b'.repeat(64);
  it.each([['main'], ['feature/x'], ['v1.0.0'], ['release-2024.01'], ['HEAD'], ['a'.repeat(255)], ['deadbeef'], ['x@y']])('accepts %s', (ref) => {
    const r = parseGitSource('https://github.com/o/r', ref, { allowLocal: false });
    expect(r.ok && r.source.ref).toBe(ref);
  });
  it('accepts commit ids, lower-cased', () => {
    const a = parseGitSource('https://github.com/o/r', sha1, { allowLocal: false });
    expect(a.ok && a.source.ref).toBe('a'.repeat(40));
    const b = parseGitSource('https://github.com/o/r', sha256, { allowLocal: false });
    expect(b.ok && b.source.ref).toBe(sha256);
  });
  it.each([
    [''], ['-x'], ['--upload-pack=x'], ['a..b'], ['a b'], ['a\tb'], ['a\nb'], ['a~1'], ['a^'], ['a:b'], ['a?'], ['a*'], ['a[0]'], ['a\\b'],
    ['x.lock'], ['a/b.lock/c'], ['a/'], ['/a'], ['a//b'], ['a.'], ['.a'], ['a/.b'], ['@'], ['a@{1}'], ['é'], ['x'.repeat(256)],
  ])('refuses %j', (ref) => {
    const r = parseGitSource('https://github.com/o/r', ref, { allowLocal: false });
    expect(r).toMatchObject({ ok: false, field: 'ref' });
    expect(checkRef(ref)).not.toBeNull();
  });
  it('reports the URL before the ref', () => {
    expect(parseGitSource('ext::x', '..', { allowLocal: false })).toMatchObject({ ok: false, field: 'url' });
  });
});

describe('redaction', () => {
  it.each([
    ['https://user:tok@host.example/r', 'https://***@host.example/r'],
    ['https://ghp_token@host.example/r', 'https://***@host.example/r'],
    ['http://a:b@c@host.example/r', 'http://***@host.example/r'],
    ['ssh://git:pw@host.example/r', 'ssh://git:***@host.example/r'],
    ['ssh://git@host.example/r', 'ssh://git@host.example/r'],
    ['git@host.example:o/r', 'git@host.example:o/r'],
    ['https://host.example/r?private_token=abc', 'https://host.example/r?***'],
    ['not a url', 'not a url'],
  ])('redactUrl(%s)', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
  it('withoutCredentials keeps the ssh user only', () => {
    expect(withoutCredentials('https://u:p@host.example/r')).toBe('https://host.example/r');
    expect(withoutCredentials('ssh://git:pw@host.example/r')).toBe('ssh://git@host.example/r');
    expect(withoutCredentials('git@host.example:o/r')).toBe('git@host.example:o/r');
  });
  it('redactText removes the secrets wherever they appear', () => {
    const url = 'https://bob:s3cr%21t@host.example/r.git';
    const text = `fatal: unable to access '${url}/': x\nfatal: auth s3cr!t and s3cr%21t for bob; also https://eve:other@x.example/`;
    const out = redactText(text, url);
    expect(out).not.toMatch(/s3cr|bob|other/);
    expect(out).toContain('https://***@host.example/r.git');
    expect(out).toContain('https://***@x.example/');
  });
});

// ---------------------------------------------------------------------------------------------
// Cloning

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();
}

function local(path: string, ref?: string): GitSource {
  const r = parseGitSource(path, ref, { allowLocal: true });
  if (!r.ok) throw new Error(r.reason);
  return r.source;
}

describe('cloneRepository', () => {
  // The HTTP stand-ins below listen on loopback, which clones reach only with private targets allowed
  // (AEGIS_ALLOW_PRIVATE_TARGETS; test/security/ssrf-git-clones.test.ts covers the refusals).
  const loopbackAllowed = tenantPolicy({ allowPrivateTargets: true });
  let base: string;
  let repo: string;
  let c1: string;
  let c2: string;
  let c3: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'aegis-sources-test-'));
    repo = join(base, 'origin');
    mkdirSync(repo);
    git(repo, 'init', '--quiet', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '--quiet', '-m', 'first');
    c1 = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'tag', '-a', 'v1.0', '-m', 'release');
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    symlinkSync('/etc/passwd', join(repo, 'link'));
    git(repo, 'add', '.');
    git(repo, 'commit', '--quiet', '-m', 'second');
    c2 = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    writeFileSync(join(repo, 'feature.txt'), 'feature\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '--quiet', '-m', 'third');
    c3 = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '--quiet', 'main');
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const clone = (source: GitSource, depth?: number | null) =>
    withWorkspace(async (dir) => {
      const target = join(dir, 'src');
      const { commit } = await cloneRepository(source, target, { timeoutMs: 30_000, depth, allowLocal: true });
      return {
        commit,
        count: Number(git(target, 'rev-list', '--count', 'HEAD')),
        all: Number(git(target, 'rev-list', '--count', '--all')),
        files: readdirSync(target).filter((f) => f !== '.git').sort(),
        a: readFileSync(join(target, 'a.txt'), 'utf8'),
        link: lstatSync(join(target, 'link'), { throwIfNoEntry: false }),
        linkText: existsSync(join(target, 'link')) ? readFileSync(join(target, 'link'), 'utf8') : null,
        remote: spawnSync('git', ['-C', target, 'config', 'remote.origin.url'], { env: GIT_ENV, encoding: 'utf8' }).stdout.trim(),
        hooks: existsSync(join(target, '.git', 'hooks')) ? readdirSync(join(target, '.git', 'hooks')) : [],
      };
    });

  it('clones the default branch, shallow by default, symlinks as plain files', async () => {
    const r = await clone(local(repo));
    expect(r.commit).toBe(c2);
    expect(r.count).toBe(1);
    expect(r.files).toEqual(['a.txt', 'link']);
    expect(r.a).toBe('two\n');
    expect(r.link?.isSymbolicLink()).toBe(false);
    expect(r.linkText).toBe('/etc/passwd');
    expect(r.remote).toBe(repo);
    expect(r.hooks).toEqual([]);
  });

  it('clones a branch with its full history', async () => {
    const r = await clone(local(repo, 'feature'), null);
    expect(r.commit).toBe(c3);
    expect(r.count).toBe(3);
    expect(r.all).toBe(3);
    expect(r.files).toEqual(['a.txt', 'feature.txt', 'link']);
  });

  it('clones a tag', async () => {
    const r = await clone(local(`file://${repo}`, 'v1.0'));
    expect(r.commit).toBe(c1);
    expect(r.a).toBe('one\n');
  });

  it('clones a commit id, shallow or with its history only', async () => {
    const shallow = await clone(local(repo, c1));
    expect(shallow.commit).toBe(c1);
    expect(shallow.count).toBe(1);
    expect(shallow.a).toBe('one\n');
    const full = await clone(local(repo, c2.toUpperCase()), null);
    expect(full.commit).toBe(c2);
    expect(full.count).toBe(2);
    // Nothing but the commit's ancestry: the feature branch's commit is not there.
    expect(full.all).toBe(2);
    expect(full.remote).toBe('');
  });

  it('refuses local sources unless allowed', async () => {
    await withWorkspace(async (dir) => {
      await expect(cloneRepository(local(repo), join(dir, 'src'), { timeoutMs: 10_000 })).rejects.toThrow(/invalid git source \(url\): local paths are not allowed/);
    });
  });

  it('explains a missing branch, commit or repository', async () => {
    await withWorkspace(async (dir) => {
      await expect(cloneRepository(local(repo, 'nosuch'), join(dir, 'a'), { timeoutMs: 10_000, allowLocal: true })).rejects.toThrow(/git clone of .* failed: .*nosuch not found/);
      await expect(cloneRepository(local(repo, 'f'.repeat(40)), join(dir, 'b'), { timeoutMs: 10_000, allowLocal: true })).rejects.toThrow(/git fetch .* failed: .*fetching a commit by id/);
      await expect(cloneRepository(local(join(base, 'missing')), join(dir, 'c'), { timeoutMs: 10_000, allowLocal: true })).rejects.toThrow(
        /git clone of .*missing failed: fatal: .*(does not exist|does not appear to be a git repository)/,
      );
    });
  });

  describe('over HTTP', () => {
    let http: Server;
    let port: number;
    let sawPassword = false;
    beforeAll(async () => {
      http = createHttpServer((req, res) => {
        if (req.headers.authorization === `Basic ${Buffer.from('bob:s3cret-pw').toString('base64')}`) sawPassword = true;
        res.writeHead(401, { 'www-authenticate': 'Basic realm="x"' }).end('denied');
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      port = (http.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

    it('fails clearly without showing the password', async () => {
      const source = parseGitSource(`http://bob:s3cret-pw@127.0.0.1:${port}/o/r.git`, undefined, { allowLocal: false });
      if (!source.ok) throw new Error(source.reason);
      const err = await withWorkspace((dir) => cloneRepository(source.source, join(dir, 'src'), { timeoutMs: 10_000, outbound: loopbackAllowed })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GitCloneError);
      const message = (err as Error).message;
      expect(message).toMatch(/^git clone of http:\/\/\*\*\*@127\.0\.0\.1:\d+\/o\/r\.git failed: fatal: Authentication failed/);
      expect(message).not.toContain('s3cret');
      expect(message).not.toContain('bob');
      expect(sawPassword).toBe(true);
    });
  });

  describe('a server that never answers', () => {
    let server: ReturnType<typeof createNetServer>;
    let port: number;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      server = createNetServer((socket) => {
        sockets.push(socket);
        socket.resume(); // flowing, so that the peer's close is noticed
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });

    const source = (): GitSource => {
      const r = parseGitSource(`http://127.0.0.1:${port}/o/r.git`, undefined, { allowLocal: false });
      if (!r.ok) throw new Error(r.reason);
      return r.source;
    };
    /** Resolves when git's connection (made by git-remote-http, a grandchild) closes. */
    const nextConnectionClosed = async (from: number): Promise<void> => {
      for (let i = 0; i < 100 && sockets.length <= from; i++) await new Promise((r) => setTimeout(r, 20));
      const socket = sockets[from];
      if (!socket) throw new Error('git never connected');
      if (socket.closed) return;
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    };

    it('abort kills git and its helpers promptly', async () => {
      const from = sockets.length;
      const controller = new AbortController();
      const started = Date.now();
      const result = withWorkspace((dir) => cloneRepository(source(), join(dir, 'src'), { timeoutMs: 60_000, signal: controller.signal, outbound: loopbackAllowed }));
      setTimeout(() => controller.abort(new Error('scan canceled')), 400);
      await expect(result).rejects.toThrow('scan canceled');
      expect(Date.now() - started).toBeLessThan(3_000);
      await nextConnectionClosed(from);
    });

    it('times out', async () => {
      const from = sockets.length;
      const started = Date.now();
      await expect(withWorkspace((dir) => cloneRepository(source(), join(dir, 'src'), { timeoutMs: 500, outbound: loopbackAllowed }))).rejects.toThrow(/git clone of http:\/\/127\.0\.0\.1:\d+\/o\/r\.git timed out/);
      expect(Date.now() - started).toBeLessThan(3_000);
      await nextConnectionClosed(from);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Archives: tiny writers for the formats, so that malformed entries can be made at will.

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

interface TarEntry {
  name: string;
  data?: Buffer | string;
  type?: string;
  linkname?: string;
  prefix?: string;
  /** Header size when it should differ from the data's. */
  size?: number;
  gnu?: boolean;
}

function tarHeader(e: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(e.name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(0, 12), 136, 'latin1');
  h.write(e.type ?? '0', 156, 'latin1');
  if (e.linkname) h.write(e.linkname, 157, 100, 'utf8');
  h.write(e.gnu ? 'ustar  \0' : 'ustar\x0000', 257, 'latin1');
  if (e.prefix) h.write(e.prefix, 345, 155, 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

function tarEntry(e: TarEntry): Buffer {
  const data = Buffer.from(e.data ?? '');
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([tarHeader(e, e.size ?? data.length), data, pad]);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

function tar(...entries: TarEntry[]): Buffer {
  return Buffer.concat([...entries.map(tarEntry), Buffer.alloc(1024)]);
}

interface ZipEntry {
  name: string;
  data?: Buffer | string;
  deflate?: boolean;
  /** Unix mode, stored in the external attributes (0o120777 for a symlink). */
  mode?: number;
  /** Declared uncompressed size when it should lie. */
  size?: number;
}

function zip(...entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    const stored = e.deflate ? deflateRawSync(data) : data;
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(data);
    const size = e.size ?? data.length;
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(0x800, 6);
    lh.writeUInt16LE(e.deflate ? 8 : 0, 8);
    lh.writeUInt32LE(crc, 14);
    lh.writeUInt32LE(stored.length, 18);
    lh.writeUInt32LE(size, 22);
    lh.writeUInt16LE(name.length, 26);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE((3 << 8) | 20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(0x800, 8);
    ch.writeUInt16LE(e.deflate ? 8 : 0, 10);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(stored.length, 20);
    ch.writeUInt32LE(size, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    ch.writeUInt32LE(offset, 42);
    locals.push(lh, name, stored);
    centrals.push(ch, name);
    offset += 30 + name.length + stored.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** Every file under dir (relative, sorted) with its content; fails on anything but files and directories. */
function tree(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isDirectory()) Object.assign(out, tree(path, `${prefix}${name}/`));
    else if (st.isFile()) out[`${prefix}${name}`] = readFileSync(path, 'utf8');
    else throw new Error(`unexpected file type at ${path}`);
  }
  return out;
}

function extract(bytes: Buffer, kind: ArchiveKind, limits = {}) {
  return withWorkspace(async (dir) => {
    const root = join(dir, 'src');
    const result = await extractArchive(bytes, kind, root, limits);
    // Nothing may have been written outside the extraction directory.
    expect((await readdir(dir)).sort()).toEqual(['src']);
    return { ...result, tree: tree(root) };
  });
}

const hasTool = (tool: string): boolean => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0 || spawnSync(tool, ['-v'], { stdio: 'ignore' }).status === 0;

describe('detectArchiveKind', () => {
  it('reads the magic bytes', () => {
    expect(detectArchiveKind(zip({ name: 'a', data: 'x' }))).toBe('zip');
    expect(detectArchiveKind(zip())).toBe('zip');
    expect(detectArchiveKind(tar({ name: 'a', data: 'x' }))).toBe('tar');
    expect(detectArchiveKind(gzipSync(tar({ name: 'a', data: 'x' })))).toBe('tar.gz');
    expect(detectArchiveKind(Buffer.from('hello'))).toBeNull();
    expect(detectArchiveKind(Buffer.alloc(0))).toBeNull();
  });
  it('extraction refuses content of another kind', async () => {
    await expect(extract(zip({ name: 'a', data: 'x' }), 'tar.gz')).rejects.toThrow(ArchiveError);
    await expect(extract(Buffer.from('not an archive at all'), 'zip')).rejects.toThrow(/not a zip archive/);
  });
});

describe('extractArchive: tar', () => {
  it('extracts files and directories, stripping one common top-level directory', async () => {
    const bytes = tar(
      { name: 'owner-repo-1a2b3c/', type: '5' },
      { name: 'owner-repo-1a2b3c/README.md', data: '# hi\n' },
      { name: 'owner-repo-1a2b3c/src/app.js', data: 'console.log(1)\n' },
      { name: 'owner-repo-1a2b3c/owner-repo-1a2b3c/inner.txt', data: 'same name as the top\n' },
      { name: 'owner-repo-1a2b3c/empty/', type: '5' },
    );
    for (const [kind, data] of [['tar', bytes], ['tar.gz', gzipSync(bytes)]] as const) {
      const r = await extract(data, kind);
      expect(r.stripped).toBe('owner-repo-1a2b3c');
      expect(r.tree).toEqual({ 'README.md': '# hi\n', 'src/app.js': 'console.log(1)\n', 'owner-repo-1a2b3c/inner.txt': 'same name as the top\n' });
      expect(r.files).toBe(3);
      expect(r.bytes).toBe(5 + 15 + 21);
      expect(r.skipped).toEqual([]);
    }
  });

  it('does not strip when there are several top-level entries or a top-level file', async () => {
    const a = await extract(tar({ name: 'a/x', data: '1' }, { name: 'b/y', data: '2' }), 'tar');
    expect(a.stripped).toBeNull();
    expect(Object.keys(a.tree)).toEqual(['a/x', 'b/y']);
    const b = await extract(tar({ name: './', type: '5' }, { name: './top/x', data: '1' }, { name: './README', data: '2' }), 'tar');
    expect(b.stripped).toBeNull();
    expect(Object.keys(b.tree)).toEqual(['README', 'top/x']);
    const c = await extract(tar({ name: 'only-file', data: '1' }), 'tar');
    expect(c.tree).toEqual({ 'only-file': '1' });
  });

  it('reads GNU long names, pax paths and sizes, and ustar prefixes', async () => {
    const long = `top/${'d'.repeat(120)}/${'f'.repeat(120)}.txt`;
    const paxPath = `top/${'p'.repeat(150)}/ünïcode.txt`;
    const bytes = tar(
      { name: '././@LongLink', type: 'L', data: `${long}\0`, gnu: true },
      { name: long.slice(0, 99), data: 'long\n', gnu: true },
      { name: 'PaxHeaders/x', type: 'g', data: paxRecord('comment', 'c'.repeat(40)) },
      { name: 'PaxHeaders/x', type: 'x', data: paxRecord('path', paxPath) + paxRecord('mtime', '1.5') },
      { name: 'truncated-name', data: 'pax\n' },
      { name: 'PaxHeaders/y', type: 'x', data: paxRecord('size', '3') },
      { name: 'top/sized', data: 'abc', size: 0 },
      { name: 'file.txt', prefix: 'top/prefixed', data: 'prefix\n' },
    );
    const r = await extract(gzipSync(bytes), 'tar.gz');
    expect(r.skipped).toEqual([]);
    expect(r.stripped).toBe('top');
    expect(r.tree).toEqual({
      [long.slice(4)]: 'long\n',
      [paxPath.slice(4)]: 'pax\n',
      sized: 'abc',
      'prefixed/file.txt': 'prefix\n',
    });
  });

  it('skips unsafe names, links, devices and .git, writing nothing outside', async () => {
    const bytes = tar(
      { name: 'top/ok.txt', data: 'ok' },
      { name: '../escape.txt', data: 'x' },
      { name: 'top/../../escape2.txt', data: 'x' },
      { name: '/etc/passwd-copy', data: 'x' },
      { name: 'C:/windows.txt', data: 'x' },
      { name: 'top\\..\\..\\evil.txt', data: 'x' },
      { name: 'top/nul\0hidden', data: 'x' },
      { name: 'top/new\nline', data: 'x' },
      { name: 'top/link', type: '2', linkname: '/etc/passwd' },
      { name: 'top/hard', type: '1', linkname: 'top/ok.txt' },
      { name: 'top/dev', type: '3' },
      { name: 'top/fifo', type: '6' },
      { name: 'top/.git/', type: '5' },
      { name: 'top/.git/config', data: '[core]\n\tfsmonitor = touch /tmp/pwned\n' },
      { name: 'top/.git/HEAD', data: 'ref: refs/heads/main\n' },
      { name: 'top/sub/.git', data: 'gitdir: /etc\n' },
      { name: 'top/vol', type: 'V' },
      { name: 'top/ok.txt', data: 'second copy' },
    );
    const r = await extract(bytes, 'tar');
    // The header's NUL ends the name (a C string): `top/nul` is what the archive names.
    expect(r.tree).toEqual({ 'ok.txt': 'ok', nul: 'x' });
    expect(r.files).toBe(2);
    expect(r.skipped).toEqual([
      { path: '../escape.txt', reason: "'..' in path" },
      { path: 'top/../../escape2.txt', reason: "'..' in path" },
      { path: '/etc/passwd-copy', reason: 'absolute path' },
      { path: 'C:/windows.txt', reason: 'absolute path' },
      { path: 'top\\..\\..\\evil.txt', reason: 'backslash in name' },
      { path: 'top/new?line', reason: 'control character in name' },
      { path: 'top/link', reason: 'symbolic link not extracted' },
      { path: 'top/hard', reason: 'hard link not extracted' },
      { path: 'top/dev', reason: 'character device not extracted' },
      { path: 'top/fifo', reason: 'FIFO not extracted' },
      { path: 'top/.git', reason: '.git metadata is not extracted' },
      { path: 'top/sub/.git', reason: '.git metadata is not extracted' },
      { path: 'top/vol', reason: "unsupported tar entry type 'V'" },
      { path: 'top/ok.txt', reason: 'duplicate entry or path conflict' },
    ]);
  });

  it('skips a NUL in a pax path', async () => {
    const r = await extract(tar({ name: 'x', type: 'x', data: paxRecord('path', 'a\0/../../b') }, { name: 'ignored', data: 'x' }, { name: 'ok', data: 'y' }), 'tar');
    expect(r.skipped).toEqual([{ path: 'a?/../../b', reason: 'NUL byte in name' }]);
    expect(r.tree).toEqual({ ok: 'y' });
  });

  it('handles a file where a directory is needed, and the reverse', async () => {
    const r = await extract(tar({ name: 'a', data: 'file' }, { name: 'a/b', data: 'x' }, { name: 'd/', type: '5' }, { name: 'd', data: 'x' }), 'tar');
    expect(r.tree).toEqual({ a: 'file' });
    expect(r.skipped.map((s) => s.path)).toEqual(['a/b', 'd']);
  });

  it('rejects corrupt archives', async () => {
    const good = tar({ name: 'a', data: 'hello' });
    const badSum = Buffer.from(good);
    badSum[0] = 0x62;
    await expect(extract(badSum, 'tar')).rejects.toThrow(/checksum/);
    await expect(extract(good.subarray(0, 515), 'tar')).rejects.toThrow(/truncated/);
    await expect(extract(Buffer.from([0x1f, 0x8b, 1, 2, 3]), 'tar.gz')).rejects.toThrow(/invalid gzip/);
    await expect(extract(tar({ name: 'l', type: '2', size: 10, data: 'x'.repeat(10) }), 'tar')).rejects.toThrow(/symbolic link with data/);
    await expect(extract(tar({ name: 'x', type: 'x', data: '99 path=a\n' }, { name: 'a', data: '' }), 'tar')).rejects.toThrow(/pax/);
    const metas = Array.from({ length: 9 }, () => ({ name: 'x', type: 'x', data: paxRecord('mtime', '1') }));
    await expect(extract(tar(...metas, { name: 'a', data: '' }), 'tar')).rejects.toThrow(/extension headers/);
  });

  it('reports at most 1000 skipped entries', async () => {
    const links = tar(...Array.from({ length: 1005 }, (_, i) => ({ name: `l${i}`, type: '2', linkname: '/etc/passwd' })));
    const r = await extract(links, 'tar');
    expect(r.skipped).toHaveLength(1001);
    expect(r.skipped[1000]).toEqual({ path: '…', reason: '5 more entries not extracted' });
  });

  it('tolerates a missing end-of-archive marker', async () => {
    const r = await extract(tarEntry({ name: 'a', data: 'x' }), 'tar');
    expect(r.tree).toEqual({ a: 'x' });
  });

  it('enforces the entry count and size limits', async () => {
    const many = tar(...Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, data: 'x' })));
    await expect(extract(many, 'tar', { maxEntries: 10 })).rejects.toThrow(/too many entries/);
    expect((await extract(many, 'tar', { maxEntries: 11 })).files).toBe(11);

    const big = tar({ name: 'big.bin', data: Buffer.alloc(300_000) }, { name: 'small', data: 'ok' });
    const r = await extract(gzipSync(big), 'tar.gz', { maxEntryBytes: 100_000 });
    expect(r.tree).toEqual({ small: 'ok' });
    expect(r.skipped).toEqual([{ path: 'big.bin', reason: 'entry too large (300000 bytes, limit 100000)' }]);
    // Skipped data still had to be decompressed: it counts toward the total.
    await expect(extract(gzipSync(big), 'tar.gz', { maxEntryBytes: 100_000, maxTotalBytes: 200_000 })).rejects.toThrow(/archive too large/);
  });

  it('stops a gzip bomb: 3 MiB of zeros against a 1 MiB budget', async () => {
    const bomb = gzipSync(tar({ name: 'a', data: Buffer.alloc(1024 * 1024) }, { name: 'b', data: Buffer.alloc(1024 * 1024) }, { name: 'c', data: Buffer.alloc(1024 * 1024) }));
    expect(bomb.length).toBeLessThan(20_000);
    await expect(extract(bomb, 'tar.gz', { maxTotalBytes: 1024 * 1024 + 10 })).rejects.toThrow(/archive too large/);
  });

  it('stops before decompressing an entry that declares more than the default budget', async () => {
    // A header announcing 4 GiB followed by a few blocks: nothing of the 4 GiB is inflated.
    const header = tarHeader({ name: 'huge.bin' }, 0);
    header.write(octal(4 * 1024 ** 3, 12), 124, 'latin1');
    header.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    const started = Date.now();
    await expect(extract(gzipSync(Buffer.concat([header, Buffer.alloc(64 * 1024)])), 'tar.gz')).rejects.toThrow(/more than 536870912 bytes/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('stops reading at the end-of-archive marker (trailing zeros are not inflated)', async () => {
    const trailer = gzipSync(Buffer.concat([tar({ name: 'a', data: 'x' }), Buffer.alloc(64 * 1024 * 1024)]));
    const started = Date.now();
    const r = await extract(trailer, 'tar.gz', { maxTotalBytes: 1024 });
    expect(r.tree).toEqual({ a: 'x' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it.skipIf(!hasTool('tar'))('extracts archives written by the system tar (gnu, pax, ustar)', async () => {
    const base = await mkdtemp(join(tmpdir(), 'aegis-tar-test-'));
    try {
      const src = join(base, 'project-main');
      const deep = join(src, 'a'.repeat(60), 'b'.repeat(60));
      mkdirSync(deep, { recursive: true });
      writeFileSync(join(deep, `${'c'.repeat(60)}.txt`), 'deep\n');
      writeFileSync(join(src, 'index.js'), 'x\n');
      symlinkSync('/etc/passwd', join(src, 'passwd'));
      for (const format of ['gnu', 'pax', 'ustar']) {
        const file = join(base, `${format}.tar.gz`);
        execFileSync('tar', [`--format=${format}`, '-czf', file, '-C', base, 'project-main']);
        const r = await extract(readFileSync(file), 'tar.gz');
        expect(r.stripped).toBe('project-main');
        expect(r.tree).toEqual({ 'index.js': 'x\n', [`${'a'.repeat(60)}/${'b'.repeat(60)}/${'c'.repeat(60)}.txt`]: 'deep\n' });
        expect(r.skipped).toEqual([{ path: 'project-main/passwd', reason: 'symbolic link not extracted' }]);
      }
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});

describe('extractArchive: zip', () => {
  it('extracts stored and deflated entries, stripping the top-level directory', async () => {
    const r = await extract(
      zip({ name: 'repo-main/', data: '' }, { name: 'repo-main/a.txt', data: 'stored' }, { name: 'repo-main/src/b.js', data: 'deflated '.repeat(100), deflate: true }),
      'zip',
    );
    expect(r.stripped).toBe('repo-main');
    expect(r.tree).toEqual({ 'a.txt': 'stored', 'src/b.js': 'deflated '.repeat(100) });
    expect(r.files).toBe(2);
    expect(r.skipped).toEqual([]);
  });

  it('skips zip-slip, absolute, backslash and .git entries', async () => {
    const r = await extract(
      zip(
        { name: 'ok.txt', data: 'ok' },
        { name: '../../escape.txt', data: 'x' },
        { name: '/abs.txt', data: 'x' },
        { name: 'a\\..\\..\\evil.txt', data: 'x' },
        { name: 'ctl\u0001.txt', data: 'x' },
        { name: '.git/config', data: 'x' },
        { name: 'ok.txt', data: 'again' },
      ),
      'zip',
    );
    expect(r.tree).toEqual({ 'ok.txt': 'ok' });
    expect(r.skipped).toEqual([
      { path: '../../escape.txt', reason: 'unsafe entry name' },
      { path: '/abs.txt', reason: 'unsafe entry name' },
      { path: 'a\\..\\..\\evil.txt', reason: 'unsafe entry name' },
      { path: 'ctl?.txt', reason: 'control character in name' },
      { path: '.git', reason: '.git metadata is not extracted' },
      { path: 'ok.txt', reason: 'duplicate entry or path conflict' },
    ]);
  });

  it('never creates a symlink from a zip symlink entry', async () => {
    // The zip reader does not expose entry modes, so the entry becomes a plain file holding the target.
    const r = await extract(zip({ name: 'link', data: '/etc/passwd', mode: 0o120777 }, { name: 'b', data: 'x' }), 'zip');
    expect(r.tree).toEqual({ link: '/etc/passwd', b: 'x' });
  });

  it('enforces limits, including lying sizes', async () => {
    const zeros = Buffer.alloc(800 * 1024);
    const bomb = zip({ name: 'a', data: zeros, deflate: true }, { name: 'b', data: zeros, deflate: true });
    expect(bomb.length).toBeLessThan(5_000);
    await expect(extract(bomb, 'zip', { maxTotalBytes: 1024 * 1024 })).rejects.toThrow(/archive too large/);

    const one = await extract(bomb, 'zip', { maxEntryBytes: 1000 });
    expect(one.tree).toEqual({});
    expect(one.skipped.map((s) => s.path)).toEqual(['a', 'b']);
    expect(one.skipped[0]!.reason).toMatch(/too large/);

    // Declares 10 bytes, inflates to 800 KiB: inflation stops at the declared size.
    const liar = await extract(zip({ name: 'liar', data: zeros, deflate: true, size: 10 }, { name: 'ok', data: 'y' }), 'zip');
    expect(liar.tree).toEqual({ ok: 'y' });
    expect(liar.skipped).toEqual([{ path: 'liar', reason: expect.stringMatching(/cannot inflate|size mismatch/) }]);

    const entries = zip(...Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, data: 'x' })));
    await expect(extract(entries, 'zip', { maxEntries: 10 })).rejects.toThrow(/too many entries/);

    // Declared sizes over the default 512 MiB total: refused without inflating anything.
    const huge = zip(...Array.from({ length: 10 }, (_, i) => ({ name: `h${i}`, data: 'x', deflate: true, size: 60 * 1024 * 1024 })));
    await expect(extract(huge, 'zip')).rejects.toThrow(/archive too large/);
  });

  it.skipIf(!hasTool('zip'))('extracts an archive written by the system zip', async () => {
    const base = await mkdtemp(join(tmpdir(), 'aegis-zip-test-'));
    try {
      const src = join(base, 'proj');
      mkdirSync(join(src, 'lib'), { recursive: true });
      writeFileSync(join(src, 'lib', 'x.py'), 'print(1)\n'.repeat(50));
      writeFileSync(join(src, 'README'), 'readme\n');
      execFileSync('zip', ['-qr', join(base, 'p.zip'), 'proj'], { cwd: base });
      const r = await extract(readFileSync(join(base, 'p.zip')), 'zip');
      expect(r.stripped).toBe('proj');
      expect(r.tree).toEqual({ README: 'readme\n', 'lib/x.py': 'print(1)\n'.repeat(50) });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});

describe('withWorkspace', () => {
  it('gives a private empty directory and always removes it', async () => {
    let seen = '';
    await withWorkspace(async (dir) => {
      seen = dir;
      expect(readdirSync(dir)).toEqual([]);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      mkdirSync(join(dir, 'a', 'b'), { recursive: true });
      writeFileSync(join(dir, 'a', 'b', 'c'), 'x');
    });
    expect(existsSync(seen)).toBe(false);
    await expect(
      withWorkspace(async (dir) => {
        seen = dir;
        writeFileSync(join(dir, 'f'), 'x');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(existsSync(seen)).toBe(false);
  });
});
