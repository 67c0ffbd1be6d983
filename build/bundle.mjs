#!/usr/bin/env node
// `npm run build` (also run by `npm ci` through the `prepare` script, and by `npm start` when the
// build is stale): bundles the `aegis` command, the server and the job threads with esbuild into
// dist/, which bin/aegis.mjs runs instead of the TypeScript sources (start-up ~100 ms instead of ~1 s).
//
//   node build/bundle.mjs              build
//   node build/bundle.mjs --if-stale   build only when dist/ is missing or older than the sources
//   node build/bundle.mjs --warn-only  a failed build is a warning, exit 0 (`prepare`: an install must
//                                   not fail for it; bin/aegis.mjs then runs the sources)
//
// ESM, platform node, packages external (node_modules is used as installed: native re2, PGlite's
// wasm, grpc's .proto loading all keep working), code splitting so a command's modules load only
// when it runs (`aegis --help` loads the entry chunk and commander).
//
// Files resolved at run time relative to a module (`new URL(…, import.meta.url)`: scanner rules and
// templates, the provider's .proto files and launcher, the package.json version) keep pointing into
// the source tree, which ships with the package: each source file's `import.meta.url` is rewritten to
// its own location (relative to dist/, so the tree can move). Threads are the exception: a thread
// started from a .ts file would need tsx, so the thread scripts are entry points of the bundle and
// the URLs that start them are rewritten to the bundled files (THREAD_ENTRIES, which also lists the
// gateway's cluster worker process; the build fails if one is no longer found, rather than silently
// running the source in a bare thread).
//
// dist/build-info.json stamps every input (size and mtime) for bin/aegis.mjs's staleness check.
// The new build is written beside dist/ and renamed into place, so a running `aegis` never sees a
// half-written dist/.
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stampOf } from './stamps.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const distDir = join(root, 'dist');
const INFO = 'build-info.json';
const BOOTSTRAP_ID = 'aegis-build:thread-bootstrap';

/**
 * Thread scripts: source file (as the code names it in `new URL('…', import.meta.url)`) → the bundle
 * entry that replaces it. The job threads' bootstrap registers tsx in the thread only when asked to
 * run a TypeScript module the bundle does not hold.
 */
const THREAD_ENTRIES = {
  'platform/jobs/thread-bootstrap.mjs': 'thread-bootstrap',
  'api/scans/scan-thread.ts': 'scan-thread',
  // The Shield gateway's cluster workers (gateway/cluster/primary.ts forks this file): processes,
  // not threads, but the same problem. The bundled worker holds everything, so it needs no tsx.
  'gateway/cluster/worker-bootstrap.mjs': 'shield-worker',
};

const ENTRY_POINTS = {
  aegis: join(root, 'cli/main.ts'),
  'thread-bootstrap': BOOTSTRAP_ID,
  'scan-thread': join(root, 'api/scans/scan-thread.ts'),
  'shield-worker': join(root, 'gateway/cluster/worker-main.ts'),
  // Run once by the build itself: writes the config's JSON Schema validators as code (validators/).
  'precompile-validators': join(root, 'reconciler/config/precompile-validators.ts'),
  // What receivers import (`aegis/webhooks`, package.json "exports"): the delivery signature check.
  webhooks: join(root, 'api/webhooks/signature.ts'),
};

const toPosix = (path) => path.split(sep).join('/');
const rel = (file) => toPosix(relative(root, file));

export { stampOf };

/** The first input that changed since dist/ was built, `(no build)`, or undefined when fresh. */
export function staleInput(dir = distDir) {
  let info;
  try {
    info = JSON.parse(readFileSync(join(dir, INFO), 'utf8'));
  } catch {
    return '(no build)';
  }
  for (const [file, stamp] of Object.entries(info.inputs)) if (stampOf(file) !== stamp) return file;
  return undefined;
}

