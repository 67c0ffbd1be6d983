// A Shield origin may not be a cloud metadata or link-local address: the classification itself, and
// the gateway's connect-time check — a real API server running the gateway, a real local origin,
// and a real DNS server (test/support/dns-server.ts, reached through AEGIS_SHIELD_DNS_SERVERS) whose
// answers a test changes after the API accepted the name (DNS rebinding).
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metadataAddress } from '../../platform/net/metadata-address.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { viaGateway } from '../support/gateway.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe('metadata and link-local address classification', () => {
  const refused = [
    // link-local IPv4, where 169.254.169.254 (AWS, GCP, Azure, OCI…), ECS 169.254.170.2, EKS 169.254.170.23 answer
    '169.254.169.254', '169.254.0.0', '169.254.255.255', '169.254.170.2', '169.254.170.23',
    // link-local IPv6, zone or not
    'fe80::1', 'fe80::a9fe:a9fe', 'febf:ffff::1', 'fe80::1%eth0', 'FE80::1',
    // known endpoints outside link-local
    '100.100.100.200', '192.0.0.192', '168.63.129.16',
    'fd00:ec2::254', 'FD00:EC2:0:0:0:0:0:254', 'fd00:ec2::23', 'fd20:ce::254', 'fd00:c1::a9fe:a9fe',
    // IPv6 forms that carry one of the IPv4 addresses
    '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::FFFF:A9FE:A9FE', '0:0:0:0:0:ffff:a9fe:a9fe', '::ffff:100.100.100.200', '::ffff:6464:64c8', '::ffff:168.63.129.16', '::ffff:192.0.0.192',
    '::ffff:0:a9fe:a9fe', '::169.254.169.254', '::a9fe:a9fe', '64:ff9b::a9fe:a9fe', '64:ff9b::100.100.100.200',
    // 6to4, Teredo (server, and client: the inverted low 32 bits) and local-use NAT64 forms of them
    // (schemas/checks/ipv4-in-ipv6.ts; 2002:a9fe:a9fe::1 was allowed before the one shared decoder)
    '2002:a9fe:a9fe::1', '2001:0:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:5601:5601', '64:ff9b:1::a9fe:a9fe',
  ];
  it.each(refused)('refuses %s', (address) => {
    expect(metadataAddress(address)).toMatch(new RegExp(`^${address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is `));
  });

  const allowed = [
    // private and loopback ranges stay allowed: origins are usually internal
    '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.10', '127.0.0.1', '::1', 'fc00::1', 'fd12:3456:789a::1',
    // next to the refused ones
    '169.253.255.255', '169.255.0.0', '100.100.100.201', '100.64.0.1', '192.0.0.193', '168.63.129.17', 'fd00:ec2::1', 'fd00:ec2::255', 'fd20:ce::253', 'fec0::1', 'fe7f:ffff::1',
    // mapped forms of allowed addresses, other embeddings
    '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::808:808', '2002:a00:1::1',
    // public, unspecified, and names (judged by what they resolve to, never by spelling)
    '8.8.8.8', '2001:db8::1', '0.0.0.0', '::', 'metadata.google.internal', '', '2852039166',
  ];
  it.each(allowed)('allows %s', (address) => {
    expect(metadataAddress(address)).toBeNull();
  });

  it('agrees with ipaddr.js on link-local, mapped or not, across the ranges’ edges', () => {
    const v4s: string[] = [];
    for (const a of [0, 127, 168, 169, 170, 254, 255]) for (const b of [0, 253, 254, 255]) for (const c of [0, 169, 255]) v4s.push(`${a}.${b}.${c}.${(a * 7 + b + c) % 256}`);
    const known = new Set(['100.100.100.200', '192.0.0.192', '168.63.129.16']);
    for (const v4 of v4s) {
      const expected = ipaddr.IPv4.parse(v4).range() === 'linkLocal' || known.has(v4);
      expect(metadataAddress(v4) !== null, v4).toBe(expected);
      expect(metadataAddress(`::ffff:${v4}`) !== null, `::ffff:${v4}`).toBe(expected);
      expect(metadataAddress(ipaddr.IPv4.parse(v4).toIPv4MappedAddress().toRFC5952String()) !== null, `mapped ${v4}`).toBe(expected);
    }
    for (const first of ['fe7f', 'fe80', 'fe81', 'fea0', 'febf', 'fec0', 'ff02', 'fc00', '2001']) {
      const v6 = `${first}::1`;
      expect(metadataAddress(v6) !== null, v6).toBe(ipaddr.IPv6.parse(v6).range() === 'linkLocal');
    }
  });
});

