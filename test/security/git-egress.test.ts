// How a clone's git reaches the network (platform/git/egress.ts, platform/net/egress-proxy.ts), with real git,
// git http-backend, git daemon, ssh and listeners on loopback: every transport goes through the
// clone's egress proxy, so the outbound policy judges what git, curl and ssh connect to.
//   - allowed (private targets allowed, as AEGIS_ALLOW_PRIVATE_TARGETS=true): http, git:// and ssh
//     reach their servers — through the proxy (the ssh server sees ssh's banner come through);
//   - refused (the default rule): each transport fails with the refusal before connecting;
//   - a redirect (first hop allowed, later hop internal): the real policy with a refusal predicate
//     that holds 127.0.0.2 internal and 127.0.0.1 public;
//   - the operator's environment is not git's: HTTP(S)_PROXY / NO_PROXY and GIT_SSH_COMMAND are not used;
//   - submodules are never fetched, not even from an allowed address.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneRepository, GitCloneError, RefusedCloneError } from '../../platform/git/clone.ts';
import { parseGitSource, type GitSource } from '../../platform/git/url.ts';
import { withWorkspace } from '../../platform/git/workspace.ts';
import { everywhere, tenantPolicy, tenantRefusal, type OutboundPolicy } from '../../platform/net/outbound.ts';
import { systemResolver } from '../../platform/net/guarded-lookup.ts';
import { initBareRepository, commitFiles, readBody, serveGitHttp } from '../support/providers/git-host.ts';
import { freePort } from '../support/loopback.ts';
import { startTripwire, type Tripwire } from '../support/tripwire.ts';

const allowed = tenantPolicy({ allowPrivateTargets: true });
const refused = tenantPolicy({ allowPrivateTargets: false });
/** The real tenant rule's shape with one difference: only 127.0.0.2 counts as internal on this loopback-only machine. */
const loopbackTwoInternal: OutboundPolicy = everywhere({ trust: 'tenant', refuse: (a) => (a === '127.0.0.2' ? `${a} is a private, loopback, link-local or reserved address` : null), resolve: systemResolver, refusal: tenantRefusal });

const source = (url: string): GitSource => {
  const parsed = parseGitSource(url, undefined, { allowLocal: url.startsWith('file:') });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.source;
};
const clone = (url: string, outbound: OutboundPolicy, allowLocal = false) => withWorkspace((dir) => cloneRepository(source(url), join(dir, 'src'), { timeoutMs: 30_000, outbound, allowLocal }).then((r) => ({ ...r, files: readdirSync(join(dir, 'src')) })));

let root: string;
let head: string;
let http: Server;
let httpUrl: string;
let httpRequests: string[];
let daemon: ChildProcess;
let daemonPort: number;

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'aegis-egress-'));
  await initBareRepository(join(root, 'app.git'), 'reachable');
  head = await commitFiles(join(root, 'app.git'), null, 'main', { 'README.md': 'hello\n' });
  httpRequests = [];
  http = createHttpServer((req, res) => {
    httpRequests.push(`${req.method} ${req.url} host=${req.headers.host}`);
    const [pathInfo, query = ''] = (req.url ?? '/').split('?') as [string, string?];
    void readBody(req).then((body) => serveGitHttp(req, res, { root, pathInfo, query, body, allowed: true }, { push: 'no', realm: 'x', unauthorized: 'no' }));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  httpUrl = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  daemonPort = await freePort();
  daemon = spawn('git', ['daemon', '--reuseaddr', `--base-path=${root}`, '--export-all', `--port=${daemonPort}`, '--listen=127.0.0.1', root], { stdio: 'ignore' });
  // Ready when it accepts a connection: git daemon can take seconds to start on a loaded machine
  // (CI runs two suites side by side on two cores), so wait up to 30 s and say so if it never does.
  const deadline = Date.now() + 30_000;
  while (!(await accepts(daemonPort))) {
    if (daemon.exitCode !== null) throw new Error(`git daemon exited with ${daemon.exitCode} before listening on ${daemonPort}`);
    if (Date.now() > deadline) throw new Error(`git daemon did not listen on 127.0.0.1:${daemonPort} within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  daemon?.kill();
  await new Promise<void>((resolve) => http?.close(() => resolve()));
  await rm(root, { recursive: true, force: true });
});

describe('every transport goes through the egress proxy', () => {
  it('http: allowed → cloned; refused → the refusal, and the server saw nothing', async () => {
    expect((await clone(`${httpUrl}/app.git`, allowed)).commit).toBe(head);
    const before = httpRequests.length;
    const failure = await clone(`${httpUrl}/app.git`, refused).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RefusedCloneError);
    expect((failure as Error).message).toMatch(/^cloning http:\/\/127\.0\.0\.1:\d+\/app\.git was refused: 127\.0\.0\.1: 127\.0\.0\.1 is a private, loopback, link-local or reserved address \(set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow\)$/);
    expect(httpRequests.length).toBe(before);
  });

  it('git://: core.gitProxy tunnels through the proxy; refused before connecting', async () => {
    expect((await clone(`git://127.0.0.1:${daemonPort}/app.git`, allowed)).commit).toBe(head);
    await expect(clone(`git://localhost:${daemonPort}/app.git`, refused)).rejects.toThrow(/was refused: localhost: 127\.0\.0\.1 is a private/);
  });

  it('ssh: ProxyCommand tunnels through the proxy (the server sees ssh\'s banner); refused before connecting', async () => {
    const banners: string[] = [];
    const sshd = createNetServer((socket) => {
      socket.once('data', (d: Buffer) => banners.push(d.toString('latin1').split('\r\n')[0]!));
      socket.write('SSH-2.0-AegisTest\r\n');
      setTimeout(() => socket.destroy(), 200);
    });
    await new Promise<void>((resolve) => sshd.listen(0, '127.0.0.1', resolve));
    const port = (sshd.address() as { port: number }).port;
    try {
      const reached = await clone(`ssh://git@127.0.0.1:${port}/app.git`, allowed).catch((e: unknown) => e);
      expect(reached).toBeInstanceOf(GitCloneError);
      expect(reached).not.toBeInstanceOf(RefusedCloneError);
      expect(banners).toEqual([expect.stringMatching(/^SSH-2\.0-OpenSSH/)]);
      await expect(clone(`git@127.0.0.1:app.git`, refused)).rejects.toThrow(/was refused: 127\.0\.0\.1: 127\.0\.0\.1 is a private/);
      expect(banners).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => sshd.close(() => resolve()));
    }
  });
});

