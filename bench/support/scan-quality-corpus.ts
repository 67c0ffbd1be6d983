// Puts a public corpus for bench/scan-quality.ts on disk and lays out the files a bench scans.
// A corpus is a directory (a checkout) or a bare git directory; a bare one is read at HEAD with
// `git archive HEAD | tar -x` into a temporary directory (two processes piped, no shell). The files
// chosen for a scan are then copied into a "view" directory of their own, so every tool, ours and
// the peers, walks exactly the same tree and nothing has to be told what to leave out.
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export interface CorpusSpec {
  /** Shown in messages: `secrets`, `SAST`. */
  name: string;
  /** Environment variable that overrides the default path. */
  env: string;
  /** Where the search tool's `fetch` puts the repository beside the project. */
  defaultPath: string;
  /** `owner/name` on GitHub. */
  repo: string;
}

export interface Corpus {
  spec: CorpusSpec;
  /** What was asked for (a directory or a bare git directory). */
  source: string;
  /** A directory holding the files (the source itself, or HEAD extracted into a temporary one). */
  root: string;
  /** HEAD's commit when read from git. */
  commit?: string;
}

export class MissingCorpus extends Error {
  constructor(
    readonly spec: CorpusSpec,
    readonly path: string,
  ) {
    super(`${spec.name} corpus not found at ${path}`);
  }
}

/** How to get a missing corpus: public repositories fetched beside the project, never committed. */
export function howToGet(err: MissingCorpus): string {
  const { spec, path } = err;
  return [
    `${spec.name} corpus missing: ${path} is neither a directory nor a bare git directory.`,
    `  It is the public repository github.com/${spec.repo}, fetched beside the project (never committed). Either`,
    `    git clone --bare https://github.com/${spec.repo} ${spec.defaultPath}`,
    `  or point ${spec.env} at a checkout or a bare clone of it: ${spec.env}=/path/to/${spec.repo.split('/')[1]} npm run bench:scan-quality`,
  ].join('\n');
}

const temporaries: string[] = [];

/** A fresh temporary directory, removed by `cleanupTemporaries`. */
export function temporaryDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `aegis-scan-quality-${prefix}-`));
  temporaries.push(dir);
  return dir;
}

export function cleanupTemporaries(): void {
  for (const dir of temporaries.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A bare git directory (or a `.git` directory): HEAD and objects/ at its top, no work tree. */
function isGitDir(path: string): boolean {
  return existsSync(join(path, 'HEAD')) && existsSync(join(path, 'objects')) && statSync(join(path, 'objects')).isDirectory();
}

/** `git --git-dir=DIR archive HEAD` piped into `tar -x -C DEST`. */
function extractHead(gitDir: string, dest: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const git = spawn('git', [`--git-dir=${gitDir}`, 'archive', '--format=tar', 'HEAD'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tar = spawn('tar', ['-x', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] });
    let errors = '';
    git.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    tar.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    git.stdout.pipe(tar.stdin);
    let pending = 2;
    let failed = false;
    const done = (what: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`${what} exited with ${code}: ${errors.trim()}`));
      }
      if (--pending === 0 && !failed) resolve();
    };
    git.on('error', reject);
    tar.on('error', reject);
    git.on('close', done(`git archive of ${gitDir}`));
    tar.on('close', done('tar -x'));
  });
}

/** The corpus named by `spec.env` or its default path; throws MissingCorpus when there is none. */
export async function openCorpus(spec: CorpusSpec): Promise<Corpus> {
  const source = process.env[spec.env] || spec.defaultPath;
  if (!existsSync(source) || !statSync(source).isDirectory()) throw new MissingCorpus(spec, source);
  if (!isGitDir(source)) return { spec, source, root: source };
  const root = temporaryDir(spec.name.toLowerCase());
  await extractHead(source, root);
  const { stdout } = await execFileP('git', [`--git-dir=${source}`, 'rev-parse', 'HEAD']);
  return { spec, source, root, commit: stdout.trim() };
}

/** Every regular file under `root`, relative with `/`, sorted; `.git` is never entered, links never followed. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const rel = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (rel === '.git' || rel.startsWith('.git/') || rel.includes('/.git/')) continue;
    out.push(rel);
  }
  return out.sort();
}

/** Copies `files` (relative to `root`) into a new temporary directory and returns it. */
export function makeView(name: string, root: string, files: readonly string[]): string {
  const view = temporaryDir(`${name}-view`);
  for (const file of files) {
    const dest = join(view, file);
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(join(root, file), dest);
  }
  return view;
}
