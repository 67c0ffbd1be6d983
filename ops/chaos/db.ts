// Direct reads of the private PostgreSQL for the checks (what the API would page through slowly).
import pg from 'pg';

export interface Db {
  rows<T extends object>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export function openDb(url: string): Db {
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5_000 });
  // A PostgreSQL restart drops idle clients; the pool replaces them on the next query.
  pool.on('error', () => undefined);
  return {
    async rows<T extends object>(sql: string, params: unknown[] = []) {
      return (await pool.query(sql, params)).rows as T[];
    },
    close: () => pool.end(),
  };
}
