// Live bus over Redis pub/sub: one channel, one JSON array per published batch. A connection in
// subscriber mode can do nothing else, so subscribing opens a second connection, and only when
// this process has subscribers (a gateway-only process just publishes).
import { Redis } from 'ioredis';
import type { BaseLogger } from 'pino';
import type { DecisionEvent } from '../decision.ts';
import type { LiveBus } from './live-bus.ts';
import { LiveListeners, parseBatch, throttledLog, type LiveListener } from './live-listeners.ts';

export const REDIS_LIVE_CHANNEL = 'aegis:shield:decisions';

/** Publishes not yet acknowledged beyond which new batches are dropped (Redis unreachable). */
const MAX_PENDING = 1_000;

export class RedisLiveBus implements LiveBus {
  private readonly publisher: Redis;
  private subscriber: Redis | undefined;
  private readonly listeners: LiveListeners;
  private readonly warn: (err: unknown, message: string) => void;
  private pending = 0;
  private closed = false;
  /** Batches not published because too many were waiting on Redis. */
  dropped = 0;

  constructor(
    private readonly url: string,
    log?: BaseLogger,
  ) {
    this.listeners = new LiveListeners(log);
    this.warn = throttledLog(log);
    this.publisher = new Redis(url, { maxRetriesPerRequest: 2 });
    this.publisher.on('error', (err: unknown) => this.warn(err, 'live bus: Redis publisher connection failed'));
  }

  publish(events: DecisionEvent[]): void {
    if (events.length === 0 || this.closed) return;
    if (this.pending >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.pending += 1;
    this.publisher
      .publish(REDIS_LIVE_CHANNEL, JSON.stringify(events))
      .catch((err: unknown) => this.warn(err, 'live bus: publishing to Redis failed'))
      .finally(() => (this.pending -= 1));
  }

  subscribe(listener: LiveListener): () => void {
    const remove = this.listeners.add(listener);
    if (!this.subscriber && !this.closed) this.subscriber = this.openSubscriber();
    return remove;
  }

  private openSubscriber(): Redis {
    // ioredis re-subscribes by itself after a reconnect.
    const subscriber = new Redis(this.url, { maxRetriesPerRequest: null });
    subscriber.on('error', (err: unknown) => this.warn(err, 'live bus: Redis subscriber connection failed'));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === REDIS_LIVE_CHANNEL) this.listeners.deliver(parseBatch(message));
    });
    subscriber.subscribe(REDIS_LIVE_CHANNEL).catch((err: unknown) => this.warn(err, 'live bus: subscribing to Redis failed'));
    return subscriber;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await Promise.all([quit(this.publisher), this.subscriber ? quit(this.subscriber) : undefined]);
  }
}

/** QUIT when connected, otherwise just drop the connection (QUIT would wait for a reconnect). */
async function quit(connection: Redis): Promise<void> {
  if (connection.status !== 'ready') {
    connection.disconnect();
    return;
  }
  await connection.quit().catch(() => connection.disconnect());
}
