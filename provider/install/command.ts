// `aegis provider install [--dir DIR]`: writes the filesystem mirror and CLI config, builds the
// provider bundle ahead of the first `terraform init`, and prints the export line to use.
import { ensureBundle } from '../bin/launch.mjs';
import { defaultInstallDir, installProvider } from './install.ts';

const USAGE = 'usage: aegis provider install [--dir DIR]   (default DIR: ~/.aegis/terraform)\n';

export async function providerCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'install') {
    process.stderr.write(USAGE);
    return sub === '--help' || sub === '-h' ? 0 : 1;
  }
  let dir = defaultInstallDir();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--dir' && rest[i + 1]) dir = rest[++i] ?? dir;
    else if (arg?.startsWith('--dir=')) dir = arg.slice('--dir='.length);
    else {
      process.stderr.write(`aegis provider install: unexpected argument "${arg}"\n${USAGE}`);
      return 1;
    }
  }
  const installed = installProvider({ dir });
  await ensureBundle();
  process.stderr.write(`Installed aegis/aegis into ${installed.dir}\n`);
  process.stdout.write(`export TF_CLI_CONFIG_FILE=${installed.configFile}\n`);
  return 0;
}
