#!/usr/bin/env node
// The `aegis` command. Runs the esbuild bundle in dist/ (build/bundle.mjs: `npm run build`; `npm ci`
// builds it through the `prepare` script) when it is there and up to date: `aegis --help` then starts
// in well under 300 ms. Otherwise it runs the TypeScript sources through tsx's loader, as before
// there was a build (about a second to start, no build step needed after a checkout).
//
// Staleness: dist/build-info.json stamps every file the bundle was built from (size and mtime).
// When one differs -- edited, deleted, changed by a checkout -- the bundle no longer is the code in
// the tree, so the sources run instead, and a one-line note says so on stderr when stderr is a
// terminal (never into pipes or logs, so scripted output stays the same). It does not rebuild by
// itself: a command should not write into the package as a side effect, and parallel invocations
// would race; `npm run build` restores the fast start (`npm start` rebuilds first when stale).
// Checking the stamps costs a few milliseconds (one stat per input file).
//
// AEGIS_FROM_SOURCE=1 always runs the sources (the tests set it: they test the tree, never a build).
import { staleInput } from '../build/bundle.mjs';

const fromSource = Boolean(process.env.AEGIS_FROM_SOURCE) && process.env.AEGIS_FROM_SOURCE !== '0';
const stale = fromSource ? 'AEGIS_FROM_SOURCE' : staleInput();

let main;
if (stale === undefined) {
  ({ main } = await import('../dist/aegis.js'));
} else {
  if (stale !== 'AEGIS_FROM_SOURCE' && stale !== '(no build)' && process.stderr.isTTY) {
    process.stderr.write(`aegis: ${stale} changed since dist/ was built; running from the sources (npm run build for the fast start)\n`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
