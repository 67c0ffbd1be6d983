// A Shield site's origin_url may not be a cloud metadata or link-local address — written in any
// notation URL parsing accepts, or as a name that resolves to one — unless the operator allows it
// (AEGIS_ALLOW_METADATA_ORIGINS). Names are resolved by a real DNS server on loopback
// (test/support/dns-server.ts) that the server reaches through AEGIS_SHIELD_DNS_SERVERS, a setting
// operators use the same way; the default system resolver is exercised with `localhost`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer; // refuses; resolves names through `dns`
let plain: TestServer; // production defaults: refuses; system resolver
let allowing: TestServer; // AEGIS_ALLOW_METADATA_ORIGINS=true
let dns: DnsServer;

beforeAll(async () => {
  dns = await startDnsServer();
  [t, plain, allowing] = await Promise.all([
    startTestServer({ rateLimitPerMinute: 10_000, shieldDnsServers: [dns.server] }),
    startTestServer({ rateLimitPerMinute: 10_000 }),
    startTestServer({ rateLimitPerMinute: 10_000, allowMetadataOrigins: true, shieldDnsServers: [dns.server] }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), plain?.close(), allowing?.close()]);
  await dns?.close();
});

let count = 0;
const create = (server: TestServer, origin_url: string) =>
  server.call('POST', '/api/v1/shield/sites', { body: { domain: `site${++count}.origin-check.test`, origin_url, mode: 'block' } });

function expectRefused(res: { status: number; body: any; text: string }, mentions: string): void {
  expect(res.status, res.text).toBe(422);
  expect(res.body.error.code).toBe('validation_failed');
  expect(res.body.error.details.fields).toEqual([{ field: 'origin_url', message: expect.stringContaining(mentions) }]);
  expect(res.body.error.message).toContain('origin_url');
}

/** origin_url → the normalised address the refusal names. */
const LITERALS: [string, string][] = [
  ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
  ['http://169.254.170.2/v2/credentials/x', '169.254.170.2'], // ECS task credentials
  ['http://2852039166/', '169.254.169.254'], // decimal
  ['http://0xa9fea9fe/', '169.254.169.254'], // hex
  ['http://0XA9.0XFE.0XA9.0XFE/', '169.254.169.254'], // hex per part
  ['http://0251.0376.0251.0376/', '169.254.169.254'], // octal
  ['http://169.254.43518/', '169.254.169.254'], // a.b.c16
  ['http://169.16689662/', '169.254.169.254'], // a.b24
  ['http://169.254.169.254./', '169.254.169.254'], // trailing dot
  ['http://%31%36%39.254.169.254/', '169.254.169.254'], // percent-encoded
  ['http://１６９.２５４.１６９.２５４/', '169.254.169.254'], // full-width digits (IDNA maps them)
  ['http://169。254。169。254/', '169.254.169.254'], // ideographic full stops
  ['http://user:secret@169.254.169.254:8080/', '169.254.169.254'], // credentials and a port
  ['http://[::ffff:169.254.169.254]/', '169.254.169.254 in IPv6 form'], // IPv4-mapped
  ['http://[::ffff:a9fe:a9fe]/', '169.254.169.254 in IPv6 form'],
  ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '169.254.169.254 in IPv6 form'],
  ['http://[64:ff9b::169.254.169.254]/', '169.254.169.254 in IPv6 form'], // NAT64
  ['http://[fe80::a9fe:a9fe]/', 'fe80::a9fe:a9fe is a link-local IPv6 address'],
  ['http://[FD00:EC2::254]/latest/meta-data/', 'fd00:ec2::254 is the AWS EC2 instance metadata service'],
  ['https://[fd20:ce::254]/computeMetadata/v1/', 'fd20:ce::254 is the Google Cloud metadata server'],
  ['http://[fd00:c1::a9fe:a9fe]/opc/v2/', 'Oracle Cloud Infrastructure'],
  ['http://100.100.100.200/latest/meta-data/', '100.100.100.200 is the Alibaba Cloud instance metadata service'],
  ['http://[::ffff:100.100.100.200]/', '100.100.100.200 in IPv6 form'],
  ['http://192.0.0.192/latest/', '192.0.0.192 is the Oracle Cloud Classic instance metadata service'],
  ['http://168.63.129.16/machine?comp=goalstate', '168.63.129.16 is the Azure WireServer'],
];

