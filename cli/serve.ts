import { parseArgs } from 'node:util';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      'shield-port': { type: 'string' },
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      'asn-db': { type: 'string' },
    },
  });
  const config = loadConfig({ port: values.port, shieldPort: values['shield-port'], dataDir: values['data-dir'], host: values.host, asnDb: values['asn-db'] });
  const server = await startServer(config);
  const lines = [
    `Aegis is running on the ${server.database.kind === 'embedded' ? `embedded database (${server.database.location})` : `PostgreSQL server ${server.database.location}`}`,
    `  API        ${server.url}/api/v1`,
    `  Reference  ${server.url}/docs`,
    `  OpenAPI    ${server.url}/api/v1/openapi.json`,
  ];
  if (server.gateway) lines.push(`  Shield     ${server.gateway.url} (routes by Host to each site's origin)`);
  if (server.bootstrap.kind === 'key-file-written') lines.push(`  API key    created; read it from ${server.bootstrap.path} (shown nowhere else)`);
  if (server.bootstrap.kind === 'env-key-revoked') lines.push('  warning    AEGIS_BOOTSTRAP_API_KEY names a revoked key; it stays revoked');
  process.stdout.write(`${lines.join('\n')}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
