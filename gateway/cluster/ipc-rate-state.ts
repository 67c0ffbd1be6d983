// Rate-limit state for gateway cluster workers without Redis: each worker asks the primary process,
// which holds the one MemoryRateState, so a budget is spent once across all workers (100/minute is
// 100/minute, not 100 per worker). One IPC round trip per rule hit; the primary does no I/O to
// answer, so a round trip costs a few tens of microseconds. Under load the requests a worker makes
// in one turn of its event loop travel as one message (flushed by setImmediate, right after the
// I/O callbacks that made them), and come back as one: the channel's per-message cost (a JSON
// line, a write, a read on each side) is paid once per batch rather than once per request.
//
// A request the primary does not answer within `timeoutMs` (primary gone, channel closed) rejects:
// the pipeline then fails open and logs it, as it does when Redis is unreachable.
import { MemoryRateState } from '../state/memory-rate-state.ts';
import type { RateState, StandingDeny, WindowCounts } from '../state/rate-state.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export type RateRequest =
  | { aegis: 'rate'; id: number; op: 'hit'; key: string; windowMs: number; now: number }
  | { aegis: 'rate'; id: number; op: 'deniedUntil'; keys: string[]; now: number }
  | { aegis: 'rate'; id: number; op: 'deny'; key: string; deny: StandingDeny };

export type RateReply = { aegis: 'rate-reply'; id: number; result: WindowCounts | StandingDeny | null } | { aegis: 'rate-reply'; id: number; error: string };

/** What travels: the requests of one event-loop turn, and their replies in the same order. */
export interface RateBatch {
  aegis: 'rate-batch';
  requests: RateRequest[];
}
export interface RateReplies {
  aegis: 'rate-replies';
  replies: RateReply[];
}

/** The worker's end of the IPC channel: `process` in a cluster worker; a fake in unit tests. */
export interface IpcChannel {
  /** `process.send`: the callback receives a send error (a closed channel) instead of an 'error' event. */
  send?: ((message: RateBatch, sendHandle?: undefined, options?: undefined, callback?: (error: Error | null) => void) => boolean) | undefined;
  /** False once the channel has closed. */
  connected?: boolean | undefined;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

export const isRateBatch = (message: unknown): message is RateBatch =>
  typeof message === 'object' && message !== null && (message as { aegis?: unknown }).aegis === 'rate-batch';

const isRateReplies = (message: unknown): message is RateReplies =>
  typeof message === 'object' && message !== null && (message as { aegis?: unknown }).aegis === 'rate-replies';

interface Pending {
  resolve(result: unknown): void;
  reject(err: Error): void;
  sent: number;
}

type Omitted<T> = T extends unknown ? Omit<T, 'aegis' | 'id'> : never;

export class IpcRateState implements RateState {
  readonly #pending = new Map<number, Pending>();
  readonly #sweeper: NodeJS.Timeout;
  readonly #listener = (message: unknown) => this.#answer(message);
  #next = 0;
  #queue: RateRequest[] = [];
  #flush: NodeJS.Immediate | undefined;

  constructor(private readonly channel: IpcChannel, private readonly timeoutMs = 2_000) {
    channel.on('message', this.#listener);
    // One sweep for every pending request rather than a timer each: requests are many, timeouts rare.
    this.#sweeper = setInterval(() => this.#expire(Date.now()), Math.max(50, Math.floor(timeoutMs / 4)));
    this.#sweeper.unref();
  }

  async hit(key: string, windowMs: number, now: number): Promise<WindowCounts> {
    return (await this.#ask({ op: 'hit', key, windowMs, now })) as WindowCounts;
  }

  async deniedUntil(keys: readonly string[], now: number): Promise<StandingDeny | null> {
    if (keys.length === 0) return null;
    return (await this.#ask({ op: 'deniedUntil', keys: [...keys], now })) as StandingDeny | null;
  }

  async deny(key: string, deny: StandingDeny): Promise<void> {
    await this.#ask({ op: 'deny', key, deny });
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    if (this.#flush) clearImmediate(this.#flush);
    this.#flush = undefined;
    this.#queue = [];
    this.channel.off('message', this.#listener);
    for (const pending of this.#pending.values()) pending.reject(new Error('rate state closed'));
    this.#pending.clear();
  }

  #ask(request: Omitted<RateRequest>): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (!this.channel.send) return reject(new Error('no IPC channel to the gateway primary'));
      this.#pending.set(id, { resolve, reject, sent: Date.now() });
      this.#queue.push({ aegis: 'rate', id, ...request } as RateRequest);
      this.#flush ??= setImmediate(() => this.#send());
    });
  }

  #send(): void {
    this.#flush = undefined;
    const requests = this.#queue;
    this.#queue = [];
    if (requests.length === 0) return;
    // The channel is closed (primary gone): fail now rather than at the timeout.
    const fail = (err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      for (const { id } of requests) {
        this.#pending.get(id)?.reject(error);
        this.#pending.delete(id);
      }
    };
    if (this.channel.connected === false) return fail(new Error('the IPC channel to the gateway primary is closed'));
    try {
      this.channel.send!.call(this.channel, { aegis: 'rate-batch', requests }, undefined, undefined, (err) => {
        if (err) fail(err);
      });
    } catch (err) {
      fail(err);
    }
  }

  #answer(message: unknown): void {
    if (!isRateReplies(message)) return;
    for (const reply of message.replies) {
      const pending = this.#pending.get(reply.id);
      if (!pending) continue;
      this.#pending.delete(reply.id);
      if ('error' in reply) pending.reject(new Error(reply.error));
      else pending.resolve(reply.result);
    }
  }

  #expire(now: number): void {
    for (const [id, pending] of this.#pending) {
      if (now - pending.sent < this.timeoutMs) continue;
      this.#pending.delete(id);
      pending.reject(new Error(`the gateway primary did not answer within ${this.timeoutMs} ms`));
    }
  }
}

/** The primary's side: answers one worker's batch from the shared in-memory state, in order. */
export function answerRateBatch(state: MemoryRateState, batch: RateBatch): RateReplies {
  return { aegis: 'rate-replies', replies: batch.requests.map((request) => answerRateRequest(state, request)) };
}

/** Answers one request of a batch. */
export function answerRateRequest(state: MemoryRateState, request: RateRequest): RateReply {
  try {
    switch (request.op) {
      case 'hit':
        return { aegis: 'rate-reply', id: request.id, result: state.hit(request.key, request.windowMs, request.now) };
      case 'deniedUntil':
        return { aegis: 'rate-reply', id: request.id, result: state.deniedUntil(request.keys, request.now) };
      case 'deny':
        state.deny(request.key, request.deny);
        return { aegis: 'rate-reply', id: request.id, result: null };
    }
  } catch (err) {
    return { aegis: 'rate-reply', id: request.id, error: errorMessage(err) };
  }
}
