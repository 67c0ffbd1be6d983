// Certificates from ACME, end to end against Let's Encrypt's test server (pebble): the real server
// orders them through its job queue, pebble's validation authority reaches the real gateway (plain
// port for HTTP-01, TLS port for TLS-ALPN-01) at the address a real DNS server gives, and a client
// then fetches the site over HTTPS, checking the chain against pebble's root. Renewal swaps the
// certificate under a stream of requests; a failing order leaves the served certificate alone.
// Needs pebble (Debian `pebble`); skipped only where it is missing and CI is not set.
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../api/config.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { freePort } from '../support/loopback.ts';
import { pebbleTestsRun, startPebble, type Pebble } from '../support/pebble.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const ORDER_JOB = 'shield.certificate.order';
let dns: DnsServer;
let origin: Origin;
let pebble: Pebble;
let root: string;
let httpPort: number;
let tlsPort: number;

beforeAll(async () => {
  if (!pebbleTestsRun()) return;
  dns = await startDnsServer();
  origin = await startOrigin();
  [httpPort, tlsPort] = [await freePort(), await freePort()];
  pebble = await startPebble({ httpPort, tlsPort, dnsServer: dns.server });
  root = await pebble.root();
}, 60_000);
afterAll(async () => {
  await pebble?.close();
  await origin?.close();
  await dns?.close();
});

/** A server whose gateway listens where pebble validates, ordering from pebble every 200 ms. */
function startAcmeServer(overrides: Partial<ServerConfig>): Promise<TestServer> {
  return startTestServer({
    shieldEnabled: true,
    shieldPort: httpPort,
    shieldTlsPort: tlsPort,
    shieldRefreshMs: 100,
    acmeDirectoryUrl: pebble.directoryUrl,
    acmeCaCertsPath: pebble.caCertsPath,
    acmeCheckIntervalMs: 200,
    metricsPort: 0,
    ...overrides,
  });
}

async function createAcmeSite(t: TestServer, domain: string): Promise<string> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain, origin_url: origin.url, mode: 'block', tls: { mode: 'acme' } } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const certificateRow = (t: TestServer, siteId: string) => t.server.database.db.selectFrom('shield_certificates').selectAll().where('site_id', '=', siteId).executeTakeFirst();
const orderRow = (t: TestServer, siteId: string) => t.server.database.db.selectFrom('shield_certificate_orders').selectAll().where('site_id', '=', siteId).executeTakeFirst();

async function waitForCertificate(t: TestServer, siteId: string, other?: string): Promise<{ fingerprint: string; updated_at: Date }> {
  let found: { fingerprint: string; updated_at: Date } | undefined;
  await eventually(async () => {
    const row = await certificateRow(t, siteId);
    if (row && row.fingerprint !== other) found = row;
    return found !== undefined;
  }, 60_000, 100);
  return found!;
}

interface Served {
  status: number;
  body: string;
  /** SHA-256 of the certificate the gateway presented, `AB:CD:…`. */
  fingerprint: string;
}

/** One HTTPS request on a new connection to the gateway's TLS port, for `domain` (SNI and Host), trusting pebble's root only. */
function https(domain: string, path = '/'): Promise<Served> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: tlsPort, servername: domain, path, headers: { host: domain }, ca: root, agent: false, timeout: 5_000 }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }));
    });
    req.on('error', reject).on('timeout', () => req.destroy(new Error('timed out'))).end();
  });
}

/** Waits until the gateway serves `fingerprint` for `domain` (its certificate cache polls the table). */
async function waitUntilServed(domain: string, fingerprint: string): Promise<Served> {
  let served: Served | undefined;
  await eventually(async () => {
    served = await https(domain).catch(() => undefined);
    return served?.fingerprint === fingerprint;
  }, 10_000, 50);
  return served!;
}

async function metricsText(t: TestServer): Promise<string> {
  return (await fetch(`${t.server.metricsServer!.url}/metrics`)).text();
}

/** TLS-ALPN-01 handshakes the gateway completed with a challenge certificate (its `acme-tls/1` server). */
async function acmeTlsHandshakes(t: TestServer): Promise<number> {
  const line = /^aegis_shield_tls_handshakes_total\{(?=[^}]*result="ok")(?=[^}]*protocol="acme-tls\/1")[^}]*\} (\d+)$/m.exec(await metricsText(t));
  return line ? Number(line[1]) : 0;
}

/** The challenges the CA validated in the site's first order, as the order logged them (`acme: certificate obtained`, written just after the certificate is stored). */
async function validatedChallenges(t: TestServer, siteId: string): Promise<{ type: string; token: string }[]> {
  let line: string | undefined;
  await eventually(async () => (line = t.logs.find((l) => l.includes('acme: certificate obtained') && l.includes(siteId))) !== undefined, 5_000, 20);
  return (JSON.parse(line!) as { validated: { type: string; token: string }[] }).validated;
}

