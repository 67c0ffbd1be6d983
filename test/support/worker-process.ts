// A real `aegis worker` process on a test server's database and data directory (PostgreSQL only:
// workers share the server's queue), resolved once it has printed its start-up banner.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { TestDatabase } from './database-template.ts';

const AEGIS = resolve('bin/aegis.mjs');

/** Calls `started` with the process at once (so a caller can always kill it), then waits for its banner. */
export function spawnWorker(database: TestDatabase, env: Record<string, string>, started: (child: ChildProcess) => void): Promise<ChildProcess> {
  const child = spawn(process.execPath, [AEGIS, 'worker', '--data-dir', database.dataDir, '--no-scheduler'], {
    env: { ...process.env, DATABASE_URL: database.databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started(child);
  let output = '';
  return new Promise((ready, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Aegis worker ')) ready(child);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code, signal) => fail(new Error(`aegis worker exited (${code ?? signal}): ${output}`)));
  });
}
