// Runs another language's SDK test suite (pytest, go test) from vitest, so that CI's passes run
// them next to everything else. Each suite starts its own real server (sdks/testing/serve.ts).
// A missing toolchain skips the suite here, visibly, but fails it under AEGIS_REQUIRE_SDK_TOOLS=1
// (.ci/run sets it after installing Debian's python3-pytest and golang-go).
import { execFileSync, spawn } from 'node:child_process';

export const REQUIRE_SDK_TOOLS = process.env.AEGIS_REQUIRE_SDK_TOOLS === '1';

/** The first of `candidates` for which `probe` succeeds. */
export function findTool(candidates: string[], probe: string[]): string | undefined {
  for (const candidate of candidates) {
    try {
      execFileSync(candidate, probe, { stdio: 'ignore', timeout: 30_000 });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export interface SuiteRun {
  code: number | null;
  output: string;
}

/** Runs a command to completion, collecting its output (both streams, interleaved). */
export function runSuite(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => (output += chunk.toString('utf8'));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
