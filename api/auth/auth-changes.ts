// Tells every API process that who-may-do-what changed (a session revoked, a member's role changed
// or removed, a plan or SSO enforcement changed), so cached session authorisations are dropped at
// once, not when they expire. On PostgreSQL the change is announced with NOTIFY inside the
// transaction that makes it (delivered on commit, to every process listening); this process also
// forgets at once after the commit. While the LISTEN connection is down, nothing is cached.
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { ListenConnection } from '../db/listen-connection.ts';

const CHANNEL = 'aegis_auth_changed';

export class AuthChanges {
  private readonly listeners = new Set<() => void>();
  private readonly connection: ListenConnection | undefined;

  constructor(options: { databaseUrl: string | undefined; log: FastifyBaseLogger }) {
    if (!options.databaseUrl) return; // embedded database: one process, nothing to tell others
    this.connection = new ListenConnection({
      databaseUrl: options.databaseUrl,
      setup: async (client) => {
        await client.query(`listen ${CHANNEL}`);
        this.emit(); // changes missed while disconnected
      },
      onNotification: (message) => {
        if (message.channel === CHANNEL) this.emit();
      },
      onLost: (err) => {
        this.emit();
        options.log.warn({ err }, 'auth: change notifications lost; sessions are checked on every request until they are back');
      },
    });
    void this.connection.connect();
  }

  /** Whether a cached authorisation would hear of its change (always true on the embedded database). */
  get reliable(): boolean {
    return this.connection === undefined || this.connection.client !== undefined;
  }

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /**
   * Runs `change` in a transaction, announces it to other processes on commit, and makes this
   * process forget at once after the commit.
   */
  async commit<T>(db: Db, change: (trx: Db) => Promise<T>): Promise<T> {
    const result = await db.transaction().execute(async (trx) => {
      const value = await change(trx);
      if (this.connection) await sql`select pg_notify(${CHANNEL}, '')`.execute(trx);
      return value;
    });
    this.emit();
    return result;
  }

  async close(): Promise<void> {
    await this.connection?.close();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}