/** Pebble's line for one HTTP-01 fetch of `token` from `domain` (va/va.go: the only challenge type it logs by name). */
const http01Fetch = (domain: string, token: string): string => `Attempting to validate w/ HTTP: http://${domain}:${httpPort}/.well-known/acme-challenge/${token}`;

describe.runIf(pebbleTestsRun())('ACME with HTTP-01', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startAcmeServer({ acmeChallenges: ['http-01'] });
  }, 60_000);
  afterAll(() => t?.close());

  it('obtains a certificate through HTTP-01 and serves HTTPS with it, the chain checked against pebble\'s root', async () => {
    const domain = 'http01.acme.test';
    dns.set(domain, ['127.0.0.1']);
    const siteId = await createAcmeSite(t, domain);
    const stored = await waitForCertificate(t, siteId);
    const row = (await certificateRow(t, siteId))!;
    expect(row).toMatchObject({ source: 'acme', names: [domain] });
    expect(row.issuer).toMatch(/Pebble Intermediate CA/);
    expect(await orderRow(t, siteId)).toMatchObject({ status: 'valid', attempts: 0, last_error: null, job_id: null });
    // The one challenge was HTTP-01: pebble fetched its token from the gateway's plain port (and,
    // the authorization being valid, got the key authorization there); no TLS-ALPN-01 handshake
    // happened. Its row is gone with the order.
    const validated = await validatedChallenges(t, siteId);
    expect(validated).toEqual([{ type: 'http-01', token: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/) }]);
    expect(pebble.output()).toContain(http01Fetch(domain, validated[0]!.token));
    expect(await acmeTlsHandshakes(t)).toBe(0);
    expect(dns.queries).toContain(`A ${domain}`);
    expect(await t.server.database.db.selectFrom('acme_challenges').select('id').where('domain', '=', domain).execute()).toEqual([]);

    const served = await waitUntilServed(domain, stored.fingerprint);
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ method: 'GET', url: '/' });

    // The account exists once, its key sealed; no key anywhere in what the API shows or logs.
    const accounts = await t.server.database.db.selectFrom('acme_accounts').selectAll().execute();
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ directory_url: pebble.directoryUrl, email: null });
    expect(accounts[0]!.account_url).toMatch(/^https:\/\/127\.0\.0\.1:/);
    expect(accounts[0]!.key_sealed).not.toMatch(/PRIVATE KEY/);
    const site = await t.call('GET', `/api/v1/shield/sites/${siteId}`);
    expect(site.text).not.toMatch(/PRIVATE KEY/);
    expect(t.logs.join('\n')).not.toMatch(/PRIVATE KEY/);
    expect(t.logs.some((line) => line.includes('acme: certificate obtained') && line.includes(siteId))).toBe(true);
    expect(await metricsText(t)).toMatch(/aegis_shield_certificate_orders_total\{result="issued"\} 1/);
  }, 90_000);

  it('two organisations with sites on one domain: each gets a certificate, one order at a time', async () => {
    const domain = 'shared.acme.test';
    dns.set(domain, ['127.0.0.1']);
    const otherKey = await keyInOrganization(t, 'acme-other', ['admin']);
    const first = await createAcmeSite(t, domain);
    const other = await t.call('POST', '/api/v1/shield/sites', { key: otherKey, body: { domain, origin_url: origin.url, mode: 'block', tls: { mode: 'acme' } } });
    expect(other.status, other.text).toBe(201);
    await waitForCertificate(t, first);
    await waitForCertificate(t, other.body.id);
    const runs = await t.server.database.db
      .selectFrom('jobs')
      .select(['started_at', 'finished_at', sql<string>`payload->>'site_id'`.as('site_id')])
      .where('kind', '=', ORDER_JOB)
      .where(sql<boolean>`payload->>'site_id' in (${first}, ${other.body.id})`)
      .orderBy('started_at')
      .execute();
    expect(new Set(runs.map((r) => r.site_id))).toEqual(new Set([first, other.body.id]));
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.started_at!.getTime()).toBeGreaterThanOrEqual(runs[i - 1]!.finished_at!.getTime());
  }, 90_000);

  it('a failing order records shield.certificate.failed, backs off five minutes and does not retry meanwhile', async () => {
    const domain = 'nowhere.acme.test'; // not in the DNS server: NXDOMAIN
    const siteId = await createAcmeSite(t, domain);
    let order: Awaited<ReturnType<typeof orderRow>>;
    await eventually(async () => (order = await orderRow(t, siteId))?.status === 'failed', 60_000, 100);
    const failedAt = Date.now();
    expect(order!.attempts).toBe(1);
    expect(order!.last_error).toMatch(/nowhere\.acme\.test/);
    const backoff = order!.next_attempt_at!.getTime() - failedAt;
    expect(backoff).toBeGreaterThan(4 * 60_000);
    expect(backoff).toBeLessThanOrEqual(5 * 60_000);
    expect(await certificateRow(t, siteId)).toBeUndefined();

    const events = await t.call('GET', '/api/v1/events?type=shield.certificate.failed');
    expect(events.status).toBe(200);
    const event = events.body.data.find((e: { data: { object: { site_id: string } } }) => e.data.object.site_id === siteId);
    expect(event.data.object).toEqual({
      object: 'shield_certificate_order',
      site_id: siteId,
      domain,
      attempts: 1,
      error: order!.last_error,
      next_attempt_at: order!.next_attempt_at!.toISOString(),
    });
    expect(await metricsText(t)).toMatch(/aegis_shield_certificate_orders_total\{result="failed"\} 1/);
    expect(t.logs.some((line) => line.includes('acme: certificate order failed') && line.includes(siteId))).toBe(true);

    // Several scheduler passes later: still the one job, the order still failed.
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await t.server.database.db.selectFrom('jobs').select('id').where('kind', '=', ORDER_JOB).where(sql<boolean>`payload->>'site_id' = ${siteId}`).execute();
    expect(jobs).toHaveLength(1);
    expect(await orderRow(t, siteId)).toMatchObject({ status: 'failed', attempts: 1 });
  }, 90_000);
});

