// Baseline for bench/api.ts: a bare Fastify route (no logger, plugins, auth or database) that
// answers GET /api/v1/me with a constant body shaped and sized like the real one.
import Fastify from 'fastify';

const body = {
  type: 'api_key',
  api_key: { id: 'key_01JBENCHBENCHBENCHBENCHBENC', name: 'bootstrap', scopes: ['admin'] },
  user: null,
  organization: { id: 'org_01JBENCHBENCHBENCHBENCHBENC', slug: 'default', name: 'Default organization', plan: 'free', created_at: '2025-01-01T00:00:00.000Z' },
};

const app = Fastify();
app.get('/api/v1/me', async () => body);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (typeof address !== 'object' || !address) throw new Error('server has no TCP address');
// The parent waits for this line to learn where to send load.
console.log(JSON.stringify({ port: address.port }));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().finally(() => process.exit(0)));
}
