// The gateway's TLS port (docs/shield-edge.md, "TLS" and "HTTP/2"). Each connection:
//
//   1. Its ClientHello is read off the socket and put back (hello-reader.ts).
//   2. It offers ALPN `acme-tls/1` → the ACME TLS-ALPN-01 server, which answers with the challenge
//      certificate for the name (acme-answers.ts) and closes.
//   3. Otherwise its SNI must name a site that serves TLS (`tls.mode` not `off`) with a certificate
//      covering the name (certificates.ts); a connection without SNI, or for any other name, is
//      refused with the `unrecognized_name` alert: the gateway has no default certificate, since
//      any certificate it showed would be the wrong one for the name asked. A site whose minimum is
//      TLS 1.3 refuses a client offering only older versions (`protocol_version`).
//   4. The handshake (Mozilla intermediate, tls-options.ts; OCSP stapled when known, ocsp.ts),
//      then by ALPN: `h2` → the HTTP/2 server (http2.ts), else the HTTP/1.1 server (http1.ts).
//      Both run the same request handler as the plain port.
//
// Every request over TLS must name (Host or `:authority`) the site the connection was made for and
// a name its certificate covers, else 421 Misdirected Request: HTTP/2 clients reuse a connection
// for every name its certificate covers, and a request must never reach a site by a connection
// opened for another. A site with HSTS gets Strict-Transport-Security on every answer over TLS.
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createTlsServer, type SecureContext, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { nameCovers } from '../../platform/crypto/certificates.ts';
import { newRequestId } from '../../platform/http/request-id.ts';
import type { GatewayMetrics } from '../../platform/metrics/metrics.ts';
import { isHttp2Request, type GatewayRequest, type GatewayResponse } from '../proxy/exchange.ts';
import { parseHost } from '../proxy/host.ts';
import { ANSWERS, sendAnswer, type GatewayAnswer } from '../proxy/pages.ts';
import { responseOnSocket } from '../proxy/socket-response.ts';
import type { RequestHandler } from '../request-handler.ts';
import type { SiteRegistry } from '../sites/registry.ts';
import type { AcmeAnswers } from './acme-answers.ts';
import { resolveServerName, type CertificateCache } from './certificates.ts';
import { TLS13 } from './client-hello.ts';
import { readAsHttp1 } from './h2-request.ts';
import { ALERT, readClientHello, refuseHandshake } from './hello-reader.ts';
import { createHttp1Server, MAX_REQUEST_HEAD_BYTES } from './http1.ts';
import { createHttp2Server, type Http2Limits } from './http2.ts';
import type { OcspStapler } from './ocsp.ts';
import { hstsValue } from './site-tls.ts';
import { currentDay, ticketKeysFor, TLS_DEFAULTS } from './tls-options.ts';

const HANDSHAKE_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 5_000;
const ACME_ALPN = 'acme-tls/1';

/**
 * Why a handshake that started did not complete: `timeout` (not done within the handshake
 * timeout), `closed` (the client went away first: it reset or ended the connection — a client that
 * hangs up before its last flight is written never finished the handshake), else `failed` (the
 * TLS library refused it: no common version or suite, a bad message).
 */
