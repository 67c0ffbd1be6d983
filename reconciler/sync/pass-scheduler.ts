// Runs reconcile passes strictly one at a time. Two passes at once could both plan from the same
// live state and apply twice; so requests that arrive while a pass runs are only remembered, and
// however many arrive, exactly one more pass follows. A file pass applies everything, so it also
// stands in for a drift check that was waiting.
export type PassKind = 'files' | 'drift';

export interface PassScheduler {
  request(kind: PassKind): void;
  /** Resolves once no pass is running or waiting. */
  settled(): Promise<void>;
  /** Takes no more requests; resolves when the running pass (if any) is over. */
  close(): Promise<void>;
}

/** `run` must not throw (it reports its own errors); `onIdle` is called each time the last pass ends. */
export function passScheduler(run: (kind: PassKind) => Promise<void>, onIdle: () => void): PassScheduler {
  const waiting = new Set<PassKind>();
  let running: Promise<void> | null = null;
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  const next = (): void => {
    if (running || closed) return;
    const kind: PassKind | undefined = waiting.has('files') ? 'files' : waiting.has('drift') ? 'drift' : undefined;
    if (!kind) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
      onIdle();
      return;
    }
    waiting.clear();
    running = run(kind).finally(() => {
      running = null;
      next();
    });
  };

  return {
    request(kind) {
      if (closed) return;
      waiting.add(kind);
      next();
    },
    settled() {
      if (!running && waiting.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      closed = true;
      waiting.clear();
      await running;
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    },
  };
}
