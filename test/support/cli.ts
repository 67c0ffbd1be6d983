// Runs the `aegis` command as a user would, in a child process. Always from the TypeScript sources
// (AEGIS_FROM_SOURCE=1): a test checks the tree as it is, never a dist/ build that may be older.
// test/cli/build.test.ts runs the build itself.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const AEGIS = resolve('bin/aegis.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((done) => {
    execFile(file, args, { env: { ...process.env, AEGIS_SOURCE: '', ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

export function runAegis(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return run(process.execPath, [AEGIS, ...args], { AEGIS_FROM_SOURCE: '1', ...env });
}

/** The bundle in dist/ itself (no fallback to the sources): build it first (build/bundle.mjs). */
export function runBuiltAegis(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const bundle = resolve('dist/aegis.js');
  const script = `const { main } = await import(${JSON.stringify(`file://${bundle}`)}); process.exitCode = await main(process.argv.slice(1));`;
  return run(process.execPath, ['--input-type=module', '-e', script, '--', ...args], env);
}