describe('an origin_url that is a metadata or link-local address', () => {
  it.each(LITERALS)('is refused on create: %s', async (url, mentions) => {
    expectRefused(await create(t, url), mentions);
  });

  it('is refused on update, and the site keeps its origin and other fields', async () => {
    const site = await create(t, 'http://10.0.0.5:8080/app');
    expect(site.status).toBe(201);
    for (const [url, mentions] of LITERALS) {
      expectRefused(await t.call('PATCH', `/api/v1/shield/sites/${site.body.id}`, { body: { origin_url: url, mode: 'log' } }), mentions);
    }
    const after = await t.call('GET', `/api/v1/shield/sites/${site.body.id}`);
    expect(after.body).toMatchObject({ origin_url: 'http://10.0.0.5:8080/app', mode: 'block' });
    // An update that does not touch origin_url is not checked again.
    expect((await t.call('PATCH', `/api/v1/shield/sites/${site.body.id}`, { body: { mode: 'log' } })).status).toBe(200);
  });

  it('is refused with the production defaults too (system resolver)', async () => {
    expectRefused(await create(plain, 'http://0xa9fea9fe/'), '169.254.169.254');
    expectRefused(await create(plain, 'http://[fd00:ec2::254]/'), 'fd00:ec2::254');
  });
});

describe('origins the policy allows', () => {
  const allowed = [
    'http://10.0.0.5:8080/app',
    'http://172.16.3.4/',
    'http://192.168.1.10:8443/',
    'http://127.0.0.1:3000',
    'http://0x7f000001/', // 127.0.0.1
    'http://[::1]:8080/',
    'http://[::ffff:10.0.0.1]/',
    'http://[fd12:3456:789a::1]/',
    'http://[fd00:ec2::1]/', // AWS's block, not the metadata address
    'http://100.64.0.1/', // shared address space, not Alibaba's metadata address
    'http://169.255.0.1/',
    'https://origin.example.net',
  ];
  it.each(allowed)('accepts %s', async (url) => {
    const res = await create(t, url);
    expect(res.status, res.text).toBe(201);
    expect(res.body.origin_url).toBe(url);
  });

  it('accepts a name the system resolver resolves to loopback (localhost)', async () => {
    expect((await create(plain, 'http://localhost:8080/')).status).toBe(201);
  });
});

describe('an origin_url naming a host that resolves to a metadata or link-local address', () => {
  it('is refused on create and update when any of its addresses is one', async () => {
    dns.set('metadata.google.internal', ['169.254.169.254']);
    expectRefused(await create(t, 'http://metadata.google.internal/computeMetadata/v1/'), 'metadata.google.internal resolves to 169.254.169.254, which is a link-local address');
    expect(dns.queries).toContain('A metadata.google.internal');

    // One bad address among good ones is enough: the gateway may be handed any of them.
    dns.set('mixed.origin-check.test', ['10.1.2.3', 'fd12::1', 'fd00:ec2::254']);
    expectRefused(await create(t, 'https://mixed.origin-check.test/'), 'mixed.origin-check.test resolves to fd00:ec2::254');
    dns.set('mapped.origin-check.test', ['::ffff:169.254.169.254']);
    expectRefused(await create(t, 'http://MAPPED.origin-check.test:8080/'), 'mapped.origin-check.test resolves to ::ffff:169.254.169.254');

    const site = await create(t, 'http://10.0.0.9/');
    expect(site.status).toBe(201);
    expectRefused(await t.call('PATCH', `/api/v1/shield/sites/${site.body.id}`, { body: { origin_url: 'http://metadata.google.internal/' } }), 'metadata.google.internal resolves to 169.254.169.254');
    expect((await t.call('GET', `/api/v1/shield/sites/${site.body.id}`)).body.origin_url).toBe('http://10.0.0.9/');
  });

  it('accepts a name resolving to private addresses, and one that does not resolve at all', async () => {
    dns.set('internal.origin-check.test', ['10.1.2.3', 'fd12::1']);
    expect((await create(t, 'http://internal.origin-check.test:8080/')).status).toBe(201);
    // Not in DNS (NXDOMAIN): origins are often names only the gateway's network resolves; the
    // gateway judges the addresses when it connects.
    expect((await create(t, 'http://only-the-gateway-knows.origin-check.test/')).status).toBe(201);
    expect(dns.queries).toContain('A only-the-gateway-knows.origin-check.test');
  });
});

describe('AEGIS_ALLOW_METADATA_ORIGINS=true', () => {
  it('accepts metadata and link-local origins, literal or by name, on create and update', async () => {
    for (const [url] of LITERALS) {
      const res = await create(allowing, url);
      expect(res.status, `${url}: ${res.text}`).toBe(201);
    }
    dns.set('metadata.google.internal', ['169.254.169.254']);
    const site = await create(allowing, 'http://metadata.google.internal/');
    expect(site.status).toBe(201);
    expect((await allowing.call('PATCH', `/api/v1/shield/sites/${site.body.id}`, { body: { origin_url: 'http://[fe80::1]/' } })).status).toBe(200);
  });
});
