// End to end with the real terraform binary: the echo test provider is installed into a
// filesystem mirror (as `aegis provider install` does) and driven through init, apply, a no-op
// plan, an update, a validation error and destroy.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installProvider } from '../../provider/install/install.ts';

const LAUNCHER = fileURLToPath(new URL('./fixtures/terraform-provider-echo', import.meta.url));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function config(name: string, weight: string): string {
  return `
terraform {
  required_providers {
    aegis = { source = "aegis/aegis" }
  }
}
provider "aegis" {}
resource "aegis_echo" "a" {
  name   = "${name}"
  secret = "s3cret"
  weight = ${weight}
  labels = { team = "sec" }
}
resource "aegis_echo" "b" {
  name   = "second"
  weight = 0.1
}
data "aegis_echo_info" "all" {
  depends_on = [aegis_echo.a]
}
`;
}

describe('terraform with the echo provider', () => {
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  const terraform = (...args: string[]): Run => {
    const result = spawnSync('terraform', [...args, '-no-color'], { cwd: join(dir, 'work'), env, encoding: 'utf8', timeout: 60_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const write = (text: string): void => writeFileSync(join(dir, 'work', 'main.tf'), text);

  beforeAll(() => {
    const version = spawnSync('terraform', ['version'], { encoding: 'utf8', env: { ...process.env, CHECKPOINT_DISABLE: '1' } });
    if (version.error || version.status !== 0) {
      throw new Error('These tests need the `terraform` binary (1.5 or newer) on PATH; it was not found or did not run.');
    }
    dir = mkdtempSync(join(tmpdir(), 'aegis-tf-e2e-'));
    const installed = installProvider({ dir: join(dir, 'mirror'), launcher: LAUNCHER });
    env = { ...process.env, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1', TF_CLI_CONFIG_FILE: installed.configFile, AEGIS_ECHO_DIR: join(dir, 'store') };
    delete env.TF_PLUGIN_CACHE_DIR;
    delete env.TF_LOG;
    spawnSync('mkdir', ['-p', join(dir, 'work')]);
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('initialises from the filesystem mirror', () => {
    write(config('first', '12345678901234567890'));
    const init = terraform('init');
    expect(init.stderr).toBe('');
    expect(init.stdout).toContain('Installing aegis/aegis v0.1.0');
    expect(init.status).toBe(0);
  });

  it('applies, and a second plan finds nothing to change', () => {
    const apply = terraform('apply', '-auto-approve');
    expect(apply.stderr).toBe('');
    expect(apply.stdout).toContain('Apply complete! Resources: 2 added, 0 changed, 0 destroyed.');
    expect(readdirSync(join(dir, 'store'))).toHaveLength(2);

    const shown = JSON.parse(terraform('show', '-json').stdout) as {
      values: { root_module: { resources: { address: string; values: Record<string, unknown>; sensitive_values: Record<string, unknown> }[] } };
    };
    const a = shown.values.root_module.resources.find((r) => r.address === 'aegis_echo.a');
    expect(a?.values.greeting).toBe('hello'); // optional+computed, filled by plan
    expect(a?.values.id).toMatch(/^[0-9a-f-]{36}$/); // computed, unknown until apply
    expect(a?.sensitive_values.secret).toBe(true);
    const info = shown.values.root_module.resources.find((r) => r.address === 'data.aegis_echo_info.all');
    expect(info?.values.count).toBe(2);

    const plan = terraform('plan', '-detailed-exitcode');
    expect(plan.stderr).toBe('');
    expect(plan.stdout).toContain('No changes.');
    expect(plan.status).toBe(0);
  });

  it('plans and applies an update in place', () => {
    write(config('renamed', '12345678901234567890'));
    const plan = terraform('plan', '-detailed-exitcode');
    expect(plan.stdout).toContain('aegis_echo.a will be updated in-place');
    expect(plan.stdout).toContain('"first" -> "renamed"');
    expect(plan.stdout).toContain('Plan: 0 to add, 1 to change, 0 to destroy.');
    expect(plan.status).toBe(2);
    const apply = terraform('apply', '-auto-approve');
    expect(apply.stdout).toContain('Resources: 0 added, 1 changed, 0 destroyed.');
  });

  it('shows a validation error pointing at the attribute', () => {
    write(config('renamed', '-1'));
    const plan = terraform('plan');
    expect(plan.status).toBe(1);
    expect(plan.stderr).toContain('Error: weight must be zero or more');
    expect(plan.stderr).toContain('with aegis_echo.a');
    expect(plan.stderr).toContain('weight = -1'); // the source line Terraform quotes for the attribute
  });

  it('destroys', () => {
    write(config('renamed', '12345678901234567890'));
    const destroy = terraform('destroy', '-auto-approve');
    expect(destroy.stderr).toBe('');
    expect(destroy.stdout).toContain('Destroy complete! Resources: 2 destroyed.');
    expect(readdirSync(join(dir, 'store'))).toEqual([]);
  });

  it('refuses to run outside Terraform, with a message for humans', () => {
    const direct = spawnSync(LAUNCHER, [], { encoding: 'utf8', env: { ...process.env, TF_PLUGIN_MAGIC_COOKIE: '' } });
    expect(direct.status).toBe(1);
    expect(direct.stdout).toBe('');
    expect(direct.stderr).toContain('This binary is a plugin');
  });
});
