// `aegis shield`: the Shield gateway alone, for deployments that run several gateway nodes beside
// the API. It shares the API's PostgreSQL server (and Redis, for one rate-limit budget across
// nodes); the embedded database belongs to the one `aegis serve` process, which runs a gateway itself.
import { loadConfig } from '../api/config.ts';
import { startStandaloneGateway } from '../api/gateway/standalone.ts';

export interface ShieldOptions {
  shieldPort?: string | undefined;
  dataDir?: string | undefined;
  host?: string | undefined;
  asnDb?: string | undefined;
}

export async function shieldCommand(values: ShieldOptions): Promise<number> {
  const config = loadConfig({ shieldPort: values.shieldPort, dataDir: values.dataDir, host: values.host, asnDb: values.asnDb });
  if (!config.databaseUrl) {
    process.stderr.write('aegis shield: set DATABASE_URL to the API\'s PostgreSQL server. On the embedded database, `aegis serve` runs the gateway itself.\n');
    return 2;
  }
  const gateway = await startStandaloneGateway(config);
  process.stdout.write(`Aegis Shield gateway listening on ${gateway.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await gateway.close();
  return 0;
}
