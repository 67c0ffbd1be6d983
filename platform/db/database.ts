// Opens the database Aegis runs on: the PostgreSQL server named by DATABASE_URL, or the embedded
// PostgreSQL (PGlite) kept in the data directory. Everything above this module sees one Kysely.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { registerCopySource } from './copy.ts';
import type { PGlite } from '@electric-sql/pglite';
import { PGliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'embedded';
  /** Where the data lives, for the start-up banner (never includes a password). */
  location: string;
  /** The connection pool's counters (PostgreSQL only), for metrics. */
  pool?: { readonly totalCount: number; readonly idleCount: number; readonly waitingCount: number };
  /** The embedded database itself (embedded only): backups dump it (platform/db/backup.ts). */
  embedded?: PGlite;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** Connections in the pool (PostgreSQL only). */
  poolSize?: number;
}

// int8 (counts) arrive as strings from pg; every count we read fits in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    // An idle connection closed by the server (a restart, a failover, pg_terminate_backend) is an
    // 'error' event on the pool; unhandled, it would end the process. The pool drops that client
    // and opens another on the next query, which reports its own error if the server is still gone.
    pool.on('error', () => undefined);
    // A connection checked out of the pool (a transaction between two statements) has no pool
    // listener: the server closing it then is an 'error' on the client itself, which ended the
    // process on a PostgreSQL restart (`npm run chaos`). The statement in flight still fails with
    // the error, and the pool discards the broken client when it is released.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    registerCopySource(db, { kind: 'postgres', pool });
    const url = new URL(options.databaseUrl);
    url.password = '';
    return { db, kind: 'postgres', location: url.toString(), pool, close: () => db.destroy() };
  }
  const dir = join(options.dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const embedded = await PGlite.create(dir);
  const db = new Kysely<Database>({ dialect: new PGliteDialect(embedded) });
  registerCopySource(db, { kind: 'embedded', pglite: embedded });
  return { db, kind: 'embedded', location: dir, embedded, close: () => db.destroy() };
}

export async function isReachable(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
