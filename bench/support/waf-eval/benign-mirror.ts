// Reads files at HEAD from a bare git mirror (`<mirrors>/<owner>+<name>/repo`). Blobs are read in one
// `git cat-file --batch` process per call rather than one `git show` per file (the books have hundreds
// of files). Mirrors may lack their largest blobs; those files are simply not returned.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface MirrorFile {
  path: string;
  text: string;
}

const MAX_BUFFER = 512 * 1024 * 1024;

export class Mirror {
  readonly gitDir: string;

  constructor(
    mirrors: string,
    /** `owner/name` on GitHub. */
    readonly repo: string,
  ) {
    this.gitDir = join(mirrors, repo.replace('/', '+'), 'repo');
  }

  get present(): boolean {
    return existsSync(this.gitDir);
  }

  private git(args: string[], input?: string): Buffer {
    return execFileSync('git', [`--git-dir=${this.gitDir}`, ...args], { input, maxBuffer: MAX_BUFFER, stdio: ['pipe', 'pipe', 'pipe'] });
  }

  /** Paths at HEAD with their blob ids, in git's (stable) order. */
  private tree(): { path: string; oid: string }[] {
    if (!this.present) return [];
    const out = this.git(['ls-tree', '-r', '-z', 'HEAD']).toString('utf8');
    const entries: { path: string; oid: string }[] = [];
    for (const record of out.split('\0')) {
      const tab = record.indexOf('\t');
      if (tab < 0) continue;
      const [, type, oid] = record.slice(0, tab).split(' ');
      if (type === 'blob' && oid) entries.push({ path: record.slice(tab + 1), oid });
    }
    return entries;
  }

  /** Paths at HEAD that pass `want`. */
  list(want: (path: string) => boolean): string[] {
    return this.tree()
      .filter((e) => want(e.path))
      .map((e) => e.path);
  }

  /** The files that pass `want` and whose blobs are present, as UTF-8 text. */
  read(want: (path: string) => boolean): MirrorFile[] {
    const entries = this.tree().filter((e) => want(e.path));
    if (entries.length === 0) return [];
    const out = this.git(['cat-file', '--batch'], entries.map((e) => e.oid).join('\n') + '\n');
    const files: MirrorFile[] = [];
    let at = 0;
    for (const entry of entries) {
      const eol = out.indexOf(0x0a, at);
      if (eol < 0) break;
      const header = out.subarray(at, eol).toString('utf8').split(' ');
      at = eol + 1;
      // "<oid> missing" for blobs the mirror left out; "<oid> blob <size>" otherwise.
      if (header[1] !== 'blob') continue;
      const size = Number(header[2]);
      files.push({ path: entry.path, text: out.subarray(at, at + size).toString('utf8') });
      at += size + 1;
    }
    return files;
  }

  /** One file's text, or null when it is not at HEAD or its blob is absent. */
  readOne(path: string): string | null {
    return this.read((p) => p === path)[0]?.text ?? null;
  }
}
