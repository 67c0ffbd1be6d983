// A throwaway PostgreSQL database for a benchmark run: created on the server named by
// BENCH_DATABASE_URL, DATABASE_URL or the local default, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const LOCAL_DEFAULT = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(): Promise<ScratchDatabase | undefined> {
  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || LOCAL_DEFAULT;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  const name = `aegis_bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Runs a benchmark on a scratch PostgreSQL database (when a server is reachable), then on the embedded one. */
export async function onEachDatabase(run: (label: string, databaseUrl: string | undefined) => Promise<void>): Promise<void> {
  const scratch = await createScratchDatabase();
  if (scratch) {
    try {
      await run('PostgreSQL', scratch.url);
    } finally {
      await scratch.drop();
    }
  } else {
    console.log('PostgreSQL: skipped, no server reachable (set BENCH_DATABASE_URL)');
  }
  await run('embedded', undefined);
}
