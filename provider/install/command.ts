// `aegis provider install [--dir DIR]`: writes the filesystem mirror and CLI config, builds the
// provider bundle ahead of the first `terraform init`, and prints the export line to use. Flags and
// help are declared in cli/program.ts.
import { ensureBundle } from '../bin/launch.mjs';
import { defaultInstallDir, installProvider } from './install.ts';

export interface ProviderInstallOptions {
  /** Default: ~/.aegis/terraform. */
  dir?: string | undefined;
}

export async function providerInstallCommand(options: ProviderInstallOptions = {}): Promise<number> {
  const installed = installProvider({ dir: options.dir ?? defaultInstallDir() });
  await ensureBundle();
  process.stderr.write(`Installed aegis/aegis into ${installed.dir}\n`);
  process.stdout.write(`export TF_CLI_CONFIG_FILE=${installed.configFile}\n`);
  return 0;
}
