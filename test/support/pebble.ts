// Let's Encrypt's test ACME server, pebble (Debian's `pebble`, /usr/bin/pebble), one per test file:
// its own ports, a config written to a temp dir, its HTTPS served with a certificate made here (a
// self-signed one for 127.0.0.1, which the server under test trusts through AEGIS_ACME_CA_CERTS).
// Its validation authority connects to the gateway's plain and TLS ports (`httpPort`, `tlsPort`)
// at the address the test's DNS server gives for a domain (`-dnsserver`). No random validation
// delays, no rejected nonces, no reused authorizations: every order is validated for real.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './loopback.ts';

export const PEBBLE = '/usr/bin/pebble';

/** Whether pebble tests run: pebble installed, or CI (where its absence must fail, not skip). */
export const pebbleTestsRun = (): boolean => existsSync(PEBBLE) || process.env.CI !== undefined || process.env.AEGIS_REQUIRE_PEBBLE === '1';

export interface PebbleOptions {
  /** The gateway's plain port (HTTP-01) and TLS port (TLS-ALPN-01). */
  httpPort: number;
  tlsPort: number;
  /** `127.0.0.1:port` of the DNS server that resolves the test domains. */
  dnsServer: string;
  /** Lifetime of the certificates it issues (default pebble's, five years). */
  validitySeconds?: number;
}

export interface Pebble {
  /** AEGIS_ACME_DIRECTORY_URL. */
  directoryUrl: string;
  /** AEGIS_ACME_CA_CERTS: the certificate of pebble's own HTTPS. */
  caCertsPath: string;
  /** The root that issues its certificates (management interface /roots/0, new on every start). */
  root(): Promise<string>;
  /** Its output so far. */
  output(): string;
  close(): Promise<void>;
}


function get(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on('error', reject).on('timeout', () => req.destroy(new Error(`${url}: timed out`))).end();
  });
}

export async function startPebble(options: PebbleOptions): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-pebble-'));
  const certPath = join(dir, 'https-cert.pem');
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'https-key.pem'), '-out', certPath, '-days', '2', '-subj', '/CN=pebble test', '-addext', 'subjectAltName=IP:127.0.0.1']);
  const [port, managementPort] = [await freePort(), await freePort()];
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${port}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: certPath,
      privateKey: join(dir, 'https-key.pem'),
      httpPort: options.httpPort,
      tlsPort: options.tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      ...(options.validitySeconds ? { certificateValidityPeriod: options.validitySeconds } : {}),
    },
  };
  writeFileSync(join(dir, 'pebble.json'), JSON.stringify(config));
  const child: ChildProcess = spawn(PEBBLE, ['-config', join(dir, 'pebble.json'), '-dnsserver', options.dnsServer], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ca = readFileSync(certPath, 'utf8');
  const directoryUrl = `https://127.0.0.1:${port}/dir`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pebble exited (${child.exitCode}):\n${output}`);
    try {
      await get(directoryUrl, ca);
      break;
    } catch (err) {
      if (Date.now() - started > 15_000) {
        child.kill();
        throw new Error(`pebble did not answer at ${directoryUrl}: ${(err as Error).message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    directoryUrl,
    caCertsPath: certPath,
    root: () => get(`https://127.0.0.1:${managementPort}/roots/0`, ca),
    output: () => output,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
