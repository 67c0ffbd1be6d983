// A real `aegis worker` process on a test server's database and data directory (PostgreSQL only:
// workers share the server's queue), resolved once it has printed its start-up banner (with the
// generous start-up bound of aegis-process.ts, never a fixed wait).
import type { ChildProcess } from 'node:child_process';
import { startAegis } from './aegis-process.ts';
import type { TestDatabase } from './database-template.ts';

/** Calls `started` with the process at once (so a caller can always kill it), then waits for its banner. */
export async function spawnWorker(database: TestDatabase, env: Record<string, string>, started: (child: ChildProcess) => void): Promise<ChildProcess> {
  const running = await startAegis(['worker', '--data-dir', database.dataDir, '--no-scheduler'], { DATABASE_URL: database.databaseUrl, ...env }, /Aegis worker /, { spawned: started });
  return running.child;
}
