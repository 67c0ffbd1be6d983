// The source id that marks what this config owns: --source, else AEGIS_SOURCE, else the git remote
// of the config directory's repository, else the directory's name.
import { execFile } from 'node:child_process';
import { basename, resolve } from 'node:path';
import { promisify } from 'node:util';
import { normaliseSource } from '../plan/ownership.ts';

const run = promisify(execFile);

async function gitRemote(dir: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['-C', dir, 'config', '--get', 'remote.origin.url'], { timeout: 5000 });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function resolveSource(explicit: string | undefined, dir: string): Promise<string> {
  const raw = explicit ?? process.env.AEGIS_SOURCE ?? (await gitRemote(dir)) ?? basename(resolve(dir));
  return normaliseSource(raw);
}
