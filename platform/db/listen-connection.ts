// One dedicated PostgreSQL connection for LISTEN/NOTIFY, outside the query pool (a LISTEN belongs to
// its session), re-opened after an error with a growing delay (250 ms doubling to 30 s). The job
// signals and the Shield live bus each keep one.
import pg from 'pg';

const MAX_RECONNECT_DELAY_MS = 30_000;

export interface ListenConnectionOptions {
  databaseUrl: string;
  onNotification(message: pg.Notification): void;
  /** Runs on every new connection before it is offered (LISTEN here); throwing counts as a lost connection. */
  setup(client: pg.Client): Promise<void>;
  /** The connection was lost or could not be opened (closing is not reported). */
  onLost(err: unknown): void;
  /** Whether a lost connection is re-opened by itself (default) or only when next asked for. */
  reconnectEagerly?: () => boolean;
}

export class ListenConnection {
  private current: pg.Client | undefined;
  private connecting: Promise<pg.Client | undefined> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: ListenConnectionOptions) {}

  /** The open connection, if there is one now. */
  get client(): pg.Client | undefined {
    return this.current;
  }

  /** The open connection, opening it if needed; undefined while it cannot be opened (backing off) or after close. */
  connect(): Promise<pg.Client | undefined> {
    if (this.current) return Promise.resolve(this.current);
    if (this.reconnectTimer || this.closed) return Promise.resolve(undefined);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client | undefined> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    let lost = false;
    const onLost = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.current === client) this.current = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.options.onLost(err);
      this.reconnectLater();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => this.options.onNotification(message));
    try {
      await client.connect();
      await this.options.setup(client);
    } catch (err) {
      onLost(err);
      return undefined;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return undefined;
    }
    this.failures = 0;
    this.current = client;
    return client;
  }

  private reconnectLater(): void {
    if (this.reconnectTimer || this.closed) return;
    const delay = Math.min(MAX_RECONNECT_DELAY_MS, 250 * 2 ** this.failures);
    this.failures += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.options.reconnectEagerly?.() ?? true) void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  /** Stops reconnecting and ends the connection; queries already sent complete first. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.connecting;
    const client = this.current;
    this.current = undefined;
    if (client) await client.end().catch(() => undefined);
  }
}
