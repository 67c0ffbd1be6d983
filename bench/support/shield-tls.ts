// What bench/shield.ts needs to measure TLS at the edge: one certificate for the gateway and nginx,
// an nginx that terminates TLS with the gateway's protocol settings, the files that make wrk send
// the right SNI and make full handshakes, and h2load.
//
// SNI. The gateway picks a site's certificate by the ClientHello's server name and refuses a
// handshake without one (or with a name no site covers). wrk takes the SNI from its URL's host, and
// h2load its SNI and `:authority` from the URI, so both are given `https://<site domain>:<port>/`
// and told to connect to 127.0.0.1 instead: h2load with `--connect-to`, wrk with a script that
// replaces `wrk.resolve` (which runs before any connection) so the name is never looked up. No
// /etc/hosts entry or DNS server is needed.
//
// Full handshakes. wrk and h2load both resume the TLS session when they reconnect (the old session
// stays on the reused SSL object; about half of wrk's reconnects and nearly all of h2load's resume
// with TLS 1.3 tickets), and `openssl s_time -new` sends no SNI. So the new-connection rows run wrk
// with `Connection: close` under an OpenSSL configuration (OPENSSL_CONF) that caps the client at
// TLS 1.2 and turns session tickets off: the client then has no way to resume — the gateway keeps
// no session-ID cache, nor does nginx with `ssl_session_cache` left at its default (`none`) — and
// every request is a new TCP connection with a full ECDHE + ECDSA handshake.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { CIPHERS, ECDH_CURVES } from '../../gateway/edge/tls-options.ts';

export interface BenchCertificate {
  certPath: string;
  keyPath: string;
  certificate: string;
  privateKey: string;
  fingerprint: string;
}

function run(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 16 * 1024 * 1024, env: env ? { ...process.env, ...env } : process.env }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd}: ${stderr || err.message}`)) : resolve(stdout),
    );
  });
}

/** A self-signed ECDSA P-256 certificate for `names` (the key type ACME certificates get here), valid for two days. */
export async function makeBenchCertificate(dir: string, names: string[]): Promise<BenchCertificate> {
  const certPath = join(dir, 'tls-cert.pem');
  const keyPath = join(dir, 'tls-key.pem');
  const san = names.map((name) => `DNS:${name}`).join(',');
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-keyout', keyPath, '-out', certPath, '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${san}`]);
  const certificate = await readFile(certPath, 'utf8');
  return { certPath, keyPath, certificate, privateKey: await readFile(keyPath, 'utf8'), fingerprint: new X509Certificate(certificate).fingerprint256 };
}

/**
 * An nginx server block that proxies to the bench origin on a plain port and on a TLS port
 * (HTTP/1.1 and h2 by ALPN), with the gateway's TLS settings (gateway/edge/tls-options.ts): TLS 1.2
 * and 1.3, the same suites in the same order, server preference, the same curves; session tickets
 * on, no session-ID cache, as the gateway.
 */
export function nginxTlsServer(input: { plainPort: number; tlsPort: number; cert: BenchCertificate }): string {
  const tls12 = CIPHERS.split(':').filter((suite) => !suite.startsWith('TLS_'));
  const tls13 = CIPHERS.split(':').filter((suite) => suite.startsWith('TLS_'));
  return `server {
    listen 127.0.0.1:${input.plainPort};
    listen 127.0.0.1:${input.tlsPort} ssl http2;
    ssl_certificate ${input.cert.certPath}; ssl_certificate_key ${input.cert.keyPath};
    ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ${tls12.join(':')}; ssl_prefer_server_ciphers on;
    ssl_conf_command Ciphersuites ${tls13.join(':')};
    ssl_ecdh_curve ${ECDH_CURVES};
    ssl_session_tickets on;
    location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }`;
}

/** A wrk script that connects to 127.0.0.1 whatever the URL's host, so the host is only the SNI (and Host). */
export async function loopbackScript(dir: string): Promise<string> {
  const path = join(dir, 'loopback.lua');
  await writeFile(path, 'wrk.resolve = function(host, service)\n  wrk.addrs = wrk.lookup("127.0.0.1", service)\nend\n');
  return path;
}

/** OPENSSL_CONF for a client that cannot resume a session: TLS 1.2 at most, no session tickets. */
export async function fullHandshakeConf(dir: string): Promise<string> {
  const path = join(dir, 'openssl-full-handshakes.cnf');
  await writeFile(
    path,
    ['openssl_conf = default_conf', '[default_conf]', 'ssl_conf = ssl_sect', '[ssl_sect]', 'system_default = client_sect', '[client_sect]', 'MaxProtocol = TLSv1.2', 'Options = -SessionTicket', ''].join('\n'),
  );
  return path;
}

/** The fingerprint of the certificate a TLS server shows for `servername` on 127.0.0.1:`port`, checked against `cert`. */
export function servedFingerprint(port: number, servername: string, cert: BenchCertificate): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca: cert.certificate, ALPNProtocols: ['http/1.1'] }, () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

export interface H2loadResult {
  rps: number;
  /** Mean time for a request (h2load reports no percentiles). */
  meanMs: number;
}

const unitMs = (value: string, unit: string): number => Number(value) * ({ us: 0.001, ms: 1, s: 1000 }[unit] ?? 1);

/**
 * h2load over h2 for `seconds` against https://`name`:`port``path`, connecting to 127.0.0.1;
 * `clients` connections × `streams` concurrent streams each. `command` wraps the command line
 * (CPU pinning). Fails on any non-2xx answer or failed request.
 */
export async function h2load(
  command: (cmd: string, args: string[]) => [string, string[]],
  input: { name: string; port: number; path: string; clients: number; streams: number; seconds: number },
): Promise<H2loadResult> {
  const args = ['-t1', `-c${input.clients}`, `-m${input.streams}`, `-D${input.seconds}`, '--warm-up-time=1', `--connect-to=127.0.0.1:${input.port}`, `https://${input.name}:${input.port}${input.path}`];
  const out = await run(...command('h2load', args));
  const rps = Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out)?.[1]);
  const requests = /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed/.exec(out);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!requests || !codes || !Number.isFinite(rps)) throw new Error(`h2load against ${input.name}: unexpected output\n${out}`);
  const failed = Number(requests[4]);
  const non2xx = Number(codes[2]) + Number(codes[3]) + Number(codes[4]);
  if (failed > 0 || non2xx > 0 || Number(requests[3]) === 0) throw new Error(`h2load against ${input.name}: ${failed} failed, ${non2xx} non-2xx of ${requests[1]}\n${out}`);
  // h2load falls back to HTTP/1.1 silently when ALPN does not give it h2.
  if (!/Application protocol: h2\b/.test(out)) throw new Error(`h2load against ${input.name}: did not speak h2\n${out}`);
  const mean = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/.exec(out);
  return { rps, meanMs: mean ? unitMs(mean[1]!, mean[2]!) : NaN };
}