describe.runIf(pebbleTestsRun())('ACME with TLS-ALPN-01, renewing', () => {
  let t: TestServer;
  const domain = 'alpn.acme.test';
  let siteId: string;
  beforeAll(async () => {
    // Renewal due as soon as a certificate is issued: pebble's last five years, this is ten.
    t = await startAcmeServer({ acmeChallenges: ['tls-alpn-01'], acmeRenewBeforeDays: 3650 });
  }, 60_000);
  afterAll(() => t?.close());

  it('obtains a certificate through TLS-ALPN-01 and serves HTTPS with it', async () => {
    dns.set(domain, ['127.0.0.1']);
    siteId = await createAcmeSite(t, domain);
    const stored = await waitForCertificate(t, siteId);
    // The one challenge was TLS-ALPN-01: the gateway's TLS port completed `acme-tls/1` handshakes
    // with the challenge certificate (pebble validates from several perspectives, each a handshake),
    // and pebble never fetched anything over HTTP for the domain.
    const validated = await validatedChallenges(t, siteId);
    expect(validated).toEqual([{ type: 'tls-alpn-01', token: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/) }]);
    expect(await acmeTlsHandshakes(t)).toBeGreaterThanOrEqual(1);
    expect(pebble.output()).not.toContain(`http://${domain}:`);
    const served = await waitUntilServed(domain, stored.fingerprint);
    expect(served.status).toBe(200);
  }, 90_000);

  it('renewal replaces the certificate while requests keep succeeding', async () => {
    const seen = new Set<string>();
    let failures = 0;
    let requests = 0;
    const before = (await certificateRow(t, siteId))!.fingerprint;
    // A client loop on new connections (each handshake picks the certificate served at that moment).
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        try {
          const res = await https(domain);
          requests++;
          if (res.status !== 200) failures++;
          seen.add(res.fingerprint);
        } catch {
          failures++;
        }
      }
    })();
    try {
      await eventually(async () => seen.size >= 3, 60_000, 100);
    } finally {
      stop = true;
      await loop;
    }
    // Two swaps at least, seen by clients, and not one request lost to them.
    expect(failures).toBe(0);
    expect(requests).toBeGreaterThan(10);
    expect((await certificateRow(t, siteId))!.fingerprint).not.toBe(before);
  }, 90_000);

  it('a failing renewal leaves the served certificate as it is and backs off', async () => {
    dns.set(domain, []); // the name exists, with no address: validation fails
    let order: Awaited<ReturnType<typeof orderRow>>;
    await eventually(async () => (order = await orderRow(t, siteId))?.status === 'failed', 60_000, 100);
    expect(order!.attempts).toBe(1);
    expect(order!.next_attempt_at!.getTime()).toBeGreaterThan(Date.now() + 4 * 60_000);
    const kept = (await certificateRow(t, siteId))!;
    // Served still, and unchanged over several scheduler passes.
    await new Promise((r) => setTimeout(r, 1_500));
    const served = await waitUntilServed(domain, kept.fingerprint);
    expect(served.status).toBe(200);
    const after = (await certificateRow(t, siteId))!;
    expect(after.fingerprint).toBe(kept.fingerprint);
    expect(after.updated_at.getTime()).toBe(kept.updated_at.getTime());
    expect(await orderRow(t, siteId)).toMatchObject({ status: 'failed', attempts: 1 });
    const events = await t.call('GET', '/api/v1/events?type=shield.certificate.failed');
    expect(events.body.data.filter((e: { data: { object: { site_id: string } } }) => e.data.object.site_id === siteId)).toHaveLength(1);
  }, 90_000);
});
