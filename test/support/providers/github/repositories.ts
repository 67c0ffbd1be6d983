// The git repositories the stand-in hosts: bare repositories tests create and commit to, served over
// git smart HTTP at /{owner}/{name}.git by `git http-backend`. Public ones clone without a token;
// private ones take GitHub's Basic auth with a live token as the password.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { basicPassword, commitExists as gitCommitExists, commitFiles, initBareRepository, serveGitHttp } from '../git-host.ts';
import { liveToken, type StandInContext, type TokenRecord } from './context.ts';
import type { RepositoryRecord } from './types.ts';

const fullName = (repo: RepositoryRecord): string => `${repo.owner}/${repo.name}`;
const repoDir = (ctx: StandInContext, repository: string): string => join(ctx.root, `${repository}.git`);

function repositoryRecord(ctx: StandInContext, repository: string): RepositoryRecord {
  const repo = ctx.standIn.repositories.get(repository);
  if (!repo) throw new Error(`no stand-in repository ${repository}`);
  return repo;
}

export async function createRepository(ctx: StandInContext, owner: string, name: string, files: Record<string, string>, opts: { private?: boolean } = {}): Promise<RepositoryRecord> {
  if (!/^[A-Za-z0-9_.-]+$/.test(owner) || !/^[A-Za-z0-9_.-]+$/.test(name)) throw new Error(`invalid repository ${owner}/${name}`);
  const repo: RepositoryRecord = { id: ctx.nextId++, owner, name, private: opts.private ?? false, defaultBranch: 'main', branches: new Map() };
  ctx.standIn.repositories.set(fullName(repo), repo);
  // GitHub serves any reachable commit by id (fetches of a pull request's head sha).
  await initBareRepository(repoDir(ctx, fullName(repo)), 'reachable');
  await commit(ctx, owner, name, 'main', files);
  return repo;
}

export async function commit(ctx: StandInContext, owner: string, name: string, branch: string, files: Record<string, string>): Promise<string> {
  const repo = repositoryRecord(ctx, `${owner}/${name}`);
  const dir = repoDir(ctx, fullName(repo));
  const parent = repo.branches.get(branch) ?? repo.branches.get(repo.defaultBranch) ?? null;
  const sha = await commitFiles(dir, parent, branch, files);
  repo.branches.set(branch, sha);
  return sha;
}

export const commitExists = (ctx: StandInContext, repository: string, sha: string): Promise<boolean> => gitCommitExists(repoDir(ctx, repository), sha);

// ---- git smart HTTP ----------------------------------------------------------------------

/** GitHub's Basic auth for git over HTTPS: any user name (x-access-token by convention), a token as the password. */
function gitCaller(ctx: StandInContext, req: IncomingMessage): TokenRecord | null {
  return liveToken(ctx, basicPassword(req), ['pat', 'user']);
}

const GIT_REFUSALS = { push: 'Permission denied.', realm: 'GitHub', unauthorized: 'Invalid username or token. Password authentication is not supported for Git operations.' };

export async function git(ctx: StandInContext, req: IncomingMessage, res: ServerResponse, repo: RepositoryRecord, pathInfo: string, query: string, raw: Buffer): Promise<void> {
  await serveGitHttp(req, res, { root: ctx.root, pathInfo, query, body: raw, allowed: !repo.private || gitCaller(ctx, req) !== null }, GIT_REFUSALS);
}
