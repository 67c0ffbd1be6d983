// Live bus over PostgreSQL LISTEN/NOTIFY, for deployments with a PostgreSQL server and no Redis.
// One dedicated connection per process (platform/db/listen-connection.ts) both sends and listens. A
// NOTIFY payload must stay under 8 000 bytes, so a batch goes out as several JSON arrays of at most
// MAX_PAYLOAD_BYTES each. What is published while the connection is down is dropped.
import type { BaseLogger } from 'pino';
import { ListenConnection } from '../../platform/db/listen-connection.ts';
import type { DecisionEvent } from '../decision.ts';
import type { LiveBus } from './live-bus.ts';
import { LiveListeners, parseBatch, throttledLog, type LiveListener } from './live-listeners.ts';

export const PG_LIVE_CHANNEL = 'aegis_shield_decisions';
export const MAX_PAYLOAD_BYTES = 7_900;
const MAX_PENDING = 1_000;

/** JSON arrays of events, each at most `maxBytes` long in UTF-8; an event too large alone is left out. */
export function packPayloads(events: readonly DecisionEvent[], maxBytes = MAX_PAYLOAD_BYTES): { payloads: string[]; oversize: number } {
  const payloads: string[] = [];
  let parts: string[] = [];
  let size = 2; // the brackets
  let oversize = 0;
  for (const event of events) {
    const json = JSON.stringify(event);
    const bytes = Buffer.byteLength(json);
    if (bytes + 2 > maxBytes) {
      oversize += 1;
      continue;
    }
    const added = bytes + (parts.length > 0 ? 1 : 0);
    if (size + added > maxBytes) {
      payloads.push(`[${parts.join(',')}]`);
      parts = [];
      size = 2;
    }
    size += bytes + (parts.length > 0 ? 1 : 0);
    parts.push(json);
  }
  if (parts.length > 0) payloads.push(`[${parts.join(',')}]`);
  return { payloads, oversize };
}

export class PgLiveBus implements LiveBus {
  private readonly listeners: LiveListeners;
  private readonly warn: (err: unknown, message: string) => void;
  private readonly connection: ListenConnection;
  private pending = 0;
  /** The NOTIFYs (and a LISTEN), one after another on the one connection. */
  private sending: Promise<void> = Promise.resolve();
  private closed = false;
  /** Payloads not sent (connection down, too many waiting, or one event over the NOTIFY limit). */
  dropped = 0;

  constructor(databaseUrl: string, log?: BaseLogger) {
    this.listeners = new LiveListeners(log);
    this.warn = throttledLog(log);
    this.connection = new ListenConnection({
      databaseUrl,
      // LISTEN only while someone here subscribes; a publisher-only process just sends.
      setup: async (client) => {
        if (this.listeners.size > 0) await client.query(`listen ${PG_LIVE_CHANNEL}`);
      },
      onNotification: (message) => {
        if (message.channel === PG_LIVE_CHANNEL && message.payload) this.listeners.deliver(parseBatch(message.payload));
      },
      onLost: (err) => this.warn(err, 'live bus: PostgreSQL connection lost; reconnecting'),
      // Only a process with subscribers reconnects eagerly; a publisher reconnects on its next publish.
      reconnectEagerly: () => this.listeners.size > 0,
    });
  }

  publish(events: DecisionEvent[]): void {
    if (events.length === 0 || this.closed) return;
    const { payloads, oversize } = packPayloads(events);
    this.dropped += oversize;
    for (const payload of payloads) {
      if (this.pending >= MAX_PENDING) {
        this.dropped += 1;
        continue;
      }
      this.pending += 1;
      // One statement at a time on the one connection (pg queues concurrent queries itself, but
      // that is deprecated and goes away in pg 9).
      this.sending = this.sending
        .then(async () => {
          const client = await this.connection.connect();
          if (!client) throw new Error('not connected');
          await client.query('select pg_notify($1, $2)', [PG_LIVE_CHANNEL, payload]);
        })
        .catch((err: unknown) => {
          this.dropped += 1;
          this.warn(err, 'live bus: NOTIFY failed');
        })
        .finally(() => (this.pending -= 1));
    }
  }

  subscribe(listener: LiveListener): () => void {
    const remove = this.listeners.add(listener);
    if (this.listeners.size === 1) {
      // The first subscriber: LISTEN on the open connection, or open one (which then LISTENs).
      const client = this.connection.client;
      if (client) this.sending = this.sending.then(() => client.query(`listen ${PG_LIVE_CHANNEL}`)).then(() => undefined, (err: unknown) => this.warn(err, 'live bus: LISTEN failed'));
      else void this.connection.connect();
    }
    return remove;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    // Queries already sent (the last NOTIFYs) complete before the connection closes.
    await this.connection.close();
  }
}
