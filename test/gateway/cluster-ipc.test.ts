// The cluster's rate-limit state without Redis: workers (IpcRateState) ask the primary, which answers
// from one MemoryRateState (answerRateRequest). Here the IPC channel is an in-process pair of
// emitters that delivers asynchronously, as process.send does; the primary's side is the real code.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { IpcRateState, answerRateBatch, answerRateRequest, isRateBatch, type IpcChannel, type RateBatch } from '../../gateway/cluster/ipc-rate-state.ts';
import { workerExecArgv } from '../../gateway/cluster/primary.ts';
import { MemoryRateState } from '../../gateway/state/memory-rate-state.ts';
import { slidingCount } from '../../gateway/state/rate-state.ts';

/** N workers' channels to one primary holding one state. */
function primaryWith(workers: number, options: { answer?: boolean } = {}) {
  const state = new MemoryRateState();
  const seen: RateBatch[] = [];
  const channels = Array.from({ length: workers }, () => {
    const emitter = new EventEmitter();
    const channel: IpcChannel = {
      send(message) {
        seen.push(message);
        if (options.answer !== false && isRateBatch(message)) setImmediate(() => emitter.emit('message', answerRateBatch(state, message)));
        return true;
      },
      on: (event, listener) => emitter.on(event, listener),
      off: (event, listener) => emitter.off(event, listener),
    };
    return { channel, emitter };
  });
  return { state, seen, channels };
}

describe('IpcRateState', () => {
  it('spends one budget across workers', async () => {
    const { state, seen, channels } = primaryWith(2);
    const workers = channels.map(({ channel }) => new IpcRateState(channel));
    const now = 60_000 * 1000 + 5_000;
    const counts = await Promise.all(Array.from({ length: 30 }, (_, i) => workers[i % 2]!.hit('rule:1.2.3.4', 60_000, now)));
    // Asked in one turn of the event loop: one message per worker, fifteen requests in each.
    expect(seen.map((batch) => batch.requests.length)).toEqual([15, 15]);
    // Every hit counted once, in the one state: the currents are 1…30, whichever worker asked.
    expect(counts.map((c) => c.current).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(slidingCount(state.hit('rule:1.2.3.4', 60_000, now), 60_000, now)).toBe(31);
    for (const w of workers) await w.close();
    await state.close();
  });

  it('shares standing denies', async () => {
    const { state, channels } = primaryWith(2);
    const [a, b] = channels.map(({ channel }) => new IpcRateState(channel));
    expect(await b!.deniedUntil([], 1_000)).toBeNull();
    await a!.deny('ip:1.2.3.4', { until: 10_000, ruleId: 'r1' });
    expect(await b!.deniedUntil(['ip:5.6.7.8', 'ip:1.2.3.4'], 1_000)).toEqual({ until: 10_000, ruleId: 'r1' });
    expect(await b!.deniedUntil(['ip:1.2.3.4'], 20_000)).toBeNull();
    await a!.close();
    await b!.close();
    await state.close();
  });

  it('ignores messages that are not its replies, and matches replies to requests by id', async () => {
    const { state, channels } = primaryWith(1);
    const { channel, emitter } = channels[0]!;
    const worker = new IpcRateState(channel);
    const pending = worker.hit('k', 1_000, 5_500);
    emitter.emit('message', { cmd: 'NODE_CLUSTER', act: 'something' });
    emitter.emit('message', { aegis: 'rate-replies', replies: [{ aegis: 'rate-reply', id: 999, result: { current: 42, previous: 0 } }] });
    expect(await pending).toEqual({ current: 1, previous: 0 });
    await worker.close();
    await state.close();
  });

  it('rejects when the primary does not answer in time, and on close', async () => {
    const { channels } = primaryWith(1, { answer: false });
    const worker = new IpcRateState(channels[0]!.channel, 100);
    await expect(worker.hit('k', 1_000, 0)).rejects.toThrow(/did not answer within 100 ms/);
    const pending = worker.deniedUntil(['k'], 0);
    await worker.close();
    await expect(pending).rejects.toThrow(/closed/);
  });

  it('rejects at once without a channel to send on', async () => {
    const emitter = new EventEmitter();
    const worker = new IpcRateState({ on: (e, l) => emitter.on(e, l), off: (e, l) => emitter.off(e, l) });
    await expect(worker.deny('k', { until: 1, ruleId: 'r' })).rejects.toThrow(/no IPC channel/);
    await worker.close();
  });

  it('rejects at once once the channel has closed, or when a send fails', async () => {
    const emitter = new EventEmitter();
    const channel: IpcChannel = { connected: false, send: () => true, on: (e, l) => emitter.on(e, l), off: (e, l) => emitter.off(e, l) };
    const worker = new IpcRateState(channel);
    await expect(worker.hit('k', 1_000, 0)).rejects.toThrow(/closed/);
    channel.connected = true;
    channel.send = (_message, _handle, _options, callback) => {
      setImmediate(() => callback?.(new Error('channel closed')));
      return false;
    };
    await expect(worker.hit('k', 1_000, 0)).rejects.toThrow(/channel closed/);
    await worker.close();
  });

  it('answers an error instead of throwing in the primary', () => {
    const state = new MemoryRateState();
    const broken = { hit: () => { throw new Error('boom'); } } as unknown as MemoryRateState;
    expect(answerRateRequest(broken, { aegis: 'rate', id: 7, op: 'hit', key: 'k', windowMs: 1, now: 0 })).toEqual({ aegis: 'rate-reply', id: 7, error: 'boom' });
    void state.close();
  });
});

describe('workerExecArgv', () => {
  it("keeps Node's options but not a command-line script, which would run in every worker", () => {
    expect(workerExecArgv(['--input-type=module', '-e', 'main()', '--enable-source-maps'])).toEqual(['--enable-source-maps']);
    expect(workerExecArgv(['--import', 'tsx', '--eval=x', '-p', '1', '--max-old-space-size=512'])).toEqual(['--import', 'tsx', '--max-old-space-size=512']);
  });
});
