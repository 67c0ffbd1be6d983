#!/usr/bin/env node
// Runs one TypeScript file (benchmarks, scripts) with the same loader as the `aegis` command.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: run-ts.mjs FILE.ts [args...]');
  process.exit(1);
}
process.argv = [process.argv[0], file, ...rest];
await import(pathToFileURL(resolve(file)).href);
