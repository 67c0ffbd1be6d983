// A real Aegis server for the SDKs' own test suites and benchmarks (pytest's conftest, Go's
// TestMain, bench:sdk): the same startServer as `aegis serve`, on a fresh embedded database in a
// temporary directory (or DATABASE_URL's server when AEGIS_SDK_TEST_DATABASE_URL names one), on
// free ports, with the Shield gateway running. It prints one JSON line and runs until its standard
// input closes (the parent exited) or it is sent SIGTERM/SIGINT:
//
//   {"url":"http://127.0.0.1:41234","apiKey":"svc_live_…","gatewayUrl":"http://127.0.0.1:41235"}
//
//   node bin/run-ts.mjs sdks/testing/serve.ts [--rate-limit N] [--analytics-rate-limit N]
//
// Budgets last one second here (AEGIS_RATE_LIMIT_WINDOW_MS), so a test that provokes a 429 waits
// one second, not a minute; the analytics route's budget is small (2 a second by default) for that
// test, the general one large enough that the rest of a suite never meets it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../api/config.ts';
import { generateKey } from '../../api/accounts/keys/key-material.ts';
import { startServer } from '../../api/server.ts';

export interface SdkTestServer {
  url: string;
  apiKey: string;
  gatewayUrl: string;
}

const { values } = parseArgs({
  options: {
    'rate-limit': { type: 'string', default: '1000' },
    'analytics-rate-limit': { type: 'string', default: '2' },
  },
});

const dataDir = await mkdtemp(join(tmpdir(), 'aegis-sdk-test-'));
const apiKey = generateKey();
const config = {
  ...loadConfig(
    { host: '127.0.0.1', port: '0', dataDir },
    {
      AEGIS_RATE_LIMIT_WINDOW_MS: '1000',
      AEGIS_RATE_LIMIT_PER_MINUTE: values['rate-limit'],
      AEGIS_ANALYTICS_RATE_LIMIT_PER_MINUTE: values['analytics-rate-limit'],
      // The examples scan a checkout on this machine, and Shield sites front local origins.
      AEGIS_ALLOW_LOCAL_SOURCES: 'true',
      AEGIS_ALLOW_PRIVATE_TARGETS: 'true',
      AEGIS_WEBHOOK_RETRY_DELAYS_MS: '100,200',
    },
  ),
  databaseUrl: process.env.AEGIS_SDK_TEST_DATABASE_URL || undefined,
  bootstrapApiKey: apiKey,
  logLevel: process.env.AEGIS_LOG_LEVEL ?? 'silent',
  shieldEnabled: true,
  shieldPort: 0,
  // Clients of the test gateway are on loopback; X-Forwarded-For from them names the client.
  trustedProxies: ['127.0.0.1', '::1'],
};
const server = await startServer(config);
// 127.0.0.1, not localhost: some clients try ::1 first, where nothing listens.
const loopback = (url: string) => url.replace('//localhost:', '//127.0.0.1:');
const info: SdkTestServer = { url: loopback(server.url), apiKey, gatewayUrl: loopback(server.gateway!.url) };
process.stdout.write(`${JSON.stringify(info)}\n`);

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  await server.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
  process.exit(0);
}
process.stdin.on('end', () => void shutdown());
process.stdin.on('close', () => void shutdown());
process.stdin.resume();
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
