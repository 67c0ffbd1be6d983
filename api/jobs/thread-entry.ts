// Runs inside a job thread: loads the requested module, calls the named export with the input and
// reports progress, the result or the error to the parent (./thread-runner.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { ThreadFunction, ThreadMessage, ThreadRequest } from './thread-runner.ts';

const port = parentPort;
if (!port) throw new Error('thread-entry runs only in a worker thread');
const request = workerData as ThreadRequest;
const controller = new AbortController();
port.on('message', (message: { type: 'abort' }) => {
  if (message.type === 'abort') controller.abort(new Error('aborted by the parent'));
});
const post = (message: ThreadMessage) => port.postMessage(message);

try {
  const loaded = (await import(request.module)) as Record<string, unknown>;
  const fn = loaded[request.exportName];
  if (typeof fn !== 'function') throw new Error(`${request.module} has no function export "${request.exportName}"`);
  // Aborted while the module loaded: the parent has given up already.
  controller.signal.throwIfAborted();
  const value = await (fn as ThreadFunction<unknown, unknown>)(request.input, {
    signal: controller.signal,
    progress: (fraction) => post({ type: 'progress', fraction }),
  });
  post({ type: 'result', value });
} catch (err) {
  const error = err instanceof Error ? err : new Error(String(err));
  post({ type: 'error', name: error.name, message: error.message, stack: error.stack });
} finally {
  // The parent may still want to send an abort; nothing else keeps this thread alive once done.
  port.close();
}
