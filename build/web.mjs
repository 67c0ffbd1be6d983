#!/usr/bin/env node
// Builds the dashboard (web/) with Vite into web/dist/, which the API process serves
// (api/web/plugin.ts). Run by `npm run build` (and so by `npm ci` and a stale `npm start`) after
// the server's bundle; on its own: `node build/web.mjs [--if-stale]`.
//
// Every asset is also written compressed (.br and .gz beside it): the server sends the file the
// browser accepts, with no compression work per request. web/dist/build-info.json stamps the inputs
// (web/ and the generated API types) for the staleness check.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { stampOf } from './stamps.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const webDir = join(root, 'web');
// AEGIS_WEB_DIST builds (and serves, api/web/plugin.ts) another folder: e.g. two checkouts' test runs
// side by side, each with its own build.
export const WEB_DIST = process.env.AEGIS_WEB_DIST ? resolve(process.env.AEGIS_WEB_DIST) : join(webDir, 'dist');
const INFO = 'build-info.json';
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

const toPosix = (path) => path.split(sep).join('/');

function* filesUnder(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}

/** The files the dashboard is built from (root-relative). */
function webInputs() {
  const files = ['web/index.html', 'web/vite.config.ts', 'web/tsconfig.json', 'client/api-types.ts', 'package.json', 'build/web.mjs'];
  for (const file of filesUnder(join(webDir, 'src'))) files.push(toPosix(relative(root, file)));
  // Copied as they are into the build (the favicon).
  for (const file of filesUnder(join(webDir, 'public'))) files.push(toPosix(relative(root, file)));
  return files;
}

/** The first input changed since web/dist was built, `(no build)`, or undefined when fresh. */
export function webStaleInput() {
  let info;
  try {
    info = JSON.parse(readFileSync(join(WEB_DIST, INFO), 'utf8'));
  } catch {
    return '(no build)';
  }
  const now = webInputs();
  if (now.length !== Object.keys(info.inputs).length) return '(files added or removed)';
  for (const file of now) if (info.inputs[file] !== stampOf(file)) return file;
  return undefined;
}

export async function buildWeb({ quiet = false } = {}) {
  const started = Date.now();
  const inputs = webInputs();
  const { build } = await import('vite');
  await build({ configFile: join(webDir, 'vite.config.ts'), logLevel: quiet ? 'error' : 'warn', build: { outDir: WEB_DIST } });
  let compressed = 0;
  for (const file of filesUnder(WEB_DIST)) {
    if (!COMPRESSIBLE.test(file)) continue;
    const body = readFileSync(file);
    writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }));
    writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
    compressed += 1;
  }
  const stamps = {};
  for (const file of inputs) stamps[file] = statSync(join(root, file)).mtimeMs > started ? 'changed-during-build' : stampOf(file);
  writeFileSync(join(WEB_DIST, INFO), `${JSON.stringify({ builtAt: new Date().toISOString(), inputs: stamps }, null, 1)}\n`);
  if (!quiet) process.stderr.write(`built ${toPosix(relative(root, WEB_DIST)) || WEB_DIST}/: ${compressed} files (each also .br and .gz) in ${Date.now() - started} ms\n`);
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  try {
    if (process.argv.includes('--if-stale') && webStaleInput() === undefined) process.exit(0);
    await buildWeb();
  } catch (error) {
    process.stderr.write(`aegis build (dashboard): ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
