// Secrets that were committed and later removed are still in the repository: this reads the patch
// log of every ref (`git log -p --all --unified=0`, spawned with an argument array, never a shell),
// and hands the lines each commit added to a file, with their line numbers, to the caller.
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** Settings that stop a scanned repository's own config from running programs or changing output. */
const SAFE_CONFIG = [
  '-c', 'core.quotePath=false',
  '-c', 'core.fsmonitor=false',
  '-c', 'log.showSignature=false',
  '-c', 'diff.noprefix=false',
  '-c', 'color.ui=never',
];

function gitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C' };
}

/** Runs a short git command and returns its stdout; rejects with stderr on failure. */
function gitOutput(root: string, args: readonly string[], signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', root, ...SAFE_CONFIG, ...args], { env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'], signal });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(err.trim() || `git ${args[0]} exited with ${code}`))));
  });
}

/** Why history cannot be read (`undefined` when it can): git missing, not a repository, or a subdirectory of one. */
export async function historyUnavailable(root: string, signal: AbortSignal): Promise<string | undefined> {
  let top: string;
  try {
    top = (await gitOutput(root, ['rev-parse', '--show-toplevel'], signal)).trim();
  } catch (err) {
    signal.throwIfAborted();
    return `history not scanned: git cannot read a repository at the scan root (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
  // A directory inside some other repository (a fixture in a test tree) must not scan that one.
  if (realpathSync(top) !== realpathSync(root)) return 'history not scanned: the scan root is not the top of its git repository';
  return undefined;
}

export async function countCommits(root: string, signal: AbortSignal, maxCommits?: number): Promise<number> {
  const args = ['rev-list', '--all', '--count'];
  if (maxCommits !== undefined) args.push(`--max-count=${maxCommits}`);
  const n = Number((await gitOutput(root, args, signal)).trim());
  return Number.isFinite(n) ? n : 0;
}

export interface AddedChunk {
  commit: string;
  /** Committer date, ISO 8601. */
  committedAt: string;
  path: string;
  /** The added lines joined with `\n`. */
  text: string;
  /** Line number in the file (1-based) of each line of `text`. */
  lines: number[];
  /** True when the file's added text was cut at `maxBytes`. */
  truncated: boolean;
}

/** Undoes git's C-style quoting of unusual paths (`"a\tb"`, octal escapes for bytes). */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"')) return raw;
  const bytes: number[] = [];
  const s = raw.slice(1, -1);
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = s[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(s.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export interface HistoryStats {
  commits: number;
  bytes: number;
}

/**
 * Streams `git log -p` and calls `onChunk` for each (commit, file) with added lines. Stops and
 * rejects with the signal's reason when it is aborted.
 */
export async function readHistory(
  root: string,
  signal: AbortSignal,
  options: { maxCommits?: number; maxBytes: number; onChunk: (chunk: AddedChunk) => void; onCommit?: (count: number) => void },
): Promise<HistoryStats> {
  const args = [
    'log', '-p', '--all', '--no-color', '--no-ext-diff', '--no-textconv', '--unified=0',
    '--src-prefix=a/', '--dst-prefix=b/', '--format=%x01%H %cI',
  ];
  if (options.maxCommits !== undefined) args.push(`--max-count=${options.maxCommits}`);
  const child = spawn('git', ['-C', root, ...SAFE_CONFIG, ...args], { env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  const onAbort = (): void => {
    child.kill('SIGKILL');
  };
  signal.addEventListener('abort', onAbort, { once: true });

  const stats: HistoryStats = { commits: 0, bytes: 0 };
  let commit = '';
  let committedAt = '';
  let path: string | null = null;
  let inHeader = false;
  let added = 0;
  let removed = 0;
  let nextLine = 0;
  let lines: string[] = [];
  let lineNos: number[] = [];
  let bytes = 0;
  let truncated = false;

  const flush = (): void => {
    if (path !== null && lines.length > 0) {
      const text = lines.join('\n');
      stats.bytes += Buffer.byteLength(text);
      options.onChunk({ commit, committedAt, path, text, lines: lineNos, truncated });
    }
    path = null;
    lines = [];
    lineNos = [];
    bytes = 0;
    truncated = false;
    added = 0;
    removed = 0;
  };

  try {
    const rl = createInterface({ input: child.stdout.setEncoding('utf8'), crlfDelay: Infinity });
    for await (const line of rl) {
      if (signal.aborted) break;
      if (added > 0 && line.startsWith('+')) {
        added--;
        if (bytes + line.length > options.maxBytes) truncated = true;
        else {
          lines.push(line.slice(1));
          lineNos.push(nextLine);
          bytes += line.length;
        }
        nextLine++;
        continue;
      }
      if (removed > 0 && line.startsWith('-')) {
        removed--;
        continue;
      }
      if (line.startsWith('\x01')) {
        flush();
        const sp = line.indexOf(' ');
        commit = line.slice(1, sp < 0 ? undefined : sp);
        committedAt = sp < 0 ? '' : line.slice(sp + 1);
        options.onCommit?.(++stats.commits);
      } else if (line.startsWith('diff --git ')) {
        flush();
        inHeader = true;
      } else if (inHeader && line.startsWith('+++ ')) {
        const target = unquoteGitPath(line.slice(4));
        path = target === '/dev/null' ? null : target.startsWith('b/') ? target.slice(2) : target;
      } else if (line.startsWith('@@ ')) {
        inHeader = false;
        const m = HUNK.exec(line);
        if (m) {
          removed = m[1] === undefined ? 1 : Number(m[1]);
          nextLine = Number(m[2]);
          added = m[3] === undefined ? 1 : Number(m[3]);
        }
      }
      // Anything else is header noise: index, mode, rename, "Binary files … differ", "\ No newline".
    }
    if (!signal.aborted) flush();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (signal.aborted) {
    child.kill('SIGKILL');
    signal.throwIfAborted();
  }
  const code = await exited;
  if (code !== 0) throw new Error(`git log failed (${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`);
  return stats;
}
