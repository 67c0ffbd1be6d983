// Bulk loading with COPY, inside a transaction, on either database. Kysely has no COPY, and the
// connection it hands a transaction keeps its driver client private, so openDatabase registers the
// driver object behind each Kysely here (the pg pool, or the PGlite instance) and
// transactionWithCopy runs the transaction on a connection it can also COPY through:
//  - PostgreSQL: a client taken from the same pool, wrapped in a one-connection Kysely for the
//    ordinary statements; COPY … FROM STDIN is streamed with pg-copy-streams.
//  - PGlite: the usual Kysely transaction (the dialect hands the one session to one holder at a time,
//    so statements sent straight to PGlite while it is held run inside it); COPY … FROM '/dev/blob'
//    with the rows passed as a Blob.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, type PostgresPoolClient, type Transaction } from 'kysely';
import type pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import type { Database } from './schema.ts';

type Db = Kysely<Database>;

export type CopySource = { kind: 'postgres'; pool: pg.Pool } | { kind: 'embedded'; pglite: PGlite };

const sources = new WeakMap<Db, CopySource>();

/** Called by openDatabase: what transactionWithCopy needs to reach the driver behind `db`. */
export function registerCopySource(db: Db, source: CopySource): void {
  sources.set(db, source);
}

/**
 * Loads rows in PostgreSQL's COPY text format, UTF-8 (fields separated by tabs, rows ended by
 * newlines, `\N` for null, backslash, tab, newline and carriage return escaped: see copyField and
 * CopyText) into `table`.
 */
export type CopyIn = (table: string, columns: readonly string[], rows: Iterable<Uint8Array>) => Promise<void>;

const identifier = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain SQL identifier: ${name}`);
  return name;
};
const copyStatement = (table: string, columns: readonly string[], source: string) =>
  `copy ${identifier(table)} (${columns.map(identifier).join(', ')}) from ${source}`;

/** A value as a field of COPY text format; null becomes `\N`. */
export function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

/**
 * Collects COPY text rows into one buffer. Rows are written as they come: one 10 MB string built by
 * concatenation costs several times more (the rope is flattened at the end, and the garbage
 * collector moves it around meanwhile).
 */
export class CopyText {
  #buffer = Buffer.allocUnsafe(1 << 18);
  #length = 0;

  /** One row: the fields already passed through copyField (or known to need no escaping). */
  row(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    if (this.#length + text.length * 3 > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#length + text.length * 3));
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    this.#length += this.#buffer.write(text, this.#length, 'utf8');
  }

  bytes(): Uint8Array {
    return this.#buffer.subarray(0, this.#length);
  }
}

/**
 * Runs `work` in one transaction, with `copyIn` loading rows on that same transaction; null when
 * `db` was not opened by openDatabase (the caller then inserts another way). Committed when `work`
 * resolves, rolled back when it throws.
 */
export async function transactionWithCopy<T>(db: Db, work: (trx: Transaction<Database>, copyIn: CopyIn | null) => Promise<T>): Promise<T> {
  const source = sources.get(db);
  if (source?.kind === 'embedded') {
    const { pglite } = source;
    return db.transaction().execute((trx) =>
      work(trx, async (table, columns, rows) => {
        // The chunks are Buffers over plain ArrayBuffers (never shared memory), which is what Blob takes.
        await pglite.query(copyStatement(table, columns, `'/dev/blob'`), [], { blob: new Blob([...rows] as Uint8Array<ArrayBuffer>[]) });
      }),
    );
  }
  if (source?.kind !== 'postgres') return db.transaction().execute((trx) => work(trx, null));

  const client = await source.pool.connect();
  // Kysely's pool interface, over this one client; the client goes back to the real pool below.
  const own: PostgresPoolClient = { query: client.query.bind(client) as PostgresPoolClient['query'], release: () => undefined };
  const single = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => own, end: async () => undefined } }) });
  // A COPY refused by the server (a SQLSTATE: a unique violation, say) ends in the protocol's error
  // and ready states, and the transaction goes on from a savepoint. One that failed on this side,
  // part way through sending, leaves the connection in a state not worth trusting: the pool
  // replaces it rather than handing it out again. (pg-pool drops a client that has died anyway.)
  let copyFailed: Error | undefined;
  try {
    return await single.transaction().execute((trx) =>
      work(trx, async (table, columns, rows) => {
        try {
          await pipeline(Readable.from(rows), client.query(copyFromStdin(copyStatement(table, columns, 'stdin'))));
        } catch (err) {
          if (typeof (err as { code?: unknown }).code !== 'string' || !/^[0-9A-Z]{5}$/.test((err as { code: string }).code)) copyFailed = err instanceof Error ? err : new Error(String(err));
          throw err;
        }
      }),
    );
  } finally {
    client.release(copyFailed);
    await single.destroy();
  }
}
