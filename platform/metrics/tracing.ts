// OpenTelemetry traces of API requests and job runs, when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. The SDK is imported only then, so a server without
// it loads none of it. Spans go over OTLP/HTTP (JSON) through a batch processor; the exporter reads
// the standard OTEL_EXPORTER_OTLP_* variables (headers, timeout). The provider is this server's own,
// not registered globally: tests start many servers in one process.
import type { Span, Tracer } from '@opentelemetry/api';
import { operatorPolicy, outboundNodeAgents } from '../net/outbound.ts';

export interface Tracing {
  /** A span for one API request; `end` sets its status code and route. */
  request(method: string): { end(route: string, status: number): void };
  /** A span for one job run. */
  job(job: { id: string; kind: string; attempts: number }): (result: string) => void;
  /** Exports what is buffered. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/** Undefined when tracing is not configured. */
export async function startTracing(options: { serviceName?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Tracing | undefined> {
  const env = options.env ?? process.env;
  if (!tracingEnabled(env)) return undefined;
  const [api, base, exporterMod, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  // As the OTLP spec says: /v1/traces appended to the general endpoint; a per-signal endpoint used as is.
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${env.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
  // The operator's collector (OTEL_EXPORTER_OTLP_*): `operator` traffic of the outbound policy, its
  // connections opened by the policy module's agents like every other outbound connection.
  const agents = outboundNodeAgents(operatorPolicy);
  const exporter = new exporterMod.OTLPTraceExporter({ url, httpAgentOptions: (protocol) => (protocol === 'http:' ? agents.httpAgent : agents.httpsAgent) });
  const provider = new base.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || options.serviceName || 'aegis' }),
    spanProcessors: [new base.BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracer: Tracer = provider.getTracer('aegis');
  const { SpanKind, SpanStatusCode } = api;
  return {
    request(method) {
      const span: Span = tracer.startSpan(`${method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } });
      return {
        end(route, status) {
          span.updateName(`${method} ${route}`);
          span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    job(job) {
      const span = tracer.startSpan(`job ${job.kind}`, { kind: SpanKind.CONSUMER, attributes: { 'aegis.job.id': job.id, 'aegis.job.kind': job.kind, 'aegis.job.attempt': job.attempts } });
      return (result) => {
        span.setAttribute('aegis.job.outcome', result);
        if (result === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
    },
    flush: () => provider.forceFlush(),
    close: async () => {
      await provider.shutdown();
      agents.httpAgent.destroy();
      agents.httpsAgent.destroy();
    },
  };
}