describe('redirects: the first hop allowed, a later hop internal', () => {
  let internal: Tripwire;
  let redirector: Tripwire;
  beforeAll(async () => {
    internal = await startTripwire('127.0.0.2');
    redirector = await startTripwire('127.0.0.1', (req, res) => res.writeHead(302, { location: `${internal.url}${req.url}` }).end());
  });
  afterAll(async () => {
    await Promise.all([internal?.close(), redirector?.close()]);
  });

  it('curl follows the redirect through the proxy, which refuses the internal hop', async () => {
    await expect(clone(`${redirector.url}/app.git`, loopbackTwoInternal)).rejects.toThrow(/was refused: 127\.0\.0\.2: 127\.0\.0\.2 is a private/);
    expect(redirector.requests).toEqual([expect.stringMatching(/^GET \/app\.git\/info\/refs\?service=git-upload-pack$/)]);
    expect(internal.connections).toBe(0);
    // The same policy lets a clone from the "public" address through.
    expect((await clone(`${httpUrl}/app.git`, loopbackTwoInternal)).commit).toBe(head);
  });
});

describe('the operator\'s environment is not git\'s', () => {
  const saved: Record<string, string | undefined> = {};
  const set = (vars: Record<string, string>) => {
    for (const [k, v] of Object.entries(vars)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  };
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('HTTP(S)_PROXY and NO_PROXY are not used, GIT_SSH_COMMAND neither', async () => {
    const upstream = await startTripwire('127.0.0.1');
    const marker = join(root, 'ssh-command-ran');
    set({ HTTP_PROXY: upstream.url, http_proxy: upstream.url, HTTPS_PROXY: upstream.url, ALL_PROXY: upstream.url, NO_PROXY: '*', no_proxy: '*', GIT_SSH_COMMAND: `touch ${marker}; ssh`, GIT_SSH: '/bin/false' });
    try {
      // NO_PROXY=* would send curl straight to the server: still refused by the clone's proxy.
      await expect(clone(`${httpUrl}/app.git`, refused)).rejects.toThrow(RefusedCloneError);
      expect((await clone(`${httpUrl}/app.git`, allowed)).commit).toBe(head);
      await expect(clone(`ssh://git@127.0.0.1:${daemonPort}/app.git`, refused)).rejects.toThrow(RefusedCloneError);
      expect(existsSync(marker)).toBe(false);
      expect(upstream.connections).toBe(0);
    } finally {
      await upstream.close();
    }
  });
});

describe('submodules', () => {
  it('are never fetched, even from an address the policy allows', async () => {
    const internal = await startTripwire('127.0.0.1');
    const work = join(root, 'with-submodule');
    mkdirSync(work);
    const git = (...args: string[]) => execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' }).trim();
    try {
      git('init', '-q', '-b', 'main');
      writeFileSync(join(work, '.gitmodules'), `[submodule "vendor"]\n\tpath = vendor\n\turl = ${internal.url}/vendor.git\n`);
      git('add', '.gitmodules');
      git('update-index', '--add', '--cacheinfo', `160000,${head},vendor`);
      git('commit', '-q', '-m', 'with a submodule');
      const cloned = await withWorkspace(async (dir) => {
        const target = join(dir, 'src');
        await cloneRepository(source(`file://${work}`), target, { timeoutMs: 30_000, outbound: allowed, allowLocal: true });
        return { files: readdirSync(target).sort(), vendor: readdirSync(join(target, 'vendor')) };
      });
      expect(cloned.files).toEqual(['.git', '.gitmodules', 'vendor']);
      expect(cloned.vendor).toEqual([]);
      expect(internal.connections).toBe(0);
    } finally {
      await internal.close();
    }
  });
});
