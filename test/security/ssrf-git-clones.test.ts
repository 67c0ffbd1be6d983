// Finding 1, as the attack: code scans (secrets, SAST, SCA) and config repositories on a server with
// default settings, pointed at the server's own network — loopback over http and git://, the cloud
// metadata address, localhost and IPv6 spellings of loopback, ssh. Each request must be refused
// with a 422 naming the setting, and the "internal service" (a real listener) must never see a
// connection. Names are not judged at request time, so the clone itself is attacked too: a name
// that resolves to loopback (a real DNS server, AEGIS_DNS_SERVERS) and a repository host the
// operator configured whose answer redirects git to another loopback address (127.0.0.2). Both
// scans must fail with the outbound policy's refusal, and the internal service must never be reached.
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { eventually } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTripwire, type Tripwire } from '../support/tripwire.ts';

const SCAN_TYPES = ['secrets', 'sast', 'sca'] as const;

/** A raw TCP listener counting connections (git:// and ssh speak no HTTP). */
async function tcpTripwire(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server: NetServer = createNetServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, connections: () => connections, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function scanOutcome(t: TestServer, id: string): Promise<{ status: string; error: string | null }> {
  let scan = { status: 'queued', error: null as string | null };
  await eventually(async () => {
    scan = (await t.call('GET', `/api/v1/scans/${id}`)).body;
    return scan.status === 'failed' || scan.status === 'completed';
  }, 30_000, 100);
  return scan;
}

describe('code scans and config repositories on private addresses (default settings)', () => {
  let t: TestServer;
  let internal: Tripwire;
  let raw: Awaited<ReturnType<typeof tcpTripwire>>;

  beforeAll(async () => {
    [t, internal, raw] = await Promise.all([startTestServer({ rateLimitPerMinute: 100_000 }), startTripwire(), tcpTripwire()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), internal?.close(), raw?.close()]);
  });

  const targets = (): string[] => [
    `${internal.url}/acme/app.git`,
    `git://127.0.0.1:${raw.port}/acme/app`,
    'http://169.254.169.254/latest/meta-data/iam.git',
    `http://localhost:${internal.port}/acme/app.git`,
    `https://[::1]:${internal.port}/acme/app.git`,
    `http://[::ffff:7f00:1]:${internal.port}/acme/app.git`,
    `http://2130706433:${internal.port}/acme/app.git`,
    `ssh://git@127.0.0.1:${raw.port}/acme/app.git`,
    `git@127.0.0.1:acme/app.git`,
  ];

  it('refuses each scan at once (422 on `target`, naming AEGIS_ALLOW_PRIVATE_TARGETS)', async () => {
    for (const scanType of SCAN_TYPES) {
      for (const target of targets()) {
        const res = await t.call('POST', `/api/v1/${scanType}/scans`, { body: { target } });
        expect(res.status, `${scanType} ${target}: ${res.text}`).toBe(422);
        expect(res.body.error.details.fields[0].field).toBe('target');
        expect(res.body.error.message).toMatch(/AEGIS_ALLOW_PRIVATE_TARGETS/);
      }
    }
    expect((await t.call('GET', '/api/v1/scans')).body.data).toEqual([]);
  });

  it('refuses each config repository at once (422 on `url`), on create and on update', async () => {
    for (const url of targets()) {
      const res = await t.call('POST', '/api/v1/config-repos', { body: { name: 'internal', url } });
      expect(res.status, `${url}: ${res.text}`).toBe(422);
      expect(res.body.error.details.fields[0].field).toBe('url');
      expect(res.body.error.message).toMatch(/AEGIS_ALLOW_PRIVATE_TARGETS/);
    }
    // A repository saved with a name may not be moved onto a private address either.
    const created = await t.call('POST', '/api/v1/config-repos', { body: { name: 'public', url: 'https://git.invalid/acme/config.git', poll_interval_seconds: 3600 } });
    expect(created.status, created.text).toBe(201);
    const moved = await t.call('PATCH', `/api/v1/config-repos/${created.body.id}`, { body: { url: `${internal.url}/acme/config.git` } });
    expect(moved.status, moved.text).toBe(422);
    await t.call('DELETE', `/api/v1/config-repos/${created.body.id}`);
  });

  it('the internal services never saw a connection', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(internal.connections).toBe(0);
    expect(raw.connections()).toBe(0);
  });
});

