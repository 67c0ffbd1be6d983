// Which addresses outbound traffic the server makes for a user (URL scans) may reach. Private,
// loopback, link-local, shared, multicast and reserved ranges are refused: a scan target must not
// become a way to probe the server's own network (SSRF). The check is made on the address actually
// connected to (after DNS), so a name that resolves to 127.0.0.1 — or changes its answer between two
// lookups — is refused too.
import { BlockList, isIP } from 'node:net';

const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  refused.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  // No rule for IPv4-mapped addresses (::ffff:0:0/96): BlockList checks IPv4 addresses against IPv6
  // rules too, so such a rule refused every public IPv4 address. Mapped addresses are judged by the
  // IPv4 rules (BlockList applies those to ::ffff:a.b.c.d in any notation).
  ['64:ff9b::', 96], // NAT64 of any IPv4 address
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  refused.addSubnet(network, prefix, 'ipv6');
}

/** Why `address` may not be connected to, or null when it is a public address. */
export function refusedAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return refusedAddress(mapped[1]!);
    return refused.check(address, 'ipv6') ? `${address} is a private, loopback, link-local or reserved IPv6 address` : null;
  }
  return refused.check(address, 'ipv4') ? `${address} is a private, loopback, link-local or reserved address` : null;
}