describe('the gateway at connect time', () => {
  let t: TestServer;
  let origin: Origin;
  let dns: DnsServer;
  let originPort: string;

  beforeAll(async () => {
    [origin, dns] = await Promise.all([startOrigin(), startDnsServer()]);
    originPort = new URL(origin.url).port;
    t = await startTestServer({ shieldEnabled: true, shieldPort: 0, trustedProxies: ['127.0.0.1', '::1'], shieldDnsServers: [dns.server], shieldAllowSampleRate: 1 });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([origin?.close(), dns?.close()]);
  });

  let count = 0;
  async function createSite(originUrl: string): Promise<{ id: string; host: string }> {
    const host = `origin${++count}.policy.test`;
    const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: originUrl, mode: 'block', managed_rules: { enabled: false } } });
    expect(res.status, res.text).toBe(201);
    await t.server.gateway!.registry.refresh();
    return { id: res.body.id, host };
  }

  const refusalLogs = (originText: string) =>
    t.logs.map((line) => JSON.parse(line) as { msg?: string; origin?: string; reason?: string }).filter((l) => l.msg?.includes('origin refused') && l.origin === originText);

  /** Sends a request through the gateway; its status, body and how long it took. */
  async function timed(host: string, path: string) {
    const started = performance.now();
    const res = await viaGateway(t.server.gateway!.url, path, { host, headers: { accept: 'application/json' } });
    return { status: res.status, code: res.status === 200 ? null : res.json<{ error: { code: string } }>().error.code, ms: performance.now() - started };
  }

  it('answers 502 when the origin name resolves to a metadata address at connect time, without contacting the origin, and logs it once', async () => {
    // Both names point at the local origin when the sites are saved, so the API accepts them.
    dns.set('steady.origin.test', ['127.0.0.1']);
    dns.set('rebind.origin.test', ['127.0.0.1']);
    const steady = await createSite(`http://steady.origin.test:${originPort}`);
    const rebind = await createSite(`http://rebind.origin.test:${originPort}`);
    // Then one of them is rebound to the metadata service, before the gateway ever connects.
    dns.set('rebind.origin.test', ['169.254.169.254']);
    const queriesBefore = dns.queries.length;

    expect((await timed(steady.host, '/steady')).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await timed(rebind.host, `/rebind-${i}`);
      expect(res).toMatchObject({ status: 502, code: 'bad_gateway' });
      // Refused before any connection: not a connect timeout (5 s, which would be a 504).
      expect(res.ms).toBeLessThan(2_500);
    }

    // The gateway asked the DNS server at connect time, and never reached the origin through the rebound name.
    expect(dns.queries.slice(queriesBefore)).toContain('A rebind.origin.test');
    expect(origin.received.map((e) => e.url)).toContain('/steady');
    expect(origin.received.some((e) => e.url.startsWith('/rebind'))).toBe(false);
    // Every request was refused, but the refusal is logged once per origin per minute.
    const logged = refusalLogs(`http://rebind.origin.test:${originPort}`);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.reason).toContain('169.254.169.254 is a link-local address');
  });

  it('refuses an AAAA answer that maps to the metadata address', async () => {
    dns.set('mapped.origin.test', ['127.0.0.1']);
    const site = await createSite(`http://mapped.origin.test:${originPort}`);
    dns.set('mapped.origin.test', ['::ffff:169.254.169.254', 'fd00:ec2::254']);
    expect(await timed(site.host, '/mapped')).toMatchObject({ status: 502, code: 'bad_gateway' });
    expect(origin.received.some((e) => e.url === '/mapped')).toBe(false);
    expect(refusalLogs(`http://mapped.origin.test:${originPort}`)).toHaveLength(1);
  });

  it('refuses a literal metadata origin saved before the API checked origins', async () => {
    // A row written before this check existed (or while the operator allowed such origins): the
    // gateway still never connects to it. net.connect does not look literal addresses up, so this
    // is the gateway's own check, not the DNS one.
    const site = await createSite(origin.url);
    const stored = `http://[::ffff:169.254.169.254]:${originPort}/`;
    await t.server.database.db.updateTable('shield_sites').set({ origin_url: stored }).where('id', '=', site.id).execute();
    await t.server.gateway!.registry.refresh();
    for (let i = 0; i < 2; i++) {
      const res = await timed(site.host, '/literal');
      expect(res).toMatchObject({ status: 502, code: 'bad_gateway' });
      expect(res.ms).toBeLessThan(2_500);
    }
    const logged = refusalLogs(`http://[::ffff:a9fe:a9fe]:${originPort}`);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.reason).toContain('169.254.169.254 in IPv6 form');
  });
});
