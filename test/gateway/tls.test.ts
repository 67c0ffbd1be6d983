// The gateway terminating TLS itself (docs/shield-edge.md, "TLS"): certificates from a local CA
// (the client checks the chain against it) stored as the certificate store stores them, served by
// SNI for several sites on one port; what an unknown name gets; 421 for a request meant for
// another site; redirect and HSTS; a certificate replaced while requests keep coming on new
// connections; ACME HTTP-01 and TLS-ALPN-01 answers; OCSP stapling from a real `openssl ocsp`
// responder; the handshake and expiry metrics.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions, type SecureVersion } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SiteTlsSettings } from '../../platform/db/schema.ts';
import { makeCa, makeLeaf, publishHttp01, publishTlsAlpn01, setSiteTls, storeTestCertificate, testServerKey, type TestCa, type TestLeaf } from '../support/certificates.ts';
import { eventually } from '../support/gateway.ts';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let origin: Origin;
let ca: TestCa;
let serverKey: Buffer;
let tlsPort: number;
let plainPort: number;

beforeAll(async () => {
  origin = await startOrigin();
  ca = makeCa();
  t = await startTestServer({
    rateLimitPerMinute: 1_000_000,
    shieldEnabled: true,
    shieldPort: 0,
    shieldTlsPort: 0,
    // Clients are the TCP peers here: nothing in front of the gateway.
    trustedProxies: [],
    shieldAllowSampleRate: 1,
    metricsPort: 0,
    // The OCSP responder below is on loopback.
    allowPrivateTargets: true,
    // No site here asks for ACME; should one, it must not reach the internet.
    acmeDirectoryUrl: 'http://127.0.0.1:9/directory',
  });
  serverKey = await testServerKey(t.database.dataDir);
  tlsPort = t.server.gateway!.tlsPort!;
  plainPort = t.server.gateway!.port;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await origin?.close();
  ca?.close();
});

const refresh = async () => {
  await t.server.gateway!.registry.refresh();
  await t.server.gateway!.certificates!.refresh();
};

interface TestSite {
  id: string;
  orgId: string;
  host: string;
}

/** A site on the echo origin with `tls` settings and, unless `leaf` is null, a certificate for its domain. */
async function createSite(host: string, tls: Partial<SiteTlsSettings> = {}, leaf: TestLeaf | null = makeLeaf(ca, [host])): Promise<TestSite & { leaf: TestLeaf | null }> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', managed_rules: { enabled: false }, tls: { mode: 'off' } } });
  expect(res.status, res.text).toBe(201);
  const id = res.body.id as string;
  const { org_id: orgId } = await t.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', id).executeTakeFirstOrThrow();
  await setSiteTls(t.server.database.db, id, { mode: 'custom', ...tls });
  if (leaf) await storeTestCertificate(t.server.database.db, serverKey, { siteId: id, orgId, chainPem: leaf.chainPem, keyPem: leaf.keyPem });
  await refresh();
  return { id, orgId, host, leaf };
}

interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  fingerprint: string;
  protocol: string | false | null;
}

/** One request on a new TLS connection to the gateway (127.0.0.1), SNI `servername` (none when undefined). */
function httpsGet(servername: string | undefined, host: string, path = '/', options: { maxVersion?: SecureVersion; headers?: Record<string, string> } = {}): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: tlsPort, servername, path, headers: { host, ...options.headers }, ca: ca.certPem, agent: false, maxVersion: options.maxVersion },
      (res) => {
        const chunks: Buffer[] = [];
        const socket = res.socket as import('node:tls').TLSSocket;
        const fingerprint = socket.getPeerCertificate().fingerprint256;
        const protocol = socket.alpnProtocol;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), fingerprint, protocol }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * A bare handshake: what the client saw, or the error that ended it. The client then closes
 * cleanly (close_notify) and waits for the server to close too: destroying the socket at once
 * would discard the client's TLS 1.3 Finished, still queued for writing, so the server would never
 * see the handshake complete.
 */