/** Rewrites what a module resolves relative to itself (see the header). */
function sourceLocations(used) {
  return {
    name: 'aegis-source-locations',
    setup(b) {
      b.onResolve({ filter: new RegExp(`^${BOOTSTRAP_ID}$`) }, () => ({ path: BOOTSTRAP_ID, namespace: 'aegis-build' }));
      b.onLoad({ filter: /.*/, namespace: 'aegis-build' }, () => ({
        resolveDir: root,
        loader: 'js',
        contents:
          "import { workerData } from 'node:worker_threads';\n" +
          '// The bundle holds the scan thread; a TypeScript module from elsewhere needs tsx in this thread.\n' +
          "if (/\\.[cm]?tsx?$/.test(new URL(workerData.module).pathname)) (await import('tsx/esm/api')).register();\n" +
          `await import(${JSON.stringify('./' + 'platform/jobs/thread-entry.ts')});\n`,
      }));
      b.onLoad({ filter: /\.(ts|mjs|js)$/ }, (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        let text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const file = rel(args.path);
        const marker = 'import.meta.__aegisDistUrl__';
        text = text.replace(/new URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g, (whole, _quote, spec) => {
          const target = rel(resolve(dirname(args.path), spec));
          const entry = THREAD_ENTRIES[target];
          if (!entry) return whole;
          used.add(target);
          return `new URL(${JSON.stringify(`./${entry}.js`)}, ${marker})`;
        });
        const here = toPosix(relative(distDir, args.path));
        text = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(here)}, ${marker}).href`).replaceAll(marker, 'import.meta.url');
        const unsupported = /import\.meta\.(dirname|filename|resolve)\b/.exec(text);
        if (unsupported) return { errors: [{ text: `${file}: ${unsupported[0]} is not rewritten for the bundle; use new URL(…, import.meta.url)` }] };
        return { contents: text, loader: args.path.endsWith('.ts') ? 'ts' : 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

export async function buildDist({ quiet = false } = {}) {
  const { build } = await import('esbuild');
  const started = Date.now();
  const temporary = join(root, `dist.tmp-${process.pid}`);
  rmSync(temporary, { recursive: true, force: true });
  const used = new Set();
  let result;
  try {
    result = await build({
      absWorkingDir: root,
      entryPoints: ENTRY_POINTS,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      outdir: temporary,
      entryNames: '[name]',
      chunkNames: 'chunk-[hash]',
      sourcemap: 'linked',
      metafile: true,
      logLevel: quiet ? 'error' : 'warning',
      plugins: [sourceLocations(used)],
    });
    const missing = Object.keys(THREAD_ENTRIES).filter((file) => !used.has(file));
    if (missing.length > 0) throw new Error(`thread scripts no longer started by \`new URL('…', import.meta.url)\`: ${missing.join(', ')} (update THREAD_ENTRIES in build/bundle.mjs)`);
    // ajv's compile step done ahead of time (reconciler/config/validators.ts): ~100 ms off every
    // `aegis validate`/`plan`/`apply`.
    const { writePrecompiledValidators } = await import(pathToFileURL(join(temporary, 'precompile-validators.js')).href);
    writePrecompiledValidators(join(temporary, 'validators'));
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw error;
  }
  // Stamps taken after the build; a file saved while it ran is stamped as changed, so the build
  // counts as stale rather than silently missing the edit.
  const inputs = {};
  const files = [...Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('aegis-build:')), 'build/bundle.mjs', 'build/stamps.mjs', 'tsconfig.json', 'package.json'];
  for (const file of files) {
    const stats = statSync(join(root, file));
    inputs[file] = stats.mtimeMs > started ? 'changed-during-build' : `${stats.size}:${stats.mtimeMs}`;
  }
  writeFileSync(join(temporary, INFO), `${JSON.stringify({ entry: 'aegis.js', builtAt: new Date().toISOString(), inputs }, null, 1)}\n`);
  const old = join(root, `dist.old-${process.pid}`);
  if (existsSync(distDir)) renameSync(distDir, old);
  renameSync(temporary, distDir);
  rmSync(old, { recursive: true, force: true });
  const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'));
  if (!quiet) process.stderr.write(`built dist/: ${outputs.length} files from ${files.length} inputs in ${Date.now() - started} ms\n`);
  return { inputs: files.length, outputs: outputs.length };
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  const ifStale = process.argv.includes('--if-stale');
  const warnOnly = process.argv.includes('--warn-only');
  // @aegis/cdktf-provider (sdks/cdktf/dist/): examples/cdktf imports the package through the root's
  // `file:` devDependency, so `npm ci` builds it too. Built on its own: one failing stops neither.
  try {
    const { buildCdktfPackage, cdktfStaleInput } = await import('../sdks/cdktf/build.mjs');
    if (!ifStale || cdktfStaleInput() !== undefined) buildCdktfPackage();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`aegis build: sdks/cdktf${warnOnly ? ' not built' : ''}: ${message}\n`);
    if (!warnOnly) process.exitCode = 1;
  }
  try {
    if (!ifStale || staleInput() !== undefined) await buildDist();
    // The dashboard (web/dist/): served by the same process, so built with it.
    const { buildWeb, webStaleInput } = await import('./web.mjs');
    if (!ifStale || webStaleInput() !== undefined) await buildWeb();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(warnOnly ? `aegis build: not built, \`aegis\` will run from the sources: ${message}\n` : `aegis build: ${message}\n`);
    process.exit(warnOnly ? 0 : 1);
  }
}
