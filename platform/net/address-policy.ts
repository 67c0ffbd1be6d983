// Which addresses the server may connect to for a tenant (the `tenant` trust class of outbound.ts:
// URL scans, git clones, webhooks, provider and identity-provider URLs a customer gives). Private,
// loopback, link-local, shared, multicast and reserved ranges are refused: a URL a customer types
// must not become a way to probe the server's own network or its cloud metadata service (SSRF).
// The check is made on the address actually connected to (after DNS, guarded-lookup.ts), so a name
// that resolves to 127.0.0.1 — or changes its answer between two lookups — is refused too.
//
// An IPv6 address that carries an IPv4 address (mapped, translated, compatible, NAT64, 6to4,
// Teredo: ipv4-in-ipv6.ts, the one decoder) is refused when any IPv4 address it may stand for is:
// `::ffff:7f00:1`, `::7f00:1`, `2002:7f00:1::1` and `64:ff9b:1::7f00:1` all end at 127.0.0.1.
// Ranges are matched on parsed numbers (ip.ts), not with node:net's BlockList, which applies IPv4
// rules to some IPv6 notations and not to others.
import { formatIp, networkOf, parseIp, sameIp, type ParsedIp } from '../../schemas/checks/ip.ts';
import { embeddedIpv4s } from '../../schemas/checks/ipv4-in-ipv6.ts';

interface Range {
  network: ParsedIp;
  prefix: number;
}

function range(text: string, prefix: number): Range {
  const network = parseIp(text);
  if (!network) throw new Error(`not an address: ${text}`);
  return { network, prefix };
}

const REFUSED_V4: readonly Range[] = [
  range('0.0.0.0', 8), // "this network"
  range('10.0.0.0', 8),
  range('100.64.0.0', 10), // carrier-grade NAT (shared address space)
  range('127.0.0.0', 8),
  range('169.254.0.0', 16), // link-local, cloud metadata services
  range('172.16.0.0', 12),
  range('192.0.0.0', 24), // IETF protocol assignments
  range('192.0.2.0', 24), // documentation
  range('192.88.99.0', 24), // 6to4 relay anycast (deprecated)
  range('192.168.0.0', 16),
  range('198.18.0.0', 15), // benchmarking
  range('198.51.100.0', 24), // documentation
  range('203.0.113.0', 24), // documentation
  range('224.0.0.0', 4), // multicast
  range('240.0.0.0', 4), // reserved, broadcast
];

// No rule for IPv4-mapped (::ffff:0:0/96) or IPv4-translated (::ffff:0:0:0/96) addresses, nor for
// all of 6to4 and Teredo: those are judged by the IPv4 addresses they carry (above), so a public
// IPv4 address in IPv6 form stays allowed.
const REFUSED_V6: readonly Range[] = [
  range('::', 96), // unspecified, loopback and the deprecated IPv4-compatible addresses
  range('64:ff9b::', 96), // NAT64 of any IPv4 address: the translator is inside the server's network
  range('64:ff9b:1::', 48), // local-use NAT64 (RFC 8215), never global
  range('100::', 64), // discard-only
  range('100:0:0:1::', 64), // dummy prefix (RFC 9780)
  range('2001:2::', 48), // benchmarking
  range('2001:db8::', 32), // documentation
  range('3fff::', 20), // documentation (RFC 9637)
  range('fc00::', 7), // unique local
  range('fe80::', 10), // link-local
  range('fec0::', 10), // site-local (deprecated)
  range('ff00::', 8), // multicast
];

const inRange = (ip: ParsedIp, ranges: readonly Range[]): boolean => ranges.some((r) => r.network.version === ip.version && sameIp(networkOf(ip, r.prefix), r.network));

const refusedV4 = (value: number): boolean => inRange({ version: 4, value }, REFUSED_V4);

const REASON = 'a private, loopback, link-local or reserved address';

/**
 * Why `address` may not be connected to for a tenant — a sentence starting with the address — or
 * null when it is a public address. A zone (`fe80::1%eth0`) is ignored; anything that is not an IP
 * address is refused (resolve names first).
 */
export function refusedAddress(address: string): string | null {
  const zone = address.indexOf('%');
  const ip = parseIp(zone === -1 ? address : address.slice(0, zone));
  if (!ip) return `${address} is not an IP address`;
  if (ip.version === 4) return refusedV4(ip.value) ? `${address} is ${REASON}` : null;
  for (const embedded of embeddedIpv4s(ip.groups)) {
    // `::` and `::1` are the IPv6 unspecified and loopback addresses, not 0.0.0.0 and 0.0.0.1.
    if (embedded.form === 'IPv4-compatible' && embedded.value <= 1) continue;
    if (refusedV4(embedded.value)) return `${address} is ${formatIp({ version: 4, value: embedded.value })} in IPv6 form (${embedded.form}), ${REASON}`;
  }
  return inRange(ip, REFUSED_V6) ? `${address} is ${REASON.replace(/address$/, 'IPv6 address')}` : null;
}