function handshake(options: ConnectionOptions): Promise<{ ok: true; protocol: string | false | null; certificate: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort, ca: ca.certPem, ...options });
    let connected = false;
    socket.once('secureConnect', () => {
      connected = true;
      const seen = { ok: true as const, protocol: socket.alpnProtocol, certificate: socket.getPeerX509Certificate()?.toString() ?? '' };
      socket.once('close', () => resolve(seen));
      // Whatever the server sends first (HTTP/2 SETTINGS) is read and dropped, so its close is seen.
      socket.resume();
      socket.end();
    });
    // An error after the handshake (the server closing first) leaves the result as it was.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected) resolve({ ok: false, error: `${err.code ?? ''} ${err.message}` });
    });
  });
}

const echoOf = (answer: HttpsAnswer): Echo => JSON.parse(answer.body) as Echo;

describe('certificates by SNI', () => {
  let a: TestSite & { leaf: TestLeaf | null };
  let b: TestSite & { leaf: TestLeaf | null };
  beforeAll(async () => {
    a = await createSite('a.tls.test');
    b = await createSite('b.tls.test');
  });

  it('serves each site its own certificate on one port, and tells the origin the scheme', async () => {
    const answerA = await httpsGet('a.tls.test', 'a.tls.test', '/hello?x=1');
    expect(answerA.status).toBe(200);
    expect(answerA.fingerprint).toBe(a.leaf!.fingerprint);
    const echo = echoOf(answerA);
    expect(echo.url).toBe('/hello?x=1');
    expect(echo.headers['x-forwarded-proto']).toBe('https');
    expect(echo.headers.forwarded).toMatch(/proto=https/);
    const answerB = await httpsGet('b.tls.test', 'b.tls.test');
    expect(answerB.status).toBe(200);
    expect(answerB.fingerprint).toBe(b.leaf!.fingerprint);
  });

  it('refuses the handshake for a name no site serves, for no name, and for a site with TLS off', async () => {
    const unknown = await handshake({ servername: 'nobody.tls.test' });
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.error).toMatch(/unrecognized name|alert number 112|UNRECOGNIZED_NAME/i);
    const none = await handshake({});
    expect(!none.ok && none.error).toMatch(/unrecognized name|alert number 112|UNRECOGNIZED_NAME/i);
    const off = await createSite('off.tls.test', { mode: 'off' });
    expect(off.leaf).not.toBeNull();
    const refused = await handshake({ servername: 'off.tls.test' });
    expect(refused.ok).toBe(false);
    // The plain port still serves it.
    expect((await rawRequest(plainPort, 'GET / HTTP/1.1\r\nHost: off.tls.test\r\nConnection: close\r\n\r\n')).status).toBe(200);
  });

  it('answers 421 to a request for another site, or a name the certificate does not cover', async () => {
    const other = await httpsGet('a.tls.test', 'b.tls.test');
    expect(other.status).toBe(421);
    expect(other.fingerprint).toBe(a.leaf!.fingerprint);
    const unknown = await httpsGet('a.tls.test', 'nobody.tls.test');
    expect(unknown.status).toBe(421);
    const withPort = await httpsGet('a.tls.test', `a.tls.test:${tlsPort}`);
    expect(withPort.status).toBe(200);
  });

  it('negotiates http/1.1 or h2 by ALPN, TLS 1.3 by default', async () => {
    expect(await handshake({ servername: 'a.tls.test', ALPNProtocols: ['h2', 'http/1.1'] })).toMatchObject({ ok: true, protocol: 'h2' });
    expect(await handshake({ servername: 'a.tls.test', ALPNProtocols: ['http/1.1'] })).toMatchObject({ ok: true, protocol: 'http/1.1' });
    expect(await handshake({ servername: 'a.tls.test' })).toMatchObject({ ok: true, protocol: false });
    const tls12 = await handshake({ servername: 'a.tls.test', maxVersion: 'TLSv1.2' });
    expect(tls12.ok).toBe(true);
    // Weak suites are not offered: a client limited to CBC or RSA key exchange finds none in common.
    const cbc = await handshake({ servername: 'a.tls.test', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA:AES128-SHA:AES128-GCM-SHA256' });
    expect(cbc.ok).toBe(false);
    const tls11 = await handshake({ servername: 'a.tls.test', minVersion: 'TLSv1', maxVersion: 'TLSv1.1' });
    expect(tls11.ok).toBe(false);
  });

  it('honours a site\'s minimum of TLS 1.3', async () => {
    await createSite('modern.tls.test', { min_version: '1.3' });
    const old = await handshake({ servername: 'modern.tls.test', maxVersion: 'TLSv1.2' });
    expect(!old.ok && old.error).toMatch(/protocol version|alert number 70|PROTOCOL_VERSION/i);
    expect(await handshake({ servername: 'modern.tls.test' })).toMatchObject({ ok: true });
  });
});

describe('redirect and HSTS', () => {
  beforeAll(async () => {
    await createSite('secure.tls.test', { redirect_http: true, hsts: { max_age: 31_536_000, include_subdomains: true, preload: false } });
    await createSite('nocert.tls.test', { redirect_http: true }, null);
    const site = await t.server.database.db.selectFrom('shield_sites').select('id').where('domain', '=', 'secure.tls.test').executeTakeFirstOrThrow();
    const patch = await t.call('POST', `/api/v1/shield/sites/${site.id}/virtual-patches`, { body: { url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: 'attack' } });
    expect(patch.status, patch.text).toBe(201);
    await refresh();
  });

  it('redirects plain HTTP with 308 to the same path and query over HTTPS', async () => {
    const named = await rawRequest(plainPort, `GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: secure.tls.test:${plainPort}\r\nConnection: close\r\n\r\n`);
    expect(named.status).toBe(308);
    expect(named.head).toContain(`\r\nlocation: https://secure.tls.test:${tlsPort}/a/b?x=1&y=%20`);
    const defaultPort = await rawRequest(plainPort, 'GET /a HTTP/1.1\r\nHost: secure.tls.test\r\nConnection: close\r\n\r\n');
    expect(defaultPort.head).toContain('\r\nlocation: https://secure.tls.test/a');
  });

  it('does not redirect a site without a certificate, nor the ACME challenge path', async () => {
    expect((await rawRequest(plainPort, 'GET / HTTP/1.1\r\nHost: nocert.tls.test\r\nConnection: close\r\n\r\n')).status).toBe(200);
    const acme = await rawRequest(plainPort, 'GET /.well-known/acme-challenge/not-a-known-token-123 HTTP/1.1\r\nHost: secure.tls.test\r\nConnection: close\r\n\r\n');
    expect(acme.status).toBe(200);
    expect(acme.body).toContain('/.well-known/acme-challenge/not-a-known-token-123');
  });

  it('sends Strict-Transport-Security on every answer over TLS, the origin\'s and its own', async () => {
    const hsts = 'max-age=31536000; includeSubDomains';
    const allowed = await httpsGet('secure.tls.test', 'secure.tls.test', '/');
    expect(allowed.status).toBe(200);
    expect(allowed.headers['strict-transport-security']).toBe(hsts);
    const blocked = await httpsGet('secure.tls.test', 'secure.tls.test', '/search?q=attack');
    expect(blocked.status).toBe(403);
    expect(blocked.headers['strict-transport-security']).toBe(hsts);
    // Not over plain HTTP (the redirect itself), nor for sites without HSTS.
    expect((await rawRequest(plainPort, 'GET / HTTP/1.1\r\nHost: secure.tls.test\r\nConnection: close\r\n\r\n')).head.toLowerCase()).not.toContain('strict-transport-security');
    expect((await httpsGet('a.tls.test', 'a.tls.test')).headers['strict-transport-security']).toBeUndefined();
  });
});

describe('hot swap', () => {
  it('replaces a certificate while requests on new connections keep succeeding; open connections keep theirs', async () => {
    const site = await createSite('swap.tls.test');
    const replacement = makeLeaf(ca, ['swap.tls.test']);
    // A kept-alive connection opened before the swap; its next request is read by node's HTTP
    // parser (the origin's answer comes chunked), on that same socket.
    const before = await new Promise<{ fingerprint: string; again(): Promise<{ status: number; fingerprint: string }> }>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort, servername: 'swap.tls.test', ca: ca.certPem, ALPNProtocols: ['http/1.1'] }, () => {
        const again = () =>
          new Promise<{ status: number; fingerprint: string }>((done, fail) => {
            const req = httpsRequest({ createConnection: () => socket, path: '/kept', headers: { host: 'swap.tls.test' } }, (res) => {
              res.resume();
              res.on('end', () => done({ status: res.statusCode ?? 0, fingerprint: socket.getPeerCertificate().fingerprint256 }));
              res.on('error', fail);
            });
            req.on('error', fail);
            req.end();
          });
        resolve({ fingerprint: socket.getPeerCertificate().fingerprint256, again });
      });
      socket.on('error', reject);
    });
    expect(before.fingerprint).toBe(site.leaf!.fingerprint);

    const seen = new Set<string>();
    const failures: string[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        try {
          const answer = await httpsGet('swap.tls.test', 'swap.tls.test', '/loop');
          if (answer.status !== 200) failures.push(`status ${answer.status}`);
          seen.add(answer.fingerprint);
        } catch (err) {
          failures.push(String(err));
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await storeTestCertificate(t.server.database.db, serverKey, { siteId: site.id, orgId: site.orgId, chainPem: replacement.chainPem, keyPem: replacement.keyPem });
    await eventually(async () => seen.has(replacement.fingerprint), 10_000);
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await loop;
    expect(failures).toEqual([]);
    expect(seen).toEqual(new Set([site.leaf!.fingerprint, replacement.fingerprint]));
    // The connection from before the swap still works, on the certificate it was opened with.
    expect(await before.again()).toEqual({ status: 200, fingerprint: site.leaf!.fingerprint });
  });
});

