// Runs the `aegis` command as a user would, in a child process.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const AEGIS = resolve('bin/aegis.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runAegis(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    execFile(process.execPath, [AEGIS, ...args], { env: { ...process.env, AEGIS_SOURCE: '', ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}
