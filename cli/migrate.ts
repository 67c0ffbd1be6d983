// `aegis migrate`: applies the database migrations (also applied at every start).
import { loadConfig } from '../api/config.ts';
import { openCommandDatabase } from './open-database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';

export async function migrateCommand(options: { dataDir?: string | undefined }): Promise<number> {
  const config = loadConfig({ dataDir: options.dataDir });
  const database = await openCommandDatabase(config, 'migrate');
  try {
    const applied = await migrateToLatest(database.db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await database.close();
  }
}
