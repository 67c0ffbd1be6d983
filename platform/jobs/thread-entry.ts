// Runs inside a job thread: loads its module once (at the first task, or when asked to warm up),
// then runs one task at a time — the named export with the input — and reports progress, the result
// or the error to the parent (./thread-runner.ts). The thread lives until the parent terminates it,
// so a pooled thread keeps what its module compiled (rule sets, parsers) for the next task.
import { parentPort, workerData } from 'node:worker_threads';
import type { ParentMessage, ThreadFunction, ThreadMessage } from './thread-runner.ts';

const port = parentPort;
if (!port) throw new Error('thread-entry runs only in a worker thread');
const { module } = workerData as { module: string };
const post = (message: ThreadMessage) => port.postMessage(message);

let loading: Promise<Record<string, unknown>> | undefined;
const load = () => (loading ??= import(module) as Promise<Record<string, unknown>>);
/** The warm-up the parent asked for; tasks start after it (a failed warm-up only costs its time). */
let warming: Promise<unknown> = Promise.resolve();
let current: AbortController | undefined;

async function run(exportName: string, input: unknown): Promise<void> {
  const controller = new AbortController();
  current = controller;
  try {
    await warming;
    const fn = (await load())[exportName];
    if (typeof fn !== 'function') throw new Error(`${module} has no function export "${exportName}"`);
    // Aborted while the module loaded: the parent has given up already.
    controller.signal.throwIfAborted();
    const value = await (fn as ThreadFunction<unknown, unknown>)(input, {
      signal: controller.signal,
      progress: (fraction) => post({ type: 'progress', fraction }),
    });
    post({ type: 'result', value });
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    post({ type: 'error', name: error.name, message: error.message, stack: error.stack });
  } finally {
    current = undefined;
  }
}

port.on('message', (message: ParentMessage) => {
  if (message.type === 'abort') current?.abort(new Error('aborted by the parent'));
  else if (message.type === 'warm') {
    const { exportName } = message;
    // A broken module fails the first task instead.
    warming = load()
      .then((loaded) => (exportName && typeof loaded[exportName] === 'function' ? (loaded[exportName] as () => unknown)() : undefined))
      .catch(() => undefined);
  }
  else void run(message.exportName, message.input);
});
