// The plain-HTTP listener's own answers, before the request handler: ACME HTTP-01 tokens
// (acme-answers.ts: before any site lookup, so a site not serving yet can still be validated;
// anything else on that path goes on to the ordinary pipeline, never redirected), then a site's
// HTTP → HTTPS redirect (`tls.redirect_http`: 308, only while a certificate for the host is being
// served on the TLS port, and not for a request a trusted proxy says arrived over HTTPS already).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { newRequestId } from '../../platform/http/request-id.ts';
import type { ClientIpResolver } from '../proxy/client-ip.ts';
import { parseHost } from '../proxy/host.ts';
import { ANSWERS, sendAnswer } from '../proxy/pages.ts';
import type { RequestHandler } from '../request-handler.ts';
import type { SiteRegistry } from '../sites/registry.ts';
import { ACME_CHALLENGE_PREFIX, type AcmeAnswers } from './acme-answers.ts';
import { resolveServerName, type CertificateCache } from './certificates.ts';
import { httpsLocation } from './site-tls.ts';

export interface PlainListenerDeps {
  handler: RequestHandler;
  acme: AcmeAnswers;
  registry: SiteRegistry;
  clientIps: ClientIpResolver;
  log: Logger;
  /** The TLS listener's certificates and port, when it runs: redirects go there. */
  tls?: { certificates: CertificateCache; port: number } | undefined;
}

export function plainRequestListener(deps: PlainListenerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = req.url ?? '/';
    if (target.startsWith(ACME_CHALLENGE_PREFIX)) return answerChallenge(req, res, target);
    const location = redirectFor(req, target);
    if (location === null) return deps.handler.handle(req, res);
    res.writeHead(308, { location, 'content-length': 0, 'cache-control': 'no-store' });
    res.end();
    return Promise.resolve();
  };

  async function answerChallenge(req: IncomingMessage, res: ServerResponse, target: string): Promise<void> {
    const host = parseHost(req.headers.host);
    const q = target.indexOf('?');
    const token = (q === -1 ? target : target.slice(0, q)).slice(ACME_CHALLENGE_PREFIX.length);
    const keyAuthorization = host && (req.method === 'GET' || req.method === 'HEAD') ? await deps.acme.http01(host.name, token) : null;
    if (keyAuthorization === null) return deps.handler.handle(req, res);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(keyAuthorization), 'cache-control': 'no-store' });
    if (req.method === 'HEAD') res.end();
    else res.end(keyAuthorization);
  }

  function redirectFor(req: IncomingMessage, target: string): string | null {
    if (!deps.tls) return null;
    const host = parseHost(req.headers.host);
    if (!host) return null;
    const site = deps.registry.lookup(host.name);
    if (!site?.tls.redirect_http) return null;
    if (!resolveServerName(deps.registry, deps.tls.certificates, host.name)) return null;
    if (deps.clientIps.resolve(req).proto === 'https') return null;
    return httpsLocation(host, target, deps.tls.port);
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      deps.log.error({ err }, 'shield: request failed');
      sendAnswer(req, res, ANSWERS.badGateway, newRequestId());
    });
  };
}
