// Tells every API process that who-may-do-what changed (a session revoked, a member's role changed
// or removed, a plan or SSO enforcement changed), so cached session authorisations are dropped at
// once, not when they expire. On PostgreSQL the change is announced with NOTIFY inside the
// transaction that makes it. PostgreSQL delivers it on commit to every listening process at the
// same moment, so `commit` returns only once this process has heard its own announcement (plus a
// few milliseconds): by the time the caller has its answer, every other process has had it too.
// This process also forgets at once after the commit. While the LISTEN connection is down, nothing
// is cached.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { ListenConnection } from '../../../platform/db/listen-connection.ts';

const CHANNEL = 'aegis_auth_changed';
/** How long `commit` waits to hear its own announcement before answering anyway. */
const ECHO_TIMEOUT_MS = 2_000;
/** Extra time for other processes' listeners, which PostgreSQL served at the same moment. */
const ECHO_GRACE_MS = 5;

export class AuthChanges {
  private readonly listeners = new Set<() => void>();
  private readonly connection: ListenConnection | undefined;
  /** Announcements of this process not yet heard back, by payload. */
  private readonly echoes = new Map<string, () => void>();

  constructor(options: { databaseUrl: string | undefined; log: FastifyBaseLogger }) {
    if (!options.databaseUrl) return; // embedded database: one process, nothing to tell others
    this.connection = new ListenConnection({
      databaseUrl: options.databaseUrl,
      setup: async (client) => {
        await client.query(`listen ${CHANNEL}`);
        this.emit(); // changes missed while disconnected
      },
      onNotification: (message) => {
        if (message.channel !== CHANNEL) return;
        this.emit();
        if (message.payload) this.echoes.get(message.payload)?.();
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
   * Runs `change` in a transaction, announces it to other processes on commit, makes this process
   * forget at once after the commit, and returns once the announcement has gone round.
   */
  async commit<T>(db: Db, change: (trx: Db) => Promise<T>): Promise<T> {
    const payload = randomUUID();
    const heard = this.connection?.client ? this.awaitEcho(payload) : undefined;
    try {
      const result = await db.transaction().execute(async (trx) => {
        const value = await change(trx);
        if (this.connection) await sql`select pg_notify(${CHANNEL}, ${payload})`.execute(trx);
        return value;
      });
      this.emit();
      if (heard) await heard.promise;
      return result;
    } finally {
      heard?.cancel();
    }
  }

  private awaitEcho(payload: string): { promise: Promise<void>; cancel: () => void } {
    const abort = new AbortController();
    const promise = new Promise<void>((resolve) => {
      const done = () => {
        this.echoes.delete(payload);
        abort.abort();
        resolve();
      };
      this.echoes.set(payload, () => void sleep(ECHO_GRACE_MS).then(done));
      sleep(ECHO_TIMEOUT_MS, undefined, { signal: abort.signal }).then(done, () => undefined);
    });
    return {
      promise,
      cancel: () => {
        this.echoes.delete(payload);
        abort.abort();
      },
    };
  }

  async close(): Promise<void> {
    await this.connection?.close();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}
