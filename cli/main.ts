// `aegis <command>`: dispatches to the command modules. Each returns its exit code.
import { keysCommand } from './keys.ts';
import { migrateCommand } from './migrate.ts';
import { serveCommand } from './serve.ts';

const USAGE = `usage: aegis <command> [options]

commands:
  serve           run the API (and, as they arrive, workers and the Shield gateway) in one process
                    --port N (env PORT, default 3000)   --data-dir DIR (env AEGIS_DATA_DIR, default ./.aegis)
                    --shield-port N (default 8080)      --host ADDR (env HOST, default 0.0.0.0)
  migrate         apply database migrations            --data-dir DIR
  keys create     create an API key in the database    --org SLUG --scopes a,b [--name N] [--data-dir DIR]

Storage: DATABASE_URL selects a PostgreSQL server; without it the embedded database in the data dir is used.
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  serve: serveCommand,
  migrate: migrateCommand,
  keys: keysCommand,
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
