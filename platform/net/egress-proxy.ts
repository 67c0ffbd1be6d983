// An HTTP proxy on 127.0.0.1 (a random port, one per git clone) that opens every connection of a
// program Aegis runs — git and its helpers: curl in git-remote-http(s), ssh, git:// — under a
// policy (outbound-rules.ts). Those programs resolve names themselves, so checking a URL before
// spawning them cannot see a redirect to 127.0.0.1 or a name whose answer changed (DNS rebinding);
// routed through here, each destination is judged when it is connected to, with the policy's own
// resolver, and the program only ever talks to this proxy.
//
//   CONNECT host:port          https (curl tunnels through a proxy so), and any TCP stream: the
//                              connect helper (platform/git/connect-helper.mjs) uses it for git:// and ssh
//   GET http://host/… (absolute form)   plain http, forwarded without following redirects (the
//                              client follows them, each hop through here again)
//
// Every request must carry the proxy's credentials (a random token per proxy, in its URL), so no
// other local process can borrow it. A refused destination gets 403 with the reason, which is also
// kept in `refusals` for the caller's error message. close() ends every connection at once.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { outboundSocket } from './outbound-connect.ts';
import type { OutboundPolicy } from './outbound-rules.ts';

export interface EgressProxy {
  /** `http://aegis:<token>@127.0.0.1:<port>`: git's http.proxy, the connect helper's AEGIS_EGRESS_PROXY. */
  readonly url: string;
  /** Refused connections so far, as their errors say it (address, reason, the switch that allows it). */
  readonly refusals: readonly string[];
  /** Destinations that could not be reached (not refused), `host:port: why`: the program only sees a 502 from the proxy. */
  readonly failures: readonly string[];
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  /** Time to connect to a destination, ms (default 30 s). */
  connectTimeoutMs?: number;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6), or null. */
export function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_.-]+)):(\d{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1] ?? match[2]!, port };
}

const statusLine = (status: number, text: string, message: string): string =>
  `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(message)}\r\nconnection: close\r\n\r\n${message}`;

export async function startEgressProxy(policy: OutboundPolicy, options: EgressProxyOptions = {}): Promise<EgressProxy> {
  const token = randomBytes(24).toString('base64url');
  const expected = `Basic ${Buffer.from(`aegis:${token}`).toString('base64')}`;
  const timeoutMs = options.connectTimeoutMs ?? 30_000;
  const refusals: string[] = [];
  const failures: string[] = [];
  const sockets = new Set<Duplex>();
  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  /** A connection to the destination; `refusal()` is the policy's refusal of it, if it was refused. */
  const connect = (host: string, port: number): { socket: Socket; refusal: () => string | null } => {
    let refusal: string | null = null;
    const socket = outboundSocket(policy, host, port, {
      timeoutMs,
      onRefused: (_host, _reason, error) => {
        refusal = error.message;
        refusals.push(error.message);
      },
    });
    track(socket);
    // Handled by the caller's listeners too; never an uncaught error.
    socket.on('error', (err) => {
      if (refusal === null && failures.length < 10) failures.push(`${host}:${port}: ${err.message}`);
    });
    return { socket, refusal: () => refusal };
  };

  const server = http.createServer();
  server.on('connection', track);

  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => client.destroy());
    if (req.headers['proxy-authorization'] !== expected) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="aegis"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const target = parseAuthority(req.url ?? '');
    if (!target) {
      client.end(statusLine(400, 'Bad Request', 'CONNECT needs host:port'));
      return;
    }
    const upstream = connect(target.host, target.port);
    let established = false;
    upstream.socket.once('connect', () => {
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.socket.write(head);
      upstream.socket.pipe(client);
      client.pipe(upstream.socket);
    });
    upstream.socket.once('error', (err) => {
      if (established) client.destroy();
      else {
        const refusal = upstream.refusal();
        client.end(refusal !== null ? statusLine(403, 'Forbidden', refusal) : statusLine(502, 'Bad Gateway', `cannot reach ${req.url}: ${err.message}`));
      }
    });
    upstream.socket.once('close', () => {
      if (established) client.destroy();
    });
    client.once('close', () => upstream.socket.destroy());
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.headers['proxy-authorization'] !== expected) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="aegis"', connection: 'close' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' }).end('an absolute http:// URL is expected (https goes through CONNECT)');
      return;
    }
    if (target.protocol !== 'http:' || target.username || target.password) {
      res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' }).end('only absolute http:// URLs without credentials are forwarded (https goes through CONNECT)');
      return;
    }
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(target.port) || 80;
    const headers: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (!HOP_BY_HOP.has(req.rawHeaders[i]!.toLowerCase())) headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    }
    let upstream: ReturnType<typeof connect> | undefined;
    const forwarded = http.request({
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
      setHost: false,
      createConnection: () => (upstream = connect(host, port)).socket,
    });
    forwarded.on('response', (answer) => {
      const out: string[] = [];
      for (let i = 0; i < answer.rawHeaders.length; i += 2) {
        if (!HOP_BY_HOP.has(answer.rawHeaders[i]!.toLowerCase())) out.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out);
      answer.pipe(res);
      answer.once('error', () => res.destroy());
    });
    forwarded.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else {
        const refusal = upstream?.refusal() ?? null;
        res.writeHead(refusal !== null ? 403 : 502, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(refusal ?? err.message);
      }
    });
    res.once('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://aegis:${token}@127.0.0.1:${port}`,
    refusals,
    failures,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
