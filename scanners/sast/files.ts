// Which files of a tree the SAST scanner reads, and why it leaves the others out. Symlinks are
// never followed (a checkout could point outside the directory it was given).
import { opendir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SkippedFile } from '../types.ts';

// Vue and Svelte components too: their scripts are code, their markup has raw-HTML sinks (templates.ts).
export const SOURCE_FILE = /\.(?:[cm]?[jt]s|[jt]sx|vue|svelte)$/i;
const DECLARATION_FILE = /\.d\.[cm]?ts$/i;
const MINIFIED_NAME = /[.-]min\.[cm]?js$/i;

export interface SourceEntry {
  /** Relative to the root, `/`-separated. */
  path: string;
  absolute: string;
  size: number;
}

export interface Listing {
  files: SourceEntry[];
  skipped: SkippedFile[];
}

export interface ListOptions {
  /** Directory names left out wherever they appear. */
  excludeDirs: readonly string[];
  maxFileBytes: number;
  signal?: AbortSignal;
}

/** Walks `root` in sorted order, so scans of the same tree list files identically. */
export async function listSourceFiles(root: string, options: ListOptions): Promise<Listing> {
  const files: SourceEntry[] = [];
  const skipped: SkippedFile[] = [];
  const exclude = new Set(options.excludeDirs);
  const stack: string[] = [''];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    const rel = stack.pop()!;
    const entries: Array<{ name: string; dir: boolean; file: boolean; link: boolean }> = [];
    try {
      for await (const d of await opendir(join(root, rel))) entries.push({ name: d.name, dir: d.isDirectory(), file: d.isFile(), link: d.isSymbolicLink() });
    } catch {
      if (rel) skipped.push({ path: rel, reason: 'unreadable' });
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.dir) {
        if (exclude.has(e.name)) skipped.push({ path, reason: 'excluded' });
        else subdirs.push(path);
        continue;
      }
      if (!SOURCE_FILE.test(e.name)) continue;
      if (e.link || !e.file) {
        skipped.push({ path, reason: 'excluded' });
        continue;
      }
      if (DECLARATION_FILE.test(e.name)) {
        skipped.push({ path, reason: 'excluded' });
        continue;
      }
      if (MINIFIED_NAME.test(e.name)) {
        skipped.push({ path, reason: 'unsupported' });
        continue;
      }
      const absolute = join(root, path);
      let size: number;
      try {
        size = (await stat(absolute)).size;
      } catch {
        skipped.push({ path, reason: 'unreadable' });
        continue;
      }
      if (size > options.maxFileBytes) skipped.push({ path, reason: 'too_large' });
      else files.push({ path, absolute, size });
    }
    // Reverse so the stack pops them in sorted order.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
  return { files, skipped };
}

/** NUL bytes early on: not source text. */
export function looksBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0);
}

/**
 * Minified or bundled-to-one-line code: lines average over 200 characters. Such files are
 * generated, their findings unreadable, and they cost the most to parse.
 */
export function looksMinified(text: string): boolean {
  if (text.length < 512) return false;
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return text.length / lines > 200;
}
