// `aegis <command>`: dispatches to the command modules. Each returns its exit code.
import { keysCommand } from './keys.ts';
import { migrateCommand } from './migrate.ts';
import { serveCommand } from './serve.ts';
import { shieldCommand } from './shield.ts';
import { applyCommand, dumpCommand, planCommand } from '../reconciler/cli/commands.ts';
import { validateCommand } from '../reconciler/config/validate-command.ts';

const USAGE = `usage: aegis <command> [options]

commands:
  serve           run the API and the Shield gateway in one process
                    --port N (env PORT, default 3000)   --data-dir DIR (env AEGIS_DATA_DIR, default ./.aegis)
                    --shield-port N (default 8080)      --host ADDR (env HOST, default 0.0.0.0)
                    --asn-db FILE (ip2asn TSV, env AEGIS_ASN_DB: ASN and country rules need it)
                    --config-dir DIR [--self-heal] [--drift-interval SECONDS]: watch DIR like \`aegis watch\`
  shield          run only the Shield gateway, beside an API on the same DATABASE_URL (and REDIS_URL)
                    --shield-port N   --asn-db FILE   --host ADDR
  worker          run jobs (scans) and the scan scheduler beside an API on the same DATABASE_URL
                    --concurrency N   --kinds a,b   --no-scheduler
  migrate         apply database migrations            --data-dir DIR
  keys create     create an API key in the database    --org SLUG --scopes a,b [--name N] [--data-dir DIR]
  advisories import DIR|ZIP   send OSV advisories (JSON files, or a ZIP export) to the API for SCA scans
                    (AEGIS_API_URL, AEGIS_API_KEY with scope admin)

  validate DIR    check a config directory (or --terraform-json FILE) offline
  plan DIR        show what apply would change     [--json|--markdown] [--source ID] [--adopt] [--no-prune]
  apply DIR       make the platform match DIR      [--yes] [--checksum H] [--force] [--deny-weakening]
  dump            write live state as config       [--out DIR]
  watch DIR       apply every edit of DIR as it is saved, and check for drift
                    [--self-heal] [--drift-interval SECONDS (default 60; 0: off)] [--debounce MS] [--json]
                    and apply's --source --adopt --no-prune --deny-weakening --max-changes --max-change-percent
  (plan, apply, dump and watch talk to AEGIS_API_URL with AEGIS_API_KEY)

Storage: DATABASE_URL selects a PostgreSQL server; without it the embedded database in the data dir is used.
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  serve: serveCommand,
  shield: shieldCommand,
  worker: (args) => import('./worker.ts').then((m) => m.workerCommand(args)),
  migrate: migrateCommand,
  keys: keysCommand,
  validate: validateCommand,
  plan: planCommand,
  apply: applyCommand,
  dump: dumpCommand,
  watch: (args) => import('../reconciler/cli/watch-command.ts').then((m) => m.watchCommand(args)),
  advisories: (args) => import('./advisories.ts').then((m) => m.advisoriesCommand(args)),
  provider: (args) => import('../provider/install/command.ts').then((m) => m.providerCommand(args)),
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`aegis: unknown command "${name}"\n\n${USAGE}`);
    return 1;
  }
  try {
    return await command(rest);
  } catch (err) {
    process.stderr.write(`aegis ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
