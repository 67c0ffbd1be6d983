// How a worker learns of new jobs and cancellations before its next poll. In process, queue
// functions emit on `localJobSignals` (the embedded database has no other process to tell). Across
// processes on PostgreSQL, the `aegis_jobs` channel carries `enqueued` and `cancel:<id>`;
// JobNotifications LISTENs on one dedicated connection and re-emits them locally. Both are only
// hints: polling and lease heartbeats are what guarantee progress, so a lost notification costs
// latency, never correctness.
//
// `enqueued` is sent on its own, at most every NOTIFY_EVERY_MS per database, never inside the
// inserting transaction: PostgreSQL serialises the commits of all transactions that NOTIFY, which
// halved concurrent enqueue throughput when a trigger sent it with every insert.
import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { ListenConnection } from '../db/listen-connection.ts';
import type { JobLogger } from './types.ts';

export const JOBS_CHANNEL = 'aegis_jobs';

interface SignalEvents {
  enqueued: [];
  cancel: [id: string];
}

export const localJobSignals = new EventEmitter<SignalEvents>();
// Every worker in a process listens; tests start many.
localJobSignals.setMaxListeners(0);

const NOTIFY_EVERY_MS = 50;

interface Throttle {
  last: number;
  trailing: NodeJS.Timeout | undefined;
}

const throttles = new WeakMap<Db, Throttle>();

function notifyEnqueued(db: Db, throttle: Throttle): void {
  throttle.last = Date.now();
  // A hint: if it fails (database closing, connection lost), polling still finds the job.
  sql`select pg_notify(${JOBS_CHANNEL}, 'enqueued')`.execute(db).catch(() => undefined);
}

/** Tells this process's workers at once, and other processes' workers within NOTIFY_EVERY_MS, that jobs were committed. */
export function announceEnqueued(db: Db): void {
  localJobSignals.emit('enqueued');
  let throttle = throttles.get(db);
  if (!throttle) throttles.set(db, (throttle = { last: 0, trailing: undefined }));
  const wait = throttle.last + NOTIFY_EVERY_MS - Date.now();
  if (wait <= 0) notifyEnqueued(db, throttle);
  else if (!throttle.trailing) {
    const pending = throttle;
    pending.trailing = setTimeout(() => {
      pending.trailing = undefined;
      notifyEnqueued(db, pending);
    }, wait);
    pending.trailing.unref();
  }
}

export class JobNotifications {
  private readonly connection: ListenConnection;

  constructor(databaseUrl: string, log: JobLogger) {
    this.connection = new ListenConnection({
      databaseUrl,
      setup: async (client) => {
        await client.query(`listen ${JOBS_CHANNEL}`);
      },
      onNotification: (message) => {
        if (message.channel !== JOBS_CHANNEL || !message.payload) return;
        if (message.payload === 'enqueued') localJobSignals.emit('enqueued');
        else if (message.payload.startsWith('cancel:')) localJobSignals.emit('cancel', message.payload.slice('cancel:'.length));
      },
      onLost: (err) => log.warn({ err }, 'jobs: notification connection lost; polling until it is back'),
    });
    void this.connection.connect();
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
