// Starts the API on a database: open, migrate, bootstrap the first key, listen. `aegis serve`
// and the tests both start servers through here, so the tests exercise what users run.
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from './app.ts';
import { Authenticator } from './auth/authenticator.ts';
import type { ServerConfig } from './config.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createSecretBox, loadServerKey } from './crypto/secret-box.ts';
import { startHousekeeping } from './housekeeping.ts';
import { bootstrapKey, type BootstrapResult } from './keys/bootstrap.ts';

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  /** Base URL of the API, e.g. http://localhost:3000 */
  url: string;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

export async function startServer(config: ServerConfig): Promise<RunningServer> {
  // Before the database opens: a malformed AEGIS_SECRET_KEY stops start-up with nothing to undo.
  const secretBox = createSecretBox(await loadServerKey(config.dataDir, config.secretKey));
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }) : undefined;
  try {
    await migrateToLatest(database.db);
    const bootstrap = await bootstrapKey(database.db, { envKey: config.bootstrapApiKey, dataDir: config.dataDir });
    const authenticator = new Authenticator(database.db, { cacheTtlMs: config.keyCacheTtlMs, usageFlushMs: config.keyUsageFlushMs });
    const app = await buildApp({ db: database.db, authenticator, redis, secretBox, config });
    const stopHousekeeping = startHousekeeping(database.db, app.log, config.sweepIntervalMs);
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    return {
      app,
      database,
      url: `http://localhost:${port}`,
      bootstrap,
      async close() {
        stopHousekeeping();
        await app.close();
        await authenticator.close();
        await database.close();
        await redis?.quit();
      },
    };
  } catch (err) {
    await database.close();
    redis?.disconnect();
    throw err;
  }
}
