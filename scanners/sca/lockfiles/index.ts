// Which files are lockfiles, and the parser for each. Parsers are pure: text in, packages out.
import { parseCargoLock } from './cargo.ts';
import { parseGoMod, parseGoSum } from './go.ts';
import { parsePackageLock } from './package-lock.ts';
import { parsePnpmLock } from './pnpm.ts';
import { parsePoetryLock } from './poetry.ts';
import { parseRequirements } from './requirements.ts';
import { parseYarnLock } from './yarn.ts';
import type { ParseResult } from './types.ts';

export { parseCargoLock } from './cargo.ts';
export { mergeGoModules, parseGoMod, parseGoSum, type GoModResult } from './go.ts';
export { parsePackageLock } from './package-lock.ts';
export { parsePnpmLock } from './pnpm.ts';
export { parsePoetryLock } from './poetry.ts';
export { parseRequirement, parseRequirements } from './requirements.ts';
export { parseYarnLock } from './yarn.ts';
export { parseToml, TomlError, type TomlTable, type TomlValue } from './toml.ts';

export type LockfileKind = 'package-lock' | 'yarn' | 'pnpm' | 'requirements' | 'poetry' | 'go.mod' | 'go.sum' | 'cargo';

/**
 * The kind of lockfile a path names, or null. `dirName` is the containing directory's own name:
 * requirements files are recognised as `requirements.txt`, `requirements-dev.txt`,
 * `dev-requirements.txt` and any `.txt` inside a `requirements/` directory.
 */
export function lockfileKind(fileName: string, dirName = ''): LockfileKind | null {
  switch (fileName) {
    case 'package-lock.json':
    case 'npm-shrinkwrap.json':
      return 'package-lock';
    case 'yarn.lock':
      return 'yarn';
    case 'pnpm-lock.yaml':
      return 'pnpm';
    case 'poetry.lock':
      return 'poetry';
    case 'go.mod':
      return 'go.mod';
    case 'go.sum':
      return 'go.sum';
    case 'Cargo.lock':
      return 'cargo';
  }
  if (/^([\w.-]*[-_.])?requirements([-_.][\w.-]*)?\.txt$/i.test(fileName)) return 'requirements';
  if (dirName.toLowerCase() === 'requirements' && fileName.toLowerCase().endsWith('.txt')) return 'requirements';
  return null;
}

const PARSERS: Record<Exclude<LockfileKind, 'go.mod'>, (text: string, path: string) => ParseResult> = {
  'package-lock': parsePackageLock,
  yarn: parseYarnLock,
  pnpm: parsePnpmLock,
  requirements: parseRequirements,
  poetry: parsePoetryLock,
  'go.sum': parseGoSum,
  cargo: parseCargoLock,
};

/** Parses one lockfile on its own (go.mod and go.sum are best merged with `mergeGoModules`). */
export function parseLockfile(kind: LockfileKind, text: string, path: string): ParseResult {
  if (kind === 'go.mod') return parseGoMod(text, path);
  return PARSERS[kind](text, path);
}
