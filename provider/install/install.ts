// `aegis provider install`: makes `terraform init` find the Aegis provider without a registry.
// A filesystem mirror holds a tiny exec wrapper pointing at this checkout's launcher (init records
// a hash of the mirrored directory, so the wrapper must not change when the project is rebuilt),
// and a CLI config file sends aegis/aegis to the mirror and everything else to the registry.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROVIDER_VERSION = '0.1.0';
export const PROVIDER_SOURCE = 'registry.terraform.io/aegis/aegis';
export const DEFAULT_LAUNCHER = fileURLToPath(new URL('../bin/terraform-provider-aegis', import.meta.url));

export interface InstallOptions {
  /** Where the mirror and the CLI config go (default ~/.aegis/terraform). */
  dir?: string;
  /** The executable the wrapper execs (default provider/bin/terraform-provider-aegis). */
  launcher?: string;
}

export interface Installed {
  dir: string;
  binary: string;
  configFile: string;
}

export function defaultInstallDir(): string {
  return join(homedir(), '.aegis', 'terraform');
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function hclString(text: string): string {
  return JSON.stringify(text); // HCL string escapes are a superset of what JSON.stringify produces here
}

export function installProvider(options: InstallOptions = {}): Installed {
  const dir = resolve(options.dir ?? defaultInstallDir());
  const launcher = resolve(options.launcher ?? DEFAULT_LAUNCHER);
  const platformDir = join(dir, PROVIDER_SOURCE, PROVIDER_VERSION, 'linux_amd64');
  mkdirSync(platformDir, { recursive: true });
  const binary = join(platformDir, `terraform-provider-aegis_v${PROVIDER_VERSION}`);
  // exec, not a child: a forking wrapper leaves an orphan that hangs Terraform.
  writeFileSync(binary, `#!/bin/sh\nexec ${shellQuote(launcher)} "$@"\n`);
  chmodSync(binary, 0o755);
  const configFile = join(dir, 'terraformrc');
  writeFileSync(
    configFile,
    [
      'provider_installation {',
      '  filesystem_mirror {',
      `    path    = ${hclString(dir)}`,
      '    include = ["aegis/aegis"]',
      '  }',
      '  direct {',
      '    exclude = ["aegis/aegis"]',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  return { dir, binary, configFile };
}
