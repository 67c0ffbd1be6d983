// Runs an async task every `intervalMs`, one run at a time: the next run is timed from the end of
// the previous one, so a slow run never overlaps the next. stop() waits for a run in progress.
export class Ticker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): this {
    const run = () => {
      if (this.stopped) return;
      this.running = this.task()
        .catch(this.onError)
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) {
            this.timer = setTimeout(run, this.intervalMs);
            this.timer.unref();
          }
        });
    };
    run();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
