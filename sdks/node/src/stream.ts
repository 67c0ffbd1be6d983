// Server-sent events: the live stream of Shield decisions, with Last-Event-ID resume.
import { APIConnectionError, AegisError } from './errors.ts';
import { MAX_RETRY_WAIT_MS, sleep, type APIClient, type RequestOptions } from './transport.ts';

export interface StreamOptions {
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string | undefined;
  /** Closes the stream. */
  signal?: AbortSignal | undefined;
  /** Called when the server reports events this client missed (`event: dropped`, `{ count }`). */
  onDropped?: ((info: { count: number }) => void) | undefined;
  /** Reconnect after a broken connection (default true), resuming after the last event seen. */
  reconnect?: boolean | undefined;
  /** Consecutive failed reconnections before giving up (default 5). */
  maxReconnects?: number | undefined;
}

interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * An endless stream of decoded `data` of the server's events (other than `dropped`). Heartbeat
 * comments are skipped; after a broken connection it reconnects with `Last-Event-ID` set to the
 * last event id seen. `close()` (or the signal) ends it.
 */
export class EventStream<T> implements AsyncIterable<T> {
  /** The id of the last event received: resume from here with `lastEventId`. */
  lastEventId: string | undefined;
  /** Events the server reported as missed (`event: dropped`), in total. */
  dropped = 0;
  private readonly controller = new AbortController();
  private started = false;

  constructor(
    private readonly client: APIClient,
    private readonly path: string,
    private readonly query: Record<string, unknown> | undefined,
    private readonly streamOptions: StreamOptions,
    private readonly options: RequestOptions | undefined,
  ) {
    this.lastEventId = streamOptions.lastEventId;
    const outer = streamOptions.signal ?? options?.signal;
    if (outer) {
      if (outer.aborted) this.controller.abort(outer.reason);
      else outer.addEventListener('abort', () => this.controller.abort(outer.reason), { once: true });
    }
  }

  /** Ends the stream; a pending iteration finishes without error. */
  close(): void {
    this.controller.abort();
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.started) throw new AegisError('An EventStream can be iterated once');
    this.started = true;
    const signal = this.controller.signal;
    let failures = 0;
    const maxReconnects = this.streamOptions.maxReconnects ?? 5;
    try {
      while (!signal.aborted) {
        let response: Response;
        try {
          response = await this.client.send(
            { method: 'GET', path: this.path, query: this.query, headers: { 'last-event-id': this.lastEventId }, mutating: false },
            { ...this.options, signal },
            'text/event-stream',
            false,
          );
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        try {
          for await (const event of parseEvents(response, signal)) {
            failures = 0;
            if (event.id !== undefined) this.lastEventId = event.id;
            if (event.event === 'dropped') {
              const info = safeJson(event.data) as { count?: number } | undefined;
              const count = typeof info?.count === 'number' ? info.count : 0;
              this.dropped += count;
              this.streamOptions.onDropped?.({ count });
              continue;
            }
            if (event.data === '') continue;
            yield JSON.parse(event.data) as T;
          }
        } catch (error) {
          if (signal.aborted) return;
          if (error instanceof SyntaxError) throw new AegisError(`Invalid event data: ${error.message}`, { cause: error });
          // A broken connection: fall through to reconnect.
        }
        if (signal.aborted || this.streamOptions.reconnect === false) return;
        failures += 1;
        if (failures > maxReconnects) throw new APIConnectionError(`The event stream broke ${failures} times in a row`);
        try {
          await sleep(Math.min(MAX_RETRY_WAIT_MS, 250 * 2 ** (failures - 1)), signal);
        } catch {
          return;
        }
      }
    } finally {
      this.controller.abort();
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The events of a text/event-stream body (the WHATWG parsing rules, minus `retry`). */
async function* parseEvents(response: Response, signal: AbortSignal): AsyncGenerator<SseEvent> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length || event) yield { id, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue; // heartbeat comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}
