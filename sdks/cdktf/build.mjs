#!/usr/bin/env node
// Compiles the bindings (index.ts + gen/, TypeScript with `.ts` import specifiers) into dist/: the
// JavaScript and .d.ts files the package's "exports" point at. Run by the repository's build
// (build/bundle.mjs, so `npm ci` leaves a working package behind the `file:` dependency that
// examples/cdktf imports) and before `npm pack`.
//
//   node sdks/cdktf/build.mjs              build
//   node sdks/cdktf/build.mjs --if-stale   build only when dist/ is missing or older than its inputs
//
// TypeScript comes from the repository's node_modules (the package itself has no dependencies to
// install). dist/ is written beside itself and renamed into place, so an app importing the package
// never sees a half-written dist/. dist/build-stamp.json records each input's size and mtime for
// --if-stale; it is not packed ("files" lists only .js and .d.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const distDir = join(here, 'dist');
const STAMP = 'build-stamp.json';

/** Every file the build reads: the sources, the compiler settings and the package manifest. */
function inputs() {
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  return ['index.ts', 'tsconfig.build.json', 'package.json', 'build.mjs', ...walk(join(here, 'gen')).map((f) => relative(here, f))].sort();
}

/**
 * An input's stamp: size and mtime, as the repository's builds stamp theirs (build/stamps.mjs);
 * written here so that the package builds on its own, importing nothing outside its folder.
 */
function stampOf(file) {
  const stats = statSync(join(here, file), { throwIfNoEntry: false });
  return stats ? `${stats.size}:${stats.mtimeMs}` : undefined;
}

/** The first input changed since dist/ was built, `(no build)`, or undefined when dist/ is fresh. */
export function cdktfStaleInput() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(distDir, STAMP), 'utf8'));
  } catch {
    return '(no build)';
  }
  const files = inputs();
  if (files.length !== Object.keys(stamp.inputs).length) return '(inputs added or removed)';
  return files.find((file) => stamp.inputs[file] !== stampOf(file));
}

export function buildCdktfPackage({ quiet = false } = {}) {
  const started = Date.now();
  const require = createRequire(import.meta.url);
  const tsc = require.resolve('typescript/bin/tsc');
  const temporary = join(here, `dist.tmp-${process.pid}`);
  rmSync(temporary, { recursive: true, force: true });
  const files = inputs();
  try {
    execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), '--outDir', temporary], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw new Error(`tsc failed for sdks/cdktf (${error instanceof Error ? error.message.split('\n')[0] : error})`);
  }
  // Stamped after compiling: a file saved during the build reads as changed next time.
  const stamps = Object.fromEntries(files.map((file) => [file, statSync(join(here, file)).mtimeMs > started ? 'changed-during-build' : stampOf(file)]));
  writeFileSync(join(temporary, STAMP), `${JSON.stringify({ builtAt: new Date().toISOString(), inputs: stamps }, null, 1)}\n`);
  const old = join(here, `dist.old-${process.pid}`);
  if (existsSync(distDir)) renameSync(distDir, old);
  renameSync(temporary, distDir);
  rmSync(old, { recursive: true, force: true });
  if (!quiet) process.stderr.write(`built sdks/cdktf/dist/ from ${files.length} inputs in ${Date.now() - started} ms\n`);
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  try {
    if (!process.argv.includes('--if-stale') || cdktfStaleInput() !== undefined) buildCdktfPackage();
  } catch (error) {
    process.stderr.write(`sdks/cdktf build: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
