// A minimal EventSource over node:http for tests of the Shield live stream; it can also stop
// reading to play a stalled client.
import http from 'node:http';
import type { DecisionEvent } from '../../gateway/decision.ts';
import { eventually } from './gateway.ts';
import type { TestServer } from './server.ts';

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  ended = false;
  private text = '';

  constructor(
    private readonly req: http.ClientRequest,
    readonly res: http.IncomingMessage,
    stalled: boolean,
  ) {
    res.setEncoding('utf8');
    res.on('end', () => (this.ended = true));
    res.on('close', () => (this.ended = true));
    res.on('error', () => (this.ended = true));
    if (!stalled) this.resume();
  }

  /** Starts (or restarts) reading. */
  resume(): void {
    this.res.on('data', (chunk: string) => this.parse(chunk));
    this.res.resume();
  }

  get decisions(): DecisionEvent[] {
    return this.messages.filter((m) => m.event === 'decision').map((m) => JSON.parse(m.data) as DecisionEvent);
  }

  get dropped(): number {
    return this.messages.filter((m) => m.event === 'dropped').reduce((sum, m) => sum + (JSON.parse(m.data) as { count: number }).count, 0);
  }

  async until(check: (c: SseClient) => boolean, timeoutMs = 10_000): Promise<void> {
    await eventually(async () => check(this), timeoutMs, 10);
  }

  close(): void {
    this.req.destroy();
  }

  private parse(chunk: string): void {
    this.text += chunk;
    for (let end = this.text.indexOf('\n\n'); end >= 0; end = this.text.indexOf('\n\n')) {
      const block = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      const message: SseMessage = { id: undefined, event: 'message', data: '' };
      let isMessage = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          isMessage = true;
          if (field === 'id') message.id = value;
          else if (field === 'event') message.event = value;
          else if (field === 'data') message.data = message.data ? `${message.data}\n${value}` : value;
        }
      }
      if (isMessage) this.messages.push(message);
    }
  }
}

export interface SseOptions {
  /** API key to send; the server's admin key when left out, none when null. */
  key?: string | null;
  headers?: Record<string, string>;
  /** Start without reading, to play a stalled client. */
  stalled?: boolean;
}

export interface Opened {
  status: number;
  headers: http.IncomingHttpHeaders;
  client: SseClient | undefined;
  body: { error: { code: string; message: string; details: Record<string, unknown> } } | undefined;
}

export function openSse(server: TestServer, path: string, options: SseOptions = {}): Promise<Opened> {
  const key = options.key === undefined ? server.adminKey : options.key;
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (key) headers.authorization = `Bearer ${key}`;
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.url}${path}`, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, client: undefined, body: JSON.parse(text) }));
        return;
      }
      resolve({ status: 200, headers: res.headers, client: new SseClient(req, res, options.stalled ?? false), body: undefined });
    });
    req.on('error', reject);
  });
}
