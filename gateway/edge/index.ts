// The gateway as an edge (docs/shield-edge.md): what sits between the listeners and the request
// handler. On the plain port, ACME HTTP-01 answers and HTTP → HTTPS redirects (plain.ts); with a
// TLS port, the TLS listener (tls-listener.ts: SNI, TLS-ALPN-01, HTTP/2, 421) with the certificate
// cache (certificates.ts) and OCSP stapling (ocsp.ts). gateway.ts composes this with the handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import type { Environment } from '../../platform/db/environments.ts';
import type { GatewayMetrics } from '../../platform/metrics/metrics.ts';
import type { ClientIpResolver } from '../proxy/client-ip.ts';
import type { RequestHandler } from '../request-handler.ts';
import type { SiteRegistry } from '../sites/registry.ts';
import { AcmeAnswers } from './acme-answers.ts';
import { CertificateCache } from './certificates.ts';
import type { Http2Limits } from './http2.ts';
import { OcspStapler } from './ocsp.ts';
import { plainRequestListener } from './plain.ts';
import { startTlsListener, type RunningTlsListener } from './tls-listener.ts';

export interface EdgeOptions {
  db: Db;
  log: Logger;
  serverKey: Buffer;
  host: string;
  /** Where TLS is terminated; undefined: no TLS listener (the plain port still answers HTTP-01). */
  tlsPort?: number | undefined;
  refreshMs?: number | undefined;
  environment?: Environment | undefined;
  metrics?: GatewayMetrics | undefined;
  registry: SiteRegistry;
  handler: RequestHandler;
  clientIps: ClientIpResolver;
  http2?: Partial<Http2Limits> | undefined;
  /** The fetch OCSP responders are asked through (the outbound policy); none: nothing is stapled. */
  ocspFetch?: typeof fetch | undefined;
}

export interface Edge {
  /** The plain port's request listener. */
  plainListener: (req: IncomingMessage, res: ServerResponse) => void;
  /** The TLS listener and the certificates it serves, when it runs. */
  tls: { port: number; certificates: CertificateCache } | undefined;
  close(): Promise<void>;
}

export async function startEdge(options: EdgeOptions): Promise<Edge> {
  const acme = new AcmeAnswers(options.db, options.serverKey);
  let certificates: CertificateCache | undefined;
  let ocsp: OcspStapler | undefined;
  let listener: RunningTlsListener | undefined;
  if (options.tlsPort !== undefined) {
    const stapler = options.ocspFetch ? new OcspStapler({ fetch: options.ocspFetch, log: options.log }) : undefined;
    ocsp = stapler;
    certificates = new CertificateCache(options.db, {
      serverKey: options.serverKey,
      log: options.log,
      refreshMs: options.refreshMs,
      environment: options.environment,
      onChange: (siteId, certificate) => {
        options.metrics?.certificateExpiry(siteId, certificate?.notAfter ?? null);
        stapler?.track(siteId, certificate);
      },
    });
    try {
      await certificates.start();
      listener = await startTlsListener({ ...options, port: options.tlsPort, certificates, acme, ocsp });
    } catch (err) {
      stapler?.close();
      await certificates.close();
      throw err;
    }
  }
  const tls = listener && certificates ? { port: listener.port, certificates } : undefined;
  return {
    plainListener: plainRequestListener({ handler: options.handler, acme, registry: options.registry, clientIps: options.clientIps, log: options.log, tls }),
    tls,
    async close() {
      await listener?.close();
      ocsp?.close();
      await certificates?.close();
    },
  };
}
