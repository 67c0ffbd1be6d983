// Shared set-up of the job tests: a fresh clone of the migrated test database (embedded, or
// PostgreSQL with DATABASE_URL), opened directly (no HTTP: the queue is a library the server, the
// worker command and the scans API call), and a logger whose lines the tests can read.
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle, type Db } from '../../platform/db/database.ts';
import type { JobLogger } from '../../platform/jobs/types.ts';
import { cloneDatabase, type TestDatabase } from '../support/database-template.ts';

export interface JobsDatabase {
  db: Db;
  handle: DatabaseHandle;
  database: TestDatabase;
  /** A second connection pool on the same database (PostgreSQL only: the embedded one is one session). */
  openAnother(): Promise<DatabaseHandle>;
  close(): Promise<void>;
}

export async function openJobsDatabase(): Promise<JobsDatabase> {
  const database = await cloneDatabase(inject('databaseTemplate'));
  const handle = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
  const others: DatabaseHandle[] = [];
  return {
    db: handle.db,
    handle,
    database,
    async openAnother() {
      if (!database.databaseUrl) throw new Error('a second pool needs PostgreSQL');
      const other = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.close();
      await handle.close();
      rmSync(database.dataDir, { recursive: true, force: true });
    },
  };
}

export const onPostgres = () => inject('databaseTemplate').kind === 'postgres';

export interface CapturedLog {
  log: JobLogger;
  lines: Array<Record<string, unknown> & { msg: string }>;
  messages(): string[];
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as CapturedLog['lines'][number]);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines, messages: () => lines.map((l) => l.msg) };
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, stepMs = 20): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A promise with its resolve function, for handlers a test releases by hand. */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}
