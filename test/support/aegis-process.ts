// `aegis` as a child process that a test waits on until it says it is ready (a line of its output),
// never for a fixed time. Start-up of a process that loads the TypeScript sources takes a second or
// two on an idle machine and far longer on a loaded 2-core one, so the bounds here are generous:
// they only end a test whose process hangs, and say what it printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const AEGIS = resolve('bin/aegis.mjs');

/** How long a process may take to print its ready line before the test gives up on it. */
export const START_TIMEOUT_MS = 150_000;

/**
 * The vitest timeout of a test that starts `aegis` processes: the start-up bound plus the test's own
 * work. Tests starting several processes one after the other pass a multiple.
 */
export const PROCESS_TEST_TIMEOUT_MS = 180_000;

export interface RunningAegis {
  child: ChildProcess;
  /** The ready line's match. */
  match: RegExpExecArray;
  /** Everything printed so far (stdout and stderr). */
  output: () => string;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

export interface StartOptions {
  /** The command line before `args` (default: bin/aegis.mjs). */
  command?: string[];
  /** Called with the process at once, so that a caller can always stop it. */
  spawned?: (child: ChildProcess) => void;
  /** Called on every chunk of output, for lines printed after the ready one. */
  onOutput?: (output: string) => void;
  timeoutMs?: number;
}

/** `aegis ARGS` with `env` over this process's, resolved once its output matches `ready`. */
export function startAegis(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, options: StartOptions = {}): Promise<RunningAegis> {
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  const child = spawn(process.execPath, [...(options.command ?? [AEGIS]), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  options.spawned?.(child);
  let output = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolvePromise, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      child.kill('SIGTERM');
      reject(new Error(`aegis ${args.join(' ')} printed no ready line (${ready}) within ${timeoutMs / 1000} s: ${output}`));
    }, timeoutMs);
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      options.onOutput?.(output);
      const match = ready.exec(output);
      if (done || !match) return;
      done = true;
      clearTimeout(timer);
      resolvePromise({ child, match, output: () => output, exited });
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      options.onOutput?.(output);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      if (done) return;
      done = true;
      reject(new Error(`aegis ${args.join(' ')} exited with ${code} before it was ready: ${output}`));
    });
  });
}

/** SIGTERM, and its exit code once it has exited (at once when it already has). */
export async function stopAegis(running: RunningAegis | undefined): Promise<number | null> {
  if (!running) return null;
  if (running.child.exitCode !== null || running.child.signalCode !== null) return running.child.exitCode;
  running.child.kill('SIGTERM');
  return running.exited;
}
