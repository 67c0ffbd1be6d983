// The source id that marks what a config directory owns (reconciler/plan/ownership.ts). Resolved the
// same way by validate, plan, apply, watch and `serve --config-dir`, first match wins:
//   1. --source NAME
//   2. AEGIS_SOURCE (ignored when empty)
//   3. `source:` in the directory's project file, aegis.yaml (reconciler/project/project-file.ts)
//   4. the git remote (remote.origin.url) of the directory's repository
//   5. the directory's name
// For a Terraform JSON file (`--terraform-json FILE`), the directory is the file's directory.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { normaliseSource } from '../plan/ownership.ts';
import { readProjectFile } from '../project/project-file.ts';

const run = promisify(execFile);

async function gitRemote(dir: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', ['-C', dir, 'config', '--get', 'remote.origin.url'], { timeout: 5000 });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A usage mistake the command line catches before doing anything: printed with a pointer to --help, exit 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The config a command reads: the DIR (or FILE) argument or --terraform-json FILE, not both. */
export function configPath(path: string | undefined, options: { terraformJson?: string | undefined }): string {
  if (path !== undefined && options.terraformJson !== undefined) throw new UsageError('give either DIR or --terraform-json FILE, not both');
  const chosen = options.terraformJson ?? path;
  if (chosen === undefined) throw new UsageError('missing the config: DIR or --terraform-json FILE');
  return chosen;
}

/** The directory a config path stands for: itself, or a file's directory (a Terraform JSON file). */
export async function configDirOf(path: string): Promise<string> {
  try {
    return (await stat(path)).isDirectory() ? path : dirname(path);
  } catch {
    return path;
  }
}

export async function resolveSource(explicit: string | undefined, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const raw =
    (explicit || undefined) ??
    (env.AEGIS_SOURCE || undefined) ??
    (await readProjectFile(dir))?.source ??
    (await gitRemote(dir)) ??
    basename(resolve(dir));
  return normaliseSource(raw);
}
