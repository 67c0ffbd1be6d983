// Finding 3, as the attack: IPv6 transition forms of loopback, private and metadata addresses —
// NAT64 (the local-use 64:ff9b:1::/48 as well as the well-known 64:ff9b::/96), 6to4 (2002::/16),
// Teredo (2001::/32: server in bits 32–63, client as the bitwise NOT of the last 32 bits),
// IPv4-translated (::ffff:0:a.b.c.d) and IPv4-compatible (::a.b.c.d) — passed the address checks.
// The table runs the real functions: the tenant rule (refusedAddress), the Shield origin rule
// (metadataAddress) and the one decoder both use; then the outbound fetch and the guarded lookup
// with such addresses, so no connection is attempted either.
import { describe, expect, it } from 'vitest';
import { refusedAddress } from '../../platform/net/address-policy.ts';
import { guardedLookup } from '../../platform/net/guarded-lookup.ts';
import { parseIp } from '../../schemas/checks/ip.ts';
import { embeddedIpv4s } from '../../schemas/checks/ipv4-in-ipv6.ts';
import { metadataAddress } from '../../platform/net/metadata-address.ts';
import { outboundFetch, RefusedAddressError, tenantPolicy } from '../../platform/net/outbound.ts';

const dotted = (value: number): string => [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
function decode(address: string): string[] {
  const ip = parseIp(address);
  if (ip?.version !== 6) throw new Error(`not IPv6: ${address}`);
  return embeddedIpv4s(ip.groups).map((e) => `${e.form} ${dotted(e.value)}`);
}

describe('the one decoder (schemas/checks/ipv4-in-ipv6.ts)', () => {
  it.each([
    ['::ffff:7f00:1', ['IPv4-mapped 127.0.0.1']],
    ['::ffff:0:7f00:1', ['IPv4-translated 127.0.0.1']],
    ['::7f00:1', ['IPv4-compatible 127.0.0.1']],
    ['::127.0.0.1', ['IPv4-compatible 127.0.0.1']],
    ['64:ff9b::7f00:1', ['NAT64 127.0.0.1']],
    // Local-use NAT64: the IPv4 address where each RFC 6052 prefix length (48, 56, 64, 96) puts it.
    ['64:ff9b:1::7f00:1', ['local-use NAT64 0.0.0.0', 'local-use NAT64 0.0.0.0', 'local-use NAT64 0.0.0.127', 'local-use NAT64 127.0.0.1']],
    ['64:ff9b:1:7f00:0:100::', ['local-use NAT64 127.0.0.1', 'local-use NAT64 0.0.1.0', 'local-use NAT64 0.1.0.0', 'local-use NAT64 0.0.0.0']],
    ['2002:7f00:1::1', ['6to4 127.0.0.1']],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', ['Teredo server 65.54.227.120', 'Teredo client 127.0.0.1']],
    ['2001:0:a9fe:a9fe::', ['Teredo server 169.254.169.254', 'Teredo client 255.255.255.255']],
    ['2606:4700::1111', []],
    ['fe80::1', []],
  ])('%s carries %j', (address, carried) => {
    expect(decode(address)).toEqual(carried);
  });
});

describe('tenant rule: refusedAddress', () => {
  // The four the black-box test found returning null.
  it.each(['::7f00:1', '2002:7f00:1::1', '64:ff9b:1::7f00:1', '2001:0:4136:e378:8000:63bf:80ff:fffe'])('refuses %s (was allowed)', (address) => {
    expect(refusedAddress(address)).toMatch(new RegExp(`^${address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is .*private, loopback, link-local or reserved`));
  });

  const refused = [
    // loopback, private, link-local/metadata, shared, in every transition form
    '::ffff:0:7f00:1', '::ffff:0:a00:1', '::a9fe:a9fe', '::169.254.169.254', '::c0a8:101',
    '64:ff9b:1::a00:1', '64:ff9b:1::a9fe:a9fe', '64:ff9b:1:7f00:0:100::', '64:ff9b:1:ffff::1',
    '2002:a9fe:a9fe::', '2002:a00:1::1', '2002:c0a8:101::1', '2002:6440:1::1', '2002:0:1::1',
    '2001:0:7f00:1::1', '2001:0:a9fe:a9fe:0:0:ffff:ffff', '2001:0:4136:e378:8000:63bf:5601:5601', '2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001:0:4136:e378:8000:63bf:3f57:fefe',
    // deprecated IPv4-compatible even for a public address, and the rest of the special ranges
    '::808:808', '64:ff9b::808:808', '::1', '::', 'fe80::1%eth0', '3fff::1', '2001:2::1', 'fec0::1', '100:0:0:1::1',
  ];
  it.each(refused)('refuses %s', (address) => {
    expect(refusedAddress(address)).toMatch(/private, loopback, link-local or reserved/);
  });

  const allowed = [
    // public IPv4 addresses in the forms that reach them stay allowed
    '::ffff:8.8.8.8', '::ffff:0:808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2001:4860:4860::8888', '2606:4700::1111',
  ];
  it.each(allowed)('allows %s', (address) => {
    expect(refusedAddress(address)).toBeNull();
  });

  it('is what connections are held to: the outbound fetch refuses a literal before connecting, the lookup a resolved address', async () => {
    const fetcher = outboundFetch(tenantPolicy({ allowPrivateTargets: false }), { redirects: 'refuse' });
    for (const host of ['[2002:7f00:1::1]', '[64:ff9b:1::7f00:1]', '[::7f00:1]', '[2001:0:4136:e378:8000:63bf:80ff:fffe]']) {
      await expect(fetcher(`http://${host}:8080/`)).rejects.toBeInstanceOf(RefusedAddressError);
    }
    const lookup = guardedLookup({ refuse: refusedAddress, resolve: (_host, _options, callback) => callback(null, [{ address: '2002:a9fe:a9fe::1', family: 6 }]), refusal: (host, reason) => new RefusedAddressError(`${host}: ${reason}`) });
    const error = await new Promise<Error | null>((resolve) => lookup('metadata.rebind.test', {}, (err) => resolve(err)));
    expect(error?.message).toBe('metadata.rebind.test: 2002:a9fe:a9fe::1 is 169.254.169.254 in IPv6 form (6to4), a private, loopback, link-local or reserved address');
  });
});

describe('origin rule: metadataAddress (private stays allowed, metadata and link-local do not)', () => {
  it.each(['2002:a9fe:a9fe::1', '2001:0:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:5601:5601', '64:ff9b:1::a9fe:a9fe', '64:ff9b:1::6464:64c8', '::ffff:0:a9fe:a9fe', '::a9fe:a9fe', '2002:a83f:8110::'])('refuses %s', (address) => {
    expect(metadataAddress(address)).toMatch(/ is 1(69\.254\.169\.254|00\.100\.100\.200|68\.63\.129\.16) in IPv6 form \((6to4|Teredo server|Teredo client|local-use NAT64|IPv4-translated|IPv4-compatible)\)/);
  });
  it.each(['2002:7f00:1::1', '2002:a00:1::1', '64:ff9b:1::a00:1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '::1', '::'])('allows %s', (address) => {
    expect(metadataAddress(address)).toBeNull();
  });
});