function handshakeFailure(err: NodeJS.ErrnoException): string {
  if (err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT') return 'timeout';
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return 'closed';
  return 'failed';
}

export interface TlsListenerOptions {
  host: string;
  port: number;
  registry: SiteRegistry;
  certificates: CertificateCache;
  acme: AcmeAnswers;
  handler: RequestHandler;
  serverKey: Buffer;
  log: Logger;
  metrics?: GatewayMetrics | undefined;
  ocsp?: OcspStapler | undefined;
  http2?: Partial<Http2Limits> | undefined;
}

export interface RunningTlsListener {
  port: number;
  close(): Promise<void>;
}

export async function startTlsListener(options: TlsListenerOptions): Promise<RunningTlsListener> {
  const { registry, certificates, handler, log, metrics } = options;
  const handshake = (result: string, protocol: string) => metrics?.tlsHandshake(result, protocol);

  /** The site and certificate a TLS connection was made for (its SNI), now. */
  const connectionFor = (socket: { servername?: string | false | null }) => resolveServerName(registry, certificates, typeof socket.servername === 'string' ? socket.servername : null);

  /** Why a request may not be served on this connection (421), or null with the site's HSTS value. */
  const misdirected = (req: GatewayRequest): GatewayAnswer | { hsts: string | null } => {
    const host = parseHost(req.headers.host);
    // No usable Host: the handler answers 400 as on the plain port.
    if (!host) return { hsts: null };
    const connection = connectionFor(req.socket as TLSSocket);
    if (!connection || registry.lookup(host.name) !== connection.site || !connection.certificate.names.some((name) => nameCovers(name, host.name))) return ANSWERS.misdirected;
    return { hsts: hstsValue(connection.site.tls.hsts) };
  };

  const onRequest = (req: GatewayRequest, res: GatewayResponse): void => {
    if (isHttp2Request(req)) {
      const read = readAsHttp1(req, MAX_REQUEST_HEAD_BYTES);
      if (read !== 'ok') return sendAnswer(req, res, read === 'too_large' ? ANSWERS.headersTooLarge : ANSWERS.badHost, newRequestId());
    }
    const check = misdirected(req);
    if ('status' in check) return sendAnswer(req, res, check, newRequestId());
    if (check.hsts) res.setHeader('strict-transport-security', check.hsts);
    handler.handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'shield: request failed');
      sendAnswer(req, res, ANSWERS.badGateway, newRequestId());
    });
  };
  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const check = misdirected(req);
    if ('status' in check) return sendAnswer(req, responseOnSocket(req, socket), check, newRequestId());
    return handler.upgrade(req, socket, head);
  };

  const http1 = createHttp1Server(onRequest, onUpgrade, log);
  // node:http starts tracking connections (idle sockets, header and request timeouts) when a
  // server emits 'listening'; this one never listens itself — it is handed TLS sockets.
  http1.emit('listening');
  const { server: http2, sessions } = createHttp2Server(onRequest, {
    limits: options.http2,
    onRapidReset: (session) => log.warn({ client_ip: session.socket?.remoteAddress }, 'shield: HTTP/2 client reset streams too fast (rapid reset); connection closed'),
  });

  const open = new Set<TLSSocket>();
  let ticketDay = currentDay();
  const secure = createTlsServer({
    ...TLS_DEFAULTS,
    ALPNProtocols: ['h2', 'http/1.1'],
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    ticketKeys: ticketKeysFor(options.serverKey, ticketDay),
    SNICallback: (name, done) => {
      const connection = connectionFor({ servername: name });
      if (connection) done(null, connection.certificate.context);
      else done(new Error('no certificate for this name'), undefined as unknown as SecureContext);
    },
  });
  secure.on('secureConnection', (socket: TLSSocket) => {
    const protocol = socket.alpnProtocol === 'h2' ? 'h2' : 'http/1.1';
    handshake('ok', protocol);
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    (protocol === 'h2' ? http2 : http1).emit('connection', socket);
  });
  secure.on('tlsClientError', (err, socket) => {
    handshake(handshakeFailure(err), 'none');
    socket.destroy();
  });
  if (options.ocsp) {
    const stapler = options.ocsp;
    secure.on('OCSPRequest', (certificate: Buffer, _issuer: Buffer | null, done: (err: Error | null, response?: Buffer) => void) => done(null, stapler.responseFor(certificate) ?? undefined));
  }
  // Rotated with the day the keys are derived for (tls-options.ts).
  const rotation = setInterval(() => {
    if (currentDay() === ticketDay) return;
    ticketDay = currentDay();
    secure.setTicketKeys(ticketKeysFor(options.serverKey, ticketDay));
  }, 60_000);
  rotation.unref();

  const acmeServer = createTlsServer({
    ...TLS_DEFAULTS,
    ALPNProtocols: [ACME_ALPN],
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    SNICallback: (name, done) => {
      options.acme.tlsAlpn01(name).then(
        (context) => (context ? done(null, context) : done(new Error('no TLS-ALPN-01 challenge for this name'), undefined as unknown as SecureContext)),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err)), undefined as unknown as SecureContext),
      );
    },
  });
  acmeServer.on('secureConnection', (socket: TLSSocket) => {
    handshake('ok', ACME_ALPN);
    // RFC 8737 §3: the validation is the handshake itself; nothing is exchanged after it.
    socket.end();
  });
  acmeServer.on('tlsClientError', (err, socket) => {
    handshake(handshakeFailure(err), ACME_ALPN);
    socket.destroy();
  });

  const accept = async (socket: Socket): Promise<void> => {
    socket.on('error', () => socket.destroy());
    const read = await readClientHello(socket, { timeoutMs: HANDSHAKE_TIMEOUT_MS });
    if ('failure' in read) {
      handshake(read.failure === 'invalid' ? 'malformed' : read.failure, 'none');
      socket.destroy();
      return;
    }
    const { hello } = read;
    if (hello.alpn.includes(ACME_ALPN)) {
      if (!hello.serverName) return refuse(socket, ALERT.unrecognizedName, 'unknown_name');
      acmeServer.emit('connection', socket);
      return;
    }
    const connection = connectionFor({ servername: hello.serverName });
    if (!connection) return refuse(socket, ALERT.unrecognizedName, 'unknown_name');
    if (connection.site.tls.min_version === '1.3' && !hello.versions.includes(TLS13)) return refuse(socket, ALERT.protocolVersion, 'old_version');
    secure.emit('connection', socket);
  };
  const refuse = (socket: Socket, alert: number, result: string): void => {
    handshake(result, 'none');
    refuseHandshake(socket, alert);
  };

  const listener = createNetServer((socket) => void accept(socket));
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, options.host, () => resolve());
  });
  const port = (listener.address() as AddressInfo).port;

  return {
    port,
    async close() {
      clearInterval(rotation);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      for (const session of sessions) session.close();
      // Requests in flight finish; idle keep-alive connections go now and as they become idle.
      const started = Date.now();
      while (open.size > 0 && Date.now() - started < CLOSE_GRACE_MS) {
        http1.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const socket of open) socket.destroy();
      http1.close();
    },
  };
}
