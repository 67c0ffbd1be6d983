// Files at HEAD of a bare git repository (the corpora are fetched as bare mirrors beside the
// project and never copied into it).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const MAX_BUFFER = 256 * 1024 * 1024;

export class BareRepo {
  constructor(readonly gitDir: string) {}

  get present(): boolean {
    return existsSync(this.gitDir) && existsSync(`${this.gitDir}/HEAD`);
  }

  private git(args: string[]): string {
    return execFileSync('git', [`--git-dir=${this.gitDir}`, ...args], { encoding: 'utf8', maxBuffer: MAX_BUFFER, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** The commit HEAD names, so a report says which version of the corpus it measured. */
  head(): string {
    return this.git(['rev-parse', 'HEAD']).trim();
  }

  /** Paths of the files under `dir` (recursively), sorted. */
  files(dir: string): string[] {
    return this.git(['ls-tree', '-r', '-z', '--name-only', 'HEAD', '--', dir])
      .split('\0')
      .filter(Boolean)
      .sort();
  }

  /** A file's text (UTF-8; invalid bytes become U+FFFD). */
  read(path: string): string {
    return this.git(['show', `HEAD:${path}`]);
  }
}