describe('the clone itself: DNS answers and redirects that lead to private addresses', () => {
  let dns: DnsServer;
  let t: TestServer;
  let internal: Tripwire;
  let internalOther: Tripwire;
  let redirector: Tripwire;

  beforeAll(async () => {
    [dns, internal, internalOther] = await Promise.all([startDnsServer(), startTripwire('127.0.0.1'), startTripwire('127.0.0.2')]);
    // The operator's configured GitHub (AEGIS_GITHUB_URL): an operator endpoint, reachable on
    // loopback. It answers every clone with a redirect to another loopback address.
    redirector = await startTripwire('127.0.0.1', (req, res) => res.writeHead(301, { location: `${internalOther.url}${req.url}` }).end());
    dns.set('repo.internal.test', ['127.0.0.1']);
    dns.set('repo6.internal.test', ['::1']);
    t = await startTestServer({
      rateLimitPerMinute: 100_000,
      dnsServers: [dns.server],
      providers: { ...loadProviderSettings({}), github: { clientId: undefined, clientSecret: undefined, webUrl: redirector.url, apiUrl: `${redirector.url}/api/v3` } },
    });
  });
  afterAll(async () => {
    await Promise.all([t?.close(), dns?.close(), internal?.close(), internalOther?.close(), redirector?.close()]);
  });

  it('a name that resolves to loopback: the scan is taken (names are judged when connected to), then fails with the refusal', async () => {
    for (const target of [`http://repo.internal.test:${internal.port}/acme/app.git`, `git://repo.internal.test:${internal.port}/acme/app`, `http://repo6.internal.test:${internal.port}/acme/app.git`]) {
      const started = await t.call('POST', '/api/v1/secrets/scans', { body: { target } });
      expect(started.status, started.text).toBe(202);
      const scan = await scanOutcome(t, started.body.id);
      expect(scan.status, target).toBe('failed');
      expect(scan.error).toMatch(/was refused: repo6?\.internal\.test: (127\.0\.0\.1|::1) is a private, loopback, link-local or reserved .*AEGIS_ALLOW_PRIVATE_TARGETS/);
    }
    expect(dns.queries).toContain('A repo.internal.test');
    expect(internal.connections).toBe(0);
  });

  it('a config repository whose name resolves to loopback: the sync fails with the refusal', async () => {
    const created = await t.call('POST', '/api/v1/config-repos', { body: { name: 'rebinding', url: `http://repo.internal.test:${internal.port}/acme/config.git`, poll_interval_seconds: 3600 } });
    expect(created.status, created.text).toBe(201);
    const requested = await t.call('POST', `/api/v1/config-repos/${created.body.id}/sync`);
    expect(requested.status, requested.text).toBe(202);
    let sync = requested.body;
    await eventually(async () => {
      sync = (await t.call('GET', `/api/v1/config-repos/${created.body.id}/syncs/${requested.body.id}`)).body;
      return sync.status === 'completed';
    }, 30_000, 100);
    expect(sync.result).toBe('failed');
    expect(sync.failure_stage).toBe('fetch');
    expect(sync.errors.join('\n')).toMatch(/was refused: repo\.internal\.test: 127\.0\.0\.1 is a private.*AEGIS_ALLOW_PRIVATE_TARGETS/);
    expect(internal.connections).toBe(0);
  });

  it('a redirect from the configured git host to another loopback address is refused on that hop', async () => {
    const started = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${redirector.url}/acme/app.git` } });
    expect(started.status, started.text).toBe(202);
    const scan = await scanOutcome(t, started.body.id);
    expect(scan.status).toBe('failed');
    expect(scan.error).toMatch(/was refused: 127\.0\.0\.2: 127\.0\.0\.2 is a private, loopback, link-local or reserved address.*AEGIS_ALLOW_PRIVATE_TARGETS/);
    // git asked the configured host, which redirected it; the redirect's target never saw git.
    expect(redirector.requests.some((r) => r.startsWith('GET /acme/app.git/info/refs'))).toBe(true);
    expect(internalOther.connections).toBe(0);
  });
});
