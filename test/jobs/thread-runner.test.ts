// CPU-heavy work in a worker thread: TypeScript modules load there, the event loop of the caller
// stays free, aborting terminates even a loop that never checks its signal, errors come back.
import { describe, expect, it } from 'vitest';
import { runInThread, ThreadError, ThreadPool } from '../../platform/jobs/thread-runner.ts';

const CPU = new URL('./fixtures/cpu.ts', import.meta.url);

describe('runInThread', () => {
  it('runs a TypeScript export in a thread, reports progress, and leaves the event loop free meanwhile', async () => {
    const progress: number[] = [];
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    try {
      const result = await runInThread<{ turns: number; typed: string }>({ module: CPU, exportName: 'burn', input: { ms: 600 }, onProgress: (f) => progress.push(f) });
      expect(result.typed).toBe('loaded as TypeScript');
      expect(result.turns).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
    expect(progress.length).toBeGreaterThanOrEqual(2);
    // On this thread the 600 ms burn would have allowed no tick at all.
    expect(ticks).toBeGreaterThan(10);
  });

  it('an abort rejects at once and terminates a thread that never looks at its signal', async () => {
    const controller = new AbortController();
    const running = runInThread({ module: CPU, exportName: 'spin', input: null, signal: controller.signal, graceMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reason = new Error('canceled');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
  });

  it('a cooperative function sees its own signal aborted', async () => {
    const controller = new AbortController();
    const progress: number[] = [];
    const running = runInThread({ module: CPU, exportName: 'cooperative', input: null, signal: controller.signal, graceMs: 2_000, onProgress: (f) => progress.push(f) });
    await expect.poll(() => progress, { timeout: 10_000 }).toEqual([0]);
    controller.abort(new Error('stop'));
    await expect(running).rejects.toThrow('stop');
    await expect.poll(() => progress).toEqual([0, 1]);
  });

  it('an error thrown in the thread comes back with its name and message', async () => {
    const error = await runInThread({ module: CPU, exportName: 'explode', input: { message: 'out of range' } }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ThreadError);
    expect(error).toMatchObject({ name: 'RangeError', message: 'out of range' });
    await expect(runInThread({ module: CPU, exportName: 'missing', input: null })).rejects.toThrow('has no function export "missing"');
  });

  it('an already aborted signal never starts a thread', async () => {
    await expect(runInThread({ module: CPU, exportName: 'burn', input: { ms: 10 }, signal: AbortSignal.abort(new Error('no')) })).rejects.toThrow('no');
  });
});

describe('ThreadPool', () => {
  it('keeps its thread between tasks (what the module loaded stays), also after a task that threw', async () => {
    const pool = new ThreadPool(CPU);
    try {
      pool.warm();
      expect(await pool.run<number>('countCalls', null)).toBe(1);
      expect(await pool.run<number>('countCalls', null)).toBe(2);
      await expect(pool.run('explode', { message: 'bad input' })).rejects.toThrow('bad input');
      expect(await pool.run<number>('countCalls', null)).toBe(3);
    } finally {
      await pool.close();
    }
  });

  it('runs tasks side by side in separate threads, and never reuses a thread whose task was aborted', async () => {
    const pool = new ThreadPool(CPU);
    try {
      const [a, b] = await Promise.all([pool.run<{ turns: number }>('burn', { ms: 200 }), pool.run<{ turns: number }>('burn', { ms: 200 })]);
      expect(a.turns).toBeGreaterThan(0);
      expect(b.turns).toBeGreaterThan(0);
      // After close the pool starts over: one thread, which counts once; the spin takes it and the abort retires it.
      await pool.close();
      expect(await pool.run<number>('countCalls', null)).toBe(1);
      const controller = new AbortController();
      const spinning = pool.run('spin', null, { signal: controller.signal, graceMs: 50 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort(new Error('canceled'));
      await expect(spinning).rejects.toThrow('canceled');
      // A fresh thread (its count starts again), not the one still spinning.
      expect(await pool.run<number>('countCalls', null)).toBe(1);
    } finally {
      await pool.close();
    }
  });
});

