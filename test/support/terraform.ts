// The real terraform binary in a scratch copy of a configuration, with the Aegis provider installed
// from this checkout and credentials pointing at a test server.
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { installProvider } from '../../provider/install/install.ts';

export interface TerraformRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface TerraformWorkspace {
  /** The copied configuration's directory. */
  dir: string;
  run(...args: string[]): Promise<TerraformRun>;
  remove(): void;
}

/** Copies `config` to a scratch directory and runs terraform there against `apiUrl` with `apiKey`. Throws when terraform is missing. */
export function terraformWorkspace(config: string, apiUrl: string, apiKey: string): TerraformWorkspace {
  const version = spawnSync('terraform', ['version'], { encoding: 'utf8', env: { ...process.env, CHECKPOINT_DISABLE: '1' } });
  if (version.error || version.status !== 0) throw new Error('These tests need the `terraform` binary on PATH; it was not found or did not run.');
  const root = mkdtempSync(join(tmpdir(), 'aegis-tf-'));
  const dir = join(root, 'work');
  cpSync(config, dir, { recursive: true });
  const installed = installProvider({ dir: join(root, 'mirror') });
  const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1', TF_CLI_CONFIG_FILE: installed.configFile, AEGIS_API_URL: apiUrl, AEGIS_API_KEY: apiKey };
  delete env.TF_PLUGIN_CACHE_DIR;
  delete env.TF_LOG;
  return {
    dir,
    // Asynchronous on purpose: the API server runs in the test's process, so a blocking spawn
    // would leave the provider's requests unanswered.
    run: (...args) =>
      new Promise((resolve) => {
        execFile('terraform', [...args, '-no-color'], { cwd: dir, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
          resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        });
      }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** `terraform init` and `apply`, creating `resources` objects; an immediate plan then has no changes. */
export async function applyClean(tf: TerraformWorkspace, resources: number): Promise<void> {
  const init = await tf.run('init');
  expect(init.status, init.stderr + init.stdout).toBe(0);
  const apply = await tf.run('apply', '-auto-approve');
  expect(apply.status, apply.stderr + apply.stdout).toBe(0);
  expect(apply.stdout).toMatch(new RegExp(`Apply complete! Resources: ${resources} added, 0 changed, 0 destroyed`));
  const plan = await tf.run('plan', '-detailed-exitcode');
  expect(plan.status, plan.stdout + plan.stderr).toBe(0);
}
