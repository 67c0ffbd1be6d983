// Runs a CPU-heavy function in a node:worker_threads thread so that it never blocks the event loop
// the API, the gateway and the job heartbeats share. The function is named by module and export
// (a function itself cannot cross threads); input and result must survive structured cloning.
//
// Abort: the thread's own signal is aborted first, so a cooperative function can stop cleanly;
// after `graceMs` the thread is terminated, which stops even a tight loop that never looks.
//
// TypeScript in threads: a new thread starts with Node's bare loader, not tsx, so the thread runs
// ./thread-bootstrap.mjs, which registers tsx and then loads ./thread-entry.ts. This works the same
// under `aegis` (tsx), vitest and plain Node.
import { Worker, type ResourceLimits } from 'node:worker_threads';

/** What a module exports for a thread to run. */
export type ThreadFunction<I, O> = (input: I, ctx: { signal: AbortSignal; progress(fraction: number): void }) => O | Promise<O>;

export interface ThreadRequest {
  /** file: URL of the module. */
  module: string;
  exportName: string;
  input: unknown;
}

export type ThreadMessage =
  | { type: 'progress'; fraction: number }
  | { type: 'result'; value: unknown }
  | { type: 'error'; name: string; message: string; stack: string | undefined };

export interface ThreadTask<I> {
  /** The module, as a file: URL (e.g. `new URL('./scan-thread.ts', import.meta.url)`). */
  module: URL | string;
  exportName: string;
  input: I;
  signal?: AbortSignal | undefined;
  onProgress?: ((fraction: number) => void) | undefined;
  /** Time a cooperative function gets to stop after an abort before the thread is terminated (default 200 ms). */
  graceMs?: number | undefined;
  resourceLimits?: ResourceLimits | undefined;
}

const BOOTSTRAP = new URL('./thread-bootstrap.mjs', import.meta.url);

/** An error the thread threw, rebuilt in this thread with its name, message and stack. */
export class ThreadError extends Error {
  constructor(name: string, message: string, stack: string | undefined) {
    super(message);
    this.name = name;
    if (stack) this.stack = stack;
  }
}

export function runInThread<O, I = unknown>(task: ThreadTask<I>): Promise<O> {
  const { signal } = task;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const module = typeof task.module === 'string' ? task.module : task.module.href;
  if (!module.startsWith('file:')) return Promise.reject(new Error(`runInThread needs a file: URL, got ${module}`));
  const request: ThreadRequest = { module, exportName: task.exportName, input: task.input };
  return new Promise<O>((resolve, reject) => {
    const thread = new Worker(BOOTSTRAP, { workerData: request, ...(task.resourceLimits ? { resourceLimits: task.resourceLimits } : {}) });
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      outcome();
    };
    const onAbort = () => {
      // Reject at once: the caller learns of the abort now, the thread gets its grace period.
      finish(() => reject(signal?.reason));
      thread.postMessage({ type: 'abort' });
      killTimer = setTimeout(() => void thread.terminate(), task.graceMs ?? 200);
      killTimer.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.on('message', (message: ThreadMessage) => {
      if (message.type === 'progress') task.onProgress?.(message.fraction);
      else {
        // Whatever the function left behind (timers, sockets) must not keep the thread alive.
        void thread.terminate();
        if (message.type === 'result') finish(() => resolve(message.value as O));
        else finish(() => reject(new ThreadError(message.name, message.message, message.stack)));
      }
    });
    thread.on('error', (err) => finish(() => reject(err)));
    thread.on('exit', (code) => {
      if (killTimer) clearTimeout(killTimer);
      finish(() => reject(new Error(`job thread exited with code ${code} before returning a result`)));
    });
  });
}
