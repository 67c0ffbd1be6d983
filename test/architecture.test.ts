// The direction of the data flow, checked: schemas → reconciler/provider → (HTTP) → API → database.
// The API process must not load the reconciler or the provider (config-repo syncs reach the
// reconciler through a port wired in by cli/), schemas depend on nothing of ours, and the
// reconciler knows nothing of the command line or the provider. Every static and dynamic import
// with a literal specifier counts.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** Top-level folders of this repository that `file` imports from (packages are left out). */
function importedFolders(file: string): { specifier: string; folder: string }[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({ specifier, folder: relative(ROOT, resolve(ROOT, dirname(file), specifier)).split('/')[0]! }));
}

function violations(dir: string, forbidden: readonly string[]): string[] {
  return sourceFiles(dir).flatMap((file) => importedFolders(file).filter((i) => forbidden.includes(i.folder)).map((i) => `${file} imports ${i.specifier}`));
}

describe('module boundaries', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    expect(importedFolders('cli/serve.ts').map((i) => i.folder)).toEqual(expect.arrayContaining(['api', 'reconciler']));
    expect(sourceFiles('api').length).toBeGreaterThan(100);
  });

  it('the API imports nothing from the reconciler, the provider or the command line', () => {
    expect(violations('api', ['reconciler', 'provider', 'cli', 'bench', 'test'])).toEqual([]);
  });

  it('schemas import nothing of ours', () => {
    expect(violations('schemas', ['api', 'reconciler', 'provider', 'cli', 'bench', 'test'])).toEqual([]);
  });

  it('the reconciler imports nothing from the command line or the provider', () => {
    expect(violations('reconciler', ['cli', 'provider', 'bench', 'test'])).toEqual([]);
  });
});
