// Child processes of the chaos run: spawned with their output kept (the last 64 KiB, for a failure
// message), awaited on a printed line rather than a sleep, and killed by pid only — never by name.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const KEEP = 64 * 1024;

export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** What it printed (stdout and stderr together), the most recent 64 KiB. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first or `timeoutMs` passes. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (or signal) once it has exited. */
  readonly exited: Promise<string>;
  alive(): boolean;
}

export function startProc(name: string, command: string, args: readonly string[], options: SpawnOptions = {}): Proc {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  let text = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-KEEP);
    for (const notify of listeners) notify();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  let done = false;
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      for (const notify of listeners) notify();
      resolve(signal ?? String(code));
    }),
  );
  const pid = child.pid;
  return {
    name,
    child,
    pid,
    output: () => text,
    exited,
    alive: () => !done,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) return finish(() => resolve(match));
          if (done) finish(() => reject(new Error(`${name} exited before printing ${pattern}:\n${text.slice(-4000)}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`${name} did not print ${pattern} within ${timeoutMs} ms:\n${text.slice(-4000)}`))), timeoutMs);
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Sends `signal` to a pid if it still exists; true when it was delivered. */
export function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs` if it is still there. */
export async function stopProc(proc: Proc, graceMs = 5_000): Promise<void> {
  if (!proc.alive()) return;
  signalPid(proc.pid, 'SIGTERM');
  const timer = setTimeout(() => signalPid(proc.pid, 'SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

/** kill -9 and wait until the kernel has reaped it. */
export async function killProc(proc: Proc): Promise<void> {
  signalPid(proc.pid, 'SIGKILL');
  await proc.exited;
}

/** Runs a command to completion; rejects with its output on a non-zero exit. */
export async function runCommand(name: string, command: string, args: readonly string[], options: SpawnOptions = {}, timeoutMs = 60_000): Promise<string> {
  const proc = startProc(name, command, args, options);
  const timer = setTimeout(() => signalPid(proc.pid, 'SIGKILL'), timeoutMs);
  const status = await proc.exited;
  clearTimeout(timer);
  if (status !== '0') throw new Error(`${name} failed (${status}):\n${proc.output().slice(-4000)}`);
  return proc.output();
}
