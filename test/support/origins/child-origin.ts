// An echo origin in a child process (Flask, PHP): started, then waited on until it prints the line
// that says it listens — never a fixed sleep — and stopped by its own pid on close().
import { spawn, type ChildProcess } from 'node:child_process';
import type { EchoOrigin } from './index.ts';

export interface ChildOriginSpec {
  framework: string;
  command: string;
  args: string[];
  cwd: string;
  /** Reads the port from what the process has printed so far (stdout and stderr), once it is there. */
  ready: (output: string) => number | null;
  timeoutMs?: number;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function startChildOrigin(spec: ChildOriginSpec): Promise<EchoOrigin> {
  const child = spawn(spec.command, spec.args, { cwd: spec.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  let output = '';
  return new Promise<EchoOrigin>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop(child).then(() => reject(new Error(`${spec.framework} origin (${spec.command} ${spec.args.join(' ')}): ${reason}\n${output}`)));
    };
    const timer = setTimeout(() => fail('not ready in time'), spec.timeoutMs ?? 20_000);
    const collect = (chunk: Buffer) => {
      // Once ready, output is only drained (PHP logs every request to stderr).
      if (settled) return;
      output += chunk.toString('utf8');
      const port = spec.ready(output);
      if (port === null) return;
      settled = true;
      clearTimeout(timer);
      resolve({ framework: spec.framework, url: `http://127.0.0.1:${port}`, close: () => stop(child) });
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before it was ready`));
  });
}
