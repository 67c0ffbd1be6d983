// The real API for bench/api.ts, started exactly as `aegis serve` starts it. The parent supplies
// AEGIS_DATA_DIR (a temp dir) and AEGIS_BOOTSTRAP_API_KEY; DATABASE_URL is honoured if set.
import { hashKey } from '../../api/accounts/keys/key-material.ts';
import { loadConfig } from '../../api/config.ts';
import { startServer } from '../../api/server.ts';

const key = process.env.AEGIS_BOOTSTRAP_API_KEY;
if (!process.env.AEGIS_DATA_DIR || !key) throw new Error('AEGIS_DATA_DIR and AEGIS_BOOTSTRAP_API_KEY must be set');
const keyHash = hashKey(key);

const server = await startServer({
  ...loadConfig({ host: '127.0.0.1', port: '0' }),
  logLevel: 'silent',
  // New addresses sign in and get their own organisation (bench/auth.ts signs many in), as on the hosted service.
  signup: 'open',
  // The bench sends far more than the default 100 requests/minute per key on purpose.
  rateLimitPerMinute: 1e9,
});
console.log(JSON.stringify({ port: Number(new URL(server.url).port) }));

async function shutdown(): Promise<void> {
  try {
    // On a shared DATABASE_URL the bench key would otherwise outlive the run as a live admin key.
    await server.database.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('key_hash', '=', keyHash).execute();
  } finally {
    await server.close();
  }
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
