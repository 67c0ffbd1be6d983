// A gateway-only process (`aegis shield`): its own pool on the shared PostgreSQL server, its own
// decision recorder and live-stream publisher, no API routes.
import pino from 'pino';
import type { ServerConfig } from '../config.ts';
import { loadServerKey } from '../crypto/secret-box.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createShieldEvents } from './events/index.ts';
import type { RunningGateway } from './gateway.ts';
import { launchGateway } from './launch.ts';

export async function startStandaloneGateway(config: ServerConfig): Promise<RunningGateway> {
  const log = pino({ level: config.logLevel }, config.logStream);
  // Challenge clearances must verify on every node: with several nodes, give them one AEGIS_SECRET_KEY.
  const serverKey = await loadServerKey(config.dataDir, config.secretKey);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(database.db);
    const events = createShieldEvents({ db: database.db, redisUrl: config.redisUrl, databaseUrl: config.databaseUrl, log, allowSampleRate: config.shieldAllowSampleRate, flushMs: config.shieldFlushMs });
    const gateway = await launchGateway(config, { db: database.db, log, recorder: events.recorder, serverKey });
    return {
      ...gateway,
      async close() {
        await gateway.close();
        await events.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}