describe('ACME challenges', () => {
  it('answers an HTTP-01 token for its domain on the plain port, before any site lookup', async () => {
    const token = 'tok_http01_abcdefghijklmnop';
    await publishHttp01(t.server.database.db, { domain: 'pending.tls.test', token, keyAuthorization: `${token}.thumbprint` });
    const answer = await rawRequest(plainPort, `GET /.well-known/acme-challenge/${token} HTTP/1.1\r\nHost: pending.tls.test\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(200);
    expect(answer.head.toLowerCase()).toContain('content-type: text/plain');
    expect(answer.body).toBe(`${token}.thumbprint`);
    // Another host's request for the token, or an expired token, is no answer: the pipeline has it (no site: 421).
    expect((await rawRequest(plainPort, `GET /.well-known/acme-challenge/${token} HTTP/1.1\r\nHost: other.tls.test\r\nConnection: close\r\n\r\n`)).status).toBe(421);
    const expired = 'tok_http01_expired_abcdefgh';
    await publishHttp01(t.server.database.db, { domain: 'pending.tls.test', token: expired, keyAuthorization: 'x', expiresInMs: -1_000 });
    expect((await rawRequest(plainPort, `GET /.well-known/acme-challenge/${expired} HTTP/1.1\r\nHost: pending.tls.test\r\nConnection: close\r\n\r\n`)).status).toBe(421);
  });

  it('answers a TLS-ALPN-01 handshake (ALPN acme-tls/1) with the challenge certificate', async () => {
    const { certPem } = await publishTlsAlpn01(t.server.database.db, serverKey, { domain: 'alpn.tls.test', token: 'tok_alpn', keyAuthorization: 'tok_alpn.thumbprint' });
    const answer = await handshake({ servername: 'alpn.tls.test', ALPNProtocols: ['acme-tls/1'], rejectUnauthorized: false });
    expect(answer).toMatchObject({ ok: true, protocol: 'acme-tls/1' });
    expect(answer.ok && new X509Certificate(answer.certificate).fingerprint256).toBe(new X509Certificate(certPem).fingerprint256);
    // No challenge for the name: refused.
    expect((await handshake({ servername: 'nochallenge.tls.test', ALPNProtocols: ['acme-tls/1'], rejectUnauthorized: false })).ok).toBe(false);
  });
});

describe('OCSP stapling', () => {
  let responder: ChildProcess | undefined;
  afterAll(() => responder?.kill());

  /** A free loopback port (closed again for the responder to take). */
  const freePort = () =>
    new Promise<number>((resolve) => {
      const s = createNetServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });

  /** The OCSP response the server staples to a handshake asking for one (null: none). */
  const stapled = (servername: string) =>
    new Promise<Buffer | null>((resolve, reject) => {
      let response: Buffer | null = null;
      // requestOCSP is a tls.connect option @types/node does not declare.
      const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort, servername, ca: ca.certPem, requestOCSP: true } as ConnectionOptions);
      // Node reports no staple as null (or an empty buffer).
      socket.on('OCSPResponse', (r: Buffer | null) => (response = r && r.length > 0 ? r : null));
      socket.once('secureConnect', () => {
        socket.destroy();
        resolve(response);
      });
      socket.once('error', reject);
    });

  it('staples the responder\'s answer for a certificate that names one, and nothing for one that does not', async () => {
    const port = await freePort();
    const leaf = makeLeaf(ca, ['ocsp.tls.test'], { ocspUrl: `http://127.0.0.1:${port}` });
    const index = ca.issued.map((c) => `V\t${c.notAfter.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z\t\t${c.serialHex}\tunknown\t${c.subject}`).join('\n');
    writeFileSync(join(ca.dir, 'index.txt'), `${index}\n`);
    // Two leaves may share a subject (a replaced certificate): openssl refuses such an index unless told.
    writeFileSync(join(ca.dir, 'index.txt.attr'), 'unique_subject = no\n');
    // Ready once it says it listens (ACCEPT, on stdout). Not by connecting to see: `openssl ocsp`
    // serves one connection at a time and one that closes without a request wedges it.
    const proc = spawn('openssl', ['ocsp', '-index', 'index.txt', '-port', String(port), '-rsigner', 'ca.crt', '-rkey', 'ca.key', '-CA', 'ca.crt', '-ndays', '1'], { cwd: ca.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    responder = proc;
    let output = '';
    proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await eventually(async () => output.includes('ACCEPT') || proc.exitCode !== null, 10_000);
    expect(proc.exitCode, output).toBeNull();
    await createSite('ocsp.tls.test', {}, leaf);
    let response: Buffer | null = null;
    await eventually(async () => (response = await stapled('ocsp.tls.test')) !== null, 15_000, 100);
    writeFileSync(join(ca.dir, 'stapled.der'), response!);
    writeFileSync(join(ca.dir, 'leaf.pem'), leaf.certPem);
    const verdict = execFileSync('openssl', ['ocsp', '-respin', 'stapled.der', '-issuer', 'ca.crt', '-cert', 'leaf.pem', '-CAfile', 'ca.crt', '-no_nonce'], { cwd: ca.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(verdict).toContain('leaf.pem: good');
    await createSite('noocsp.tls.test');
    expect(await stapled('noocsp.tls.test')).toBeNull();
  });
});

describe('metrics', () => {
  it('counts handshakes by result and protocol, and says when each served certificate expires', async () => {
    const site = await t.server.database.db.selectFrom('shield_sites').select('id').where('domain', '=', 'a.tls.test').executeTakeFirstOrThrow();
    await handshake({ servername: 'a.tls.test', ALPNProtocols: ['h2'] });
    await handshake({ servername: 'nobody.tls.test' });
    const text = await (await fetch(`${t.server.metricsServer!.url}/metrics`)).text();
    expect(text).toMatch(/aegis_shield_tls_handshakes_total\{result="ok",protocol="h2"\} [1-9]/);
    expect(text).toMatch(/aegis_shield_tls_handshakes_total\{result="unknown_name",protocol="none"\} [1-9]/);
    const seconds = Number(new RegExp(`aegis_shield_certificate_expiry_seconds\\{site="${site.id}"\\} (\\d+)`).exec(text)?.[1]);
    // 30-day test certificates.
    expect(seconds).toBeGreaterThan(29 * 86_400);
    expect(seconds).toBeLessThanOrEqual(30 * 86_400);
  });
});
