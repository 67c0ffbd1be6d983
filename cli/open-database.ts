// The database a command that reads or writes it directly opens (`aegis keys create`, `orgs`,
// `migrate`, `worker`, `shield`). On the embedded database the command first takes the data
// directory's control socket (platform/control-socket.ts), as `aegis serve` does: PGlite is one
// process, and two opening the same files corrupt them, so a command started beside a running
// server refuses with who holds the directory instead.
import type { loadConfig } from '../api/config.ts';
import { DataDirBusyError, holdDataDir, type HeldDataDir } from '../platform/control-socket.ts';
import { openDatabase, type DatabaseHandle } from '../platform/db/database.ts';
import { aegisVersion } from './version.ts';

type Config = Pick<ReturnType<typeof loadConfig>, 'databaseUrl' | 'dataDir'>;

export async function openCommandDatabase(config: Config, role: string): Promise<DatabaseHandle> {
  if (config.databaseUrl) return openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  let held: HeldDataDir;
  try {
    held = await holdDataDir(config.dataDir, role, aegisVersion());
  } catch (err) {
    if (err instanceof DataDirBusyError) {
      throw new Error(`${err.message}; the embedded database belongs to one process: stop it first, or use the API (AEGIS_API_URL) while it runs`);
    }
    throw err;
  }
  try {
    const database = await openDatabase({ dataDir: config.dataDir });
    return {
      ...database,
      close: async () => {
        try {
          await database.close();
        } finally {
          await held.release();
        }
      },
    };
  } catch (err) {
    await held.release();
    throw err;
  }
}
