// The metrics endpoint: GET /metrics on its own port (AEGIS_METRICS_PORT), bound to 127.0.0.1 unless
// AEGIS_METRICS_HOST says otherwise, optionally behind a Bearer token (AEGIS_METRICS_TOKEN). Off
// unless the port is set. A separate port is the Prometheus convention (node_exporter, the
// OpenTelemetry collector): the public API port never serves it, firewalls and network policies
// can treat it apart, and the API's auth, rate limits and request log stay out of scrapes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { ServerMetrics } from './metrics.ts';

export interface MetricsServerOptions {
  host: string;
  port: number;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token?: string | undefined;
  metrics: ServerMetrics;
  onError?: (err: unknown) => void;
}

export interface RunningMetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export async function startMetricsServer(options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const expected = options.token ? digest(`Bearer ${options.token}`) : undefined;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain' }).end('unauthorized\n');
      return;
    }
    options.metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        options.onError?.(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
