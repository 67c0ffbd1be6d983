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

/** Thread → parent. */
export type ThreadMessage =
  | { type: 'progress'; fraction: number }
  | { type: 'result'; value: unknown }
  | { type: 'error'; name: string; message: string; stack: string | undefined };

/** Parent → thread. */
export type ParentMessage = { type: 'run'; exportName: string; input: unknown } | { type: 'abort' } | { type: 'warm'; exportName?: string | undefined };

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

/** What one task needs besides the module (a thread serves one module). */
export type TaskOptions = Pick<ThreadTask<unknown>, 'signal' | 'onProgress' | 'graceMs'>;

/**
 * One worker thread serving one module, one task at a time. It stays usable after a task that
 * returned or threw; after an abort it is terminated (once its grace period is over) and is never
 * used again.
 */
class JobThread {
  readonly #worker: Worker;
  #busy = false;
  #dead = false;
  #current: { settle: (outcome: () => void) => void; reject: (err: unknown) => void; onProgress?: ((f: number) => void) | undefined; resolve: (value: unknown) => void } | undefined;
  /** After an abort, progress a cooperative function still reports while it stops. */
  #stopping: ((f: number) => void) | undefined;

  constructor(readonly module: string, resourceLimits?: ResourceLimits, private readonly onGone?: (thread: JobThread) => void) {
    this.#worker = new Worker(BOOTSTRAP, { workerData: { module }, ...(resourceLimits ? { resourceLimits } : {}) });
    this.#worker.on('message', (message: ThreadMessage) => {
      const task = this.#current;
      if (message.type === 'progress') (task ? task.onProgress : this.#stopping)?.(message.fraction);
      else if (message.type === 'result') task?.settle(() => task.resolve(message.value));
      else task?.settle(() => task.reject(new ThreadError(message.name, message.message, message.stack)));
    });
    this.#worker.on('error', (err) => this.#die(err));
    this.#worker.on('exit', (code) => this.#die(new Error(`job thread exited with code ${code} before returning a result`)));
  }

  get idle(): boolean {
    return !this.#busy && !this.#dead;
  }

  /** Loads the module now (and runs its `exportName`, without input, to prepare), so the first task does not wait for it. */
  warm(exportName?: string): void {
    this.#worker.postMessage({ type: 'warm', exportName } satisfies ParentMessage);
  }

  /** An idle thread does not keep the process alive. */
  hold(held: boolean): void {
    if (held) this.#worker.ref();
    else this.#worker.unref();
  }

  run<O>(exportName: string, input: unknown, options: TaskOptions): Promise<O> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!this.idle) return Promise.reject(new Error('job thread is busy or gone'));
    this.#busy = true;
    return new Promise<O>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        this.#current = undefined;
        this.#busy = false;
        outcome();
      };
      const onAbort = () => {
        // Reject at once: the caller learns of the abort now, the thread gets its grace period.
        this.#dead = true;
        this.#stopping = options.onProgress;
        settle(() => reject(signal?.reason));
        this.#worker.postMessage({ type: 'abort' } satisfies ParentMessage);
        setTimeout(() => void this.terminate(), options.graceMs ?? 200).unref();
        this.onGone?.(this);
      };
      this.#current = { settle, reject, resolve: (value) => resolve(value as O), onProgress: options.onProgress };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#worker.postMessage({ type: 'run', exportName, input } satisfies ParentMessage);
    });
  }

  async terminate(): Promise<void> {
    this.#dead = true;
    await this.#worker.terminate();
  }

  #die(err: unknown): void {
    const task = this.#current;
    this.#dead = true;
    task?.settle(() => task.reject(err));
    this.onGone?.(this);
  }
}

/** Runs one task in a thread of its own, terminated afterwards. */
export function runInThread<O, I = unknown>(task: ThreadTask<I>): Promise<O> {
  if (task.signal?.aborted) return Promise.reject(task.signal.reason);
  const module = moduleHref(task.module);
  const thread = new JobThread(module, task.resourceLimits);
  // Whatever the function left behind (timers, sockets) must not keep the thread alive; an aborted
  // task's thread is terminated when its grace period ends.
  return thread.run<O>(task.exportName, task.input, task).finally(() => {
    if (!task.signal?.aborted) void thread.terminate();
  });
}

function moduleHref(module: URL | string): string {
  const href = typeof module === 'string' ? module : module.href;
  if (!href.startsWith('file:')) throw new Error(`a job thread needs a file: URL, got ${href}`);
  return href;
}

/**
 * Threads for one module, kept after their task: a scan no longer pays for starting a thread and
 * loading (and compiling) the scanners each time. Idle threads stay `idleMs`, then end; they never
 * keep the process alive. A thread whose task was aborted is not reused.
 */
export class ThreadPool {
  readonly #module: string;
  readonly #idle = new Set<JobThread>();
  readonly #timers = new Map<JobThread, NodeJS.Timeout>();
  readonly #all = new Set<JobThread>();

  constructor(module: URL | string, private readonly options: { idleMs?: number } = {}) {
    this.#module = moduleHref(module);
  }

  /** Starts a thread and loads the module in it (then runs `exportName` there, e.g. to compile rules), ready for the first task. */
  warm(exportName?: string): void {
    if (this.#all.size > 0) return;
    const thread = this.#spawn();
    thread.warm(exportName);
    this.#park(thread);
  }

  async run<O>(exportName: string, input: unknown, options: TaskOptions = {}): Promise<O> {
    if (options.signal?.aborted) throw options.signal.reason;
    const thread = this.#take();
    thread.hold(true);
    try {
      return await thread.run<O>(exportName, input, options);
    } finally {
      if (thread.idle) this.#park(thread);
    }
  }

  async close(): Promise<void> {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#idle.clear();
    await Promise.all([...this.#all].map((t) => t.terminate()));
    this.#all.clear();
  }

  #spawn(): JobThread {
    const thread = new JobThread(this.#module, undefined, (gone) => this.#forget(gone));
    this.#all.add(thread);
    return thread;
  }

  #take(): JobThread {
    for (const thread of this.#idle) {
      this.#idle.delete(thread);
      clearTimeout(this.#timers.get(thread));
      this.#timers.delete(thread);
      if (thread.idle) return thread;
    }
    return this.#spawn();
  }

  #park(thread: JobThread): void {
    thread.hold(false);
    this.#idle.add(thread);
    const timer = setTimeout(() => {
      this.#forget(thread);
      void thread.terminate();
    }, this.options.idleMs ?? 60_000);
    timer.unref();
    this.#timers.set(thread, timer);
  }

  #forget(thread: JobThread): void {
    this.#idle.delete(thread);
    clearTimeout(this.#timers.get(thread));
    this.#timers.delete(thread);
    this.#all.delete(thread);
  }
}
