// Observability of one server: Prometheus metrics (metrics.ts, served by server.ts) and OpenTelemetry
// traces (tracing.ts). `Observability` is what the API, the gateway and the job worker are handed.
import type { FastifyInstance } from 'fastify';
import type { ServerMetrics, JobObserver } from './metrics.ts';
import type { Tracing } from './tracing.ts';

export { createMetrics, type DecisionQueue, type GatewayMetrics, type JobObserver, type PoolStats, type ServerMetrics } from './metrics.ts';
export { startMetricsServer, type RunningMetricsServer } from './server.ts';
export { startTracing, tracingEnabled, type Tracing } from './tracing.ts';

export interface Observability {
  metrics?: ServerMetrics | undefined;
  tracing?: Tracing | undefined;
}

const UNMATCHED = 'unmatched';

/**
 * Hooks that count and time every API request by its route pattern (`/v1/sites/:id`, never the raw
 * URL, so the series stay bounded; requests matching no route are `unmatched`) and trace it.
 * Added on the root instance before the routes, so every route has them.
 */
export function observeHttp(app: FastifyInstance, obs: Observability | undefined): void {
  const { metrics, tracing } = obs ?? {};
  if (!metrics && !tracing) return;
  const spans = new WeakMap<object, { end(route: string, status: number): void }>();
  app.addHook('onRequest', async (request) => {
    if (tracing) spans.set(request, tracing.request(request.method));
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics?.http(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    spans.get(request)?.end(route, reply.statusCode);
  });
}

/** One observer for job runs from metrics and traces (either may be off). */
export function jobObserver(obs: Observability): JobObserver | undefined {
  const { metrics, tracing } = obs;
  if (!metrics && !tracing) return undefined;
  return (job) => {
    const endMetric = metrics?.jobs(job);
    const endSpan = tracing?.job(job);
    return (result) => {
      endMetric?.(result);
      endSpan?.(result);
    };
  };
}
