// `aegis restore FILE`: puts a backup from `aegis backup` back into a data directory's embedded
// database (docs/operations.md, "Backup and restore"). Everything that can be checked is checked
// before anything changes: the file's digest, its migrations against this code's, the server key's
// fingerprint, that no server holds the data directory, that the target is empty (or --force).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../api/config.ts';
import { DataDirBusyError, holdDataDir } from '../platform/control-socket.ts';
import { checkKey, checkMigrations, findServerKey, hasContent, parseBackup, restoreEmbedded } from '../platform/db/backup.ts';
import { MIGRATION_NAMES } from '../platform/db/migrate.ts';
import { POSTGRES_BACKUP_DOCS } from './backup.ts';
import { aegisVersion } from './version.ts';

export interface RestoreOptions {
  dataDir?: string | undefined;
  force?: boolean | undefined;
}

export async function restoreCommand(path: string, options: RestoreOptions): Promise<number> {
  const config = loadConfig({ dataDir: options.dataDir });
  if (config.databaseUrl) {
    process.stderr.write(
      `aegis restore: DATABASE_URL is set: the data is in PostgreSQL, which this command does not restore. Use pg_restore (or point-in-time recovery) with the same AEGIS_SECRET_KEY: see ${POSTGRES_BACKUP_DOCS}.\n`,
    );
    return 1;
  }
  const dataDir = config.dataDir;
  const { header, payload } = parseBackup(await readFile(path), path);
  checkMigrations(header, MIGRATION_NAMES);
  checkKey(header, await findServerKey(dataDir, config.secretKey), dataDir);

  let held;
  try {
    held = await holdDataDir(dataDir, 'restore', aegisVersion());
  } catch (err) {
    if (err instanceof DataDirBusyError) throw new Error(`${err.message}: stop it before restoring. Nothing was changed.`);
    throw err;
  }
  const target = join(dataDir, 'pgdata');
  try {
    if (hasContent(target) && !options.force) {
      throw new Error(`${target} already holds a database; pass --force to replace it with the backup (a backup of it first: aegis backup --out FILE). Nothing was changed.`);
    }
    await restoreEmbedded(target, header, payload);
  } finally {
    await held.release();
  }
  const known = header.last_migration ? MIGRATION_NAMES.indexOf(header.last_migration) : -1;
  const pending = MIGRATION_NAMES.length - 1 - known;
  process.stdout.write(
    [
      `restored ${path} into ${target}`,
      `  made       ${header.created_at} by Aegis ${header.aegis_version}, last migration ${header.last_migration ?? '(none)'}`,
      `  secrets    sealed with key ${header.key_fingerprint}, the key here`,
      pending > 0 ? `  next       aegis serve --data-dir ${dataDir} (it applies ${pending} newer migration${pending === 1 ? '' : 's'} first)` : `  next       aegis serve --data-dir ${dataDir}`,
    ].join('\n') + '\n',
  );
  return 0;
}
