// What the source-control stand-ins share: bare repositories made with git's plumbing (commits of
// given files, no working tree), git's smart HTTP served by `git http-backend` as a CGI child (as
// real hosts serve clones), the password of a Basic Authorization header, and reading a request
// body. Each stand-in keeps its provider's own rules (which tokens may clone, its error texts).
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function gitRun(args: string[], env: NodeJS.ProcessEnv, input?: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env, stdio: 'pipe' });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString('utf8').trim()) : reject(new Error(`git ${args[0]} failed: ${err}`))));
    // A git that exits early closes its stdin: its exit status says why, not EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

const gitEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Stand-in',
  GIT_AUTHOR_EMAIL: 'stand-in@example.com',
  GIT_COMMITTER_NAME: 'Stand-in',
  GIT_COMMITTER_EMAIL: 'stand-in@example.com',
  ...extra,
});

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * A bare repository at `dir`. `shaWants`: which commits a client may fetch by id — `reachable`
 * (GitHub) or `any` (GitLab's Gitaly).
 */
export async function initBareRepository(dir: string, shaWants: 'reachable' | 'any'): Promise<void> {
  await gitRun(['init', '--quiet', '--bare', '--initial-branch=main', dir], gitEnv({}));
  await gitRun(['-C', dir, 'config', shaWants === 'any' ? 'uploadpack.allowAnySHA1InWant' : 'uploadpack.allowReachableSHA1InWant', 'true'], gitEnv({}));
}

/** Commits `files` (path → content) on top of `parent` (or as a root commit) and points `branch` at it; returns the sha. */
export async function commitFiles(dir: string, parent: string | null, branch: string, files: Record<string, string>): Promise<string> {
  const indexDir = await mkdtemp(join(tmpdir(), 'aegis-stand-in-index-'));
  try {
    const env = gitEnv({ GIT_DIR: dir, GIT_INDEX_FILE: join(indexDir, 'index') });
    if (parent) await gitRun(['read-tree', parent], env);
    for (const [file, content] of Object.entries(files)) {
      const blob = await gitRun(['hash-object', '-w', '--stdin'], env, content);
      await gitRun(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], env);
    }
    const tree = await gitRun(['write-tree'], env);
    const sha = await gitRun(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', `Update ${Object.keys(files).join(', ')}`], env);
    await gitRun(['update-ref', `refs/heads/${branch}`, sha], env);
    return sha;
  } finally {
    await rm(indexDir, { recursive: true, force: true });
  }
}

export async function commitExists(dir: string, sha: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}$/.test(sha)) return false;
  try {
    await gitRun(['-C', dir, 'cat-file', '-e', `${sha}^{commit}`], gitEnv({}));
    return true;
  } catch {
    return false;
  }
}

/** The password of `Authorization: Basic …` (git sends the token there), or null. */
export function basicPassword(req: IncomingMessage): string | null {
  const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
  if (!basic) return null;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1);
}

/** How one host refuses: pushes (the stand-ins serve clones and fetches only) and clones of a private repository without a token. */
export interface GitRefusals {
  push: string;
  realm: string;
  unauthorized: string;
}

export interface GitHttpRequest {
  root: string;
  pathInfo: string;
  query: string;
  body: Buffer;
  /** Whether the caller may read this repository (public, or a valid token in Basic auth). */
  allowed: boolean;
}

/** Answers a smart-HTTP request for a repository under `root` with `git http-backend`, after the host's checks. */
export async function serveGitHttp(req: IncomingMessage, res: ServerResponse, request: GitHttpRequest, refusals: GitRefusals): Promise<void> {
  if (request.pathInfo.endsWith('/git-receive-pack') || request.query.includes('service=git-receive-pack')) {
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end(`${refusals.push}\n`);
    return;
  }
  if (!request.allowed) {
    res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': `Basic realm="${refusals.realm}"` });
    res.end(`${refusals.unauthorized}\n`);
    return;
  }
  const env = gitEnv({
    GIT_PROJECT_ROOT: request.root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: request.pathInfo,
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: request.query,
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    CONTENT_LENGTH: String(request.body.length),
    REMOTE_ADDR: '127.0.0.1',
    ...(typeof req.headers['content-encoding'] === 'string' ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
    ...(typeof req.headers['git-protocol'] === 'string' ? { GIT_PROTOCOL: req.headers['git-protocol'] } : {}),
  });
  const output = await new Promise<Buffer>((resolve, reject) => {
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.on('error', reject);
    child.on('close', () => resolve(Buffer.concat(out)));
    child.stdin.on('error', () => {});
    child.stdin.end(request.body);
  });
  // A CGI answer: headers (Status: among them), a blank line, the body.
  let end = output.indexOf('\r\n\r\n');
  let skip = 4;
  if (end < 0) {
    end = output.indexOf('\n\n');
    skip = 2;
  }
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of output.subarray(0, Math.max(end, 0)).toString('latin1').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
    else headers[name] = value;
  }
  res.writeHead(status, headers);
  res.end(end < 0 ? output : output.subarray(end + skip));
}
