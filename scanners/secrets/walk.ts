// The files of a scan: every regular file under the root, in a stable order, without following
// symbolic links (a link could point outside the root) and without descending into `.git` (its
// objects are compressed; history is scanned through `git log` instead).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface WalkEntry {
  /** Relative to the root, forward slashes. */
  path: string;
  absolute: string;
}

export interface WalkResult {
  files: WalkEntry[];
  /** Directories that could not be listed, relative. */
  unreadable: string[];
}

/** Directory names never entered. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git']);

/**
 * Lists the tree depth-first in code-unit order. Calls `check` every few hundred directories so a
 * cancelled scan stops during a long walk too.
 */
export function walkTree(root: string, check: () => void): WalkResult {
  const files: WalkEntry[] = [];
  const unreadable: string[] = [];
  const stack: string[] = [''];
  let dirs = 0;
  while (stack.length > 0) {
    const rel = stack.pop()!;
    if (++dirs % 256 === 0) check();
    let entries;
    try {
      entries = readdirSync(rel === '' ? root : join(root, rel), { withFileTypes: true });
    } catch {
      unreadable.push(rel === '' ? '.' : rel);
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) subdirs.push(childRel);
      } else if (e.isFile()) {
        files.push({ path: childRel, absolute: join(root, childRel) });
      }
      // Symbolic links, sockets, FIFOs and devices are not content.
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
  return { files, unreadable };
}

/** Lockfiles: machine-written, full of integrity hashes; skipped only when asked. */
const LOCKFILE = /(?:^|\/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|deno\.lock|Cargo\.lock|Gemfile\.lock|composer\.lock|poetry\.lock|Pipfile\.lock|go\.sum|gradle\.lockfile|packages\.lock\.json|mix\.lock|pubspec\.lock|flake\.lock)$/;
/** Minified bundles, their source maps and other generated assets. */
const MINIFIED = /(?:[.-]min\.(?:js|mjs|cjs|css)|\.(?:js|mjs|cjs|css)\.map|\.bundle\.js|\.chunk\.js)$/i;

export function isLockfile(path: string): boolean {
  return LOCKFILE.test(path);
}

export function isMinifiedAsset(path: string): boolean {
  return MINIFIED.test(path);
}
