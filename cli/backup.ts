// `aegis backup --out FILE`: a backup of the embedded database (docs/operations.md, "Backup and
// restore"). While `aegis serve` holds the data directory, the backup is taken inside that server
// through its control socket (platform/control-socket.ts): PGlite is one process, and a second one
// must never open its files. Otherwise this process takes the data directory (the same socket, so a
// server cannot start meanwhile) and dumps it itself. On PostgreSQL, pg_dump is the tool.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../api/config.ts';
import { askDataDir, DataDirBusyError, holdDataDir } from '../platform/control-socket.ts';
import { dumpEmbedded, findServerKey, parseBackup, writePrivateFile } from '../platform/db/backup.ts';
import { openDatabase } from '../platform/db/database.ts';
import { aegisVersion } from './version.ts';

export const POSTGRES_BACKUP_DOCS = 'docs/operations.md, "Backup and restore" (section "PostgreSQL")';

export interface BackupOptions {
  out: string;
  dataDir?: string | undefined;
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** The backup from whoever holds the data directory, or from the files when nobody does. */
async function takeBackup(dataDir: string, secretKeyEnv: string | undefined): Promise<{ file: Buffer; from: string }> {
  for (let attempt = 0; ; attempt++) {
    const answer = await askDataDir(dataDir, 'backup');
    if (answer) {
      const { reply, body } = answer;
      if (!reply.ok) throw new Error(`aegis ${reply.holder.role} (pid ${reply.holder.pid}) holds ${dataDir} and did not take the backup: ${reply.error ?? 'no reason given'}`);
      return { file: body, from: `the running aegis ${reply.holder.role} (pid ${reply.holder.pid})` };
    }
    if (!existsSync(join(dataDir, 'pgdata', 'PG_VERSION'))) throw new Error(`there is no embedded database in ${dataDir} (no ${join(dataDir, 'pgdata')}); pass --data-dir`);
    const found = await findServerKey(dataDir, secretKeyEnv);
    if (!found) throw new Error(`there is no server key for ${dataDir} (no AEGIS_SECRET_KEY, no ${join(dataDir, 'secret-key')}); a backup records which key seals its secrets`);
    let held;
    try {
      held = await holdDataDir(dataDir, 'backup', aegisVersion());
    } catch (err) {
      // A server started between the question and the lock: ask it instead.
      if (err instanceof DataDirBusyError && attempt === 0) continue;
      throw err;
    }
    try {
      const database = await openDatabase({ dataDir });
      try {
        const file = await dumpEmbedded(database.db, database.embedded!, { key: found.key, aegisVersion: aegisVersion() });
        return { file, from: `the data directory (no server was running)` };
      } finally {
        await database.close();
      }
    } finally {
      await held.release();
    }
  }
}

export async function backupCommand(options: BackupOptions): Promise<number> {
  const config = loadConfig({ dataDir: options.dataDir });
  if (config.databaseUrl) {
    process.stderr.write(
      `aegis backup: DATABASE_URL is set: the data is in PostgreSQL, which this command does not back up. Use pg_dump (or a base backup with WAL archiving for point-in-time recovery) and keep AEGIS_SECRET_KEY with it: see ${POSTGRES_BACKUP_DOCS}.\n`,
    );
    return 1;
  }
  const { file, from } = await takeBackup(config.dataDir, config.secretKey);
  // Check what came over the socket before it replaces anything.
  const { header } = parseBackup(file, 'the backup just taken');
  await writePrivateFile(options.out, file);
  process.stdout.write(
    [
      `backup written to ${options.out} (${megabytes(file.length)}), taken from ${from}`,
      `  database    embedded, last migration ${header.last_migration ?? '(none)'}, PostgreSQL ${header.postgres_version}`,
      `  secrets     sealed with key ${header.key_fingerprint}: a restore needs that same key (AEGIS_SECRET_KEY or ${join(config.dataDir, 'secret-key')}); keep it apart from the backup`,
    ].join('\n') + '\n',
  );
  return 0;
}
