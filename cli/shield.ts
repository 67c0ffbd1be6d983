// `aegis shield`: the Shield gateway alone, for deployments that run several gateway nodes beside
// the API. It shares the API's PostgreSQL server (and Redis, for one rate-limit budget across
// nodes); the embedded database belongs to the one `aegis serve` process, which runs a gateway itself.
import { parseArgs } from 'node:util';
import { loadConfig } from '../api/config.ts';
import { startStandaloneGateway } from '../api/gateway/standalone.ts';

export async function shieldCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'shield-port': { type: 'string' },
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      'asn-db': { type: 'string' },
    },
  });
  const config = loadConfig({ shieldPort: values['shield-port'], dataDir: values['data-dir'], host: values.host, asnDb: values['asn-db'] });
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
