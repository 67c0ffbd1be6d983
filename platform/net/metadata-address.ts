// Which addresses a Shield origin may not be: cloud metadata services and link-local addresses.
// Forwarding a customer's domain to one would hand the internet the gateway host's instance
// credentials (SSRF through the data plane). Unlike address-policy.ts (URL scans), private ranges
// stay allowed — 10/8, 172.16/12, 192.168/16, loopback, fc00::/7: origins are usually internal.
//
// Refused:
//   - 169.254.0.0/16 and fe80::/10, link-local (RFC 3927, RFC 4291). Nearly every metadata service
//     answers there: 169.254.169.254 (AWS, GCP, Azure IMDS, OCI, DigitalOcean, OpenStack, …),
//     169.254.170.2 (ECS task credentials), 169.254.170.23 (EKS Pod Identity), 169.254.0.23
//     (Tencent). A real origin never needs a link-local address.
//   - Metadata and platform endpoints outside those ranges, one address each (not their networks,
//     which hold ordinary addresses):
//       100.100.100.200     Alibaba Cloud ECS metadata service (in 100.64.0.0/10, shared space)
//       192.0.0.192         Oracle Cloud Classic / Cloud@Customer metadata service (in 192.0.0.0/24)
//       168.63.129.16       Azure WireServer: VM agent goal state and extension settings, also the
//                           VNet DNS/DHCP/health-probe source (a public address Azure routes to the host)
//       fd00:ec2::254       AWS EC2 instance metadata service over IPv6 (Nitro instances)
//       fd00:ec2::23        AWS EKS Pod Identity Agent over IPv6 (hands out credentials)
//       fd20:ce::254        Google Cloud metadata server for IPv6-only instances
//       fd00:c1::a9fe:a9fe  Oracle Cloud Infrastructure metadata service over IPv6
//     The IPv6 ones sit in fc00::/7, which otherwise stays allowed.
//   - IPv6 forms that carry one of the IPv4 addresses above and reach it, as ipv4-in-ipv6.ts (the
//     one decoder, shared with address-policy.ts) reads them: IPv4-mapped (::ffff:a.b.c.d — what a
//     dual-stack socket connects to as IPv4; URL parsing writes it as ::ffff:a9fe:a9fe),
//     IPv4-translated (::ffff:0:a.b.c.d, RFC 2765), IPv4-compatible (::a.b.c.d, deprecated), NAT64
//     (64:ff9b::a.b.c.d, RFC 6052, and the local-use 64:ff9b:1::/48, RFC 8215), 6to4
//     (2002:a9fe:a9fe::/48) and Teredo (server and client address).
// Names are judged by what they resolve to (guarded-lookup.ts), never by how they are spelled.
import { formatIp, parseIp } from '../../schemas/checks/ip.ts';
import { embeddedIpv4s } from '../../schemas/checks/ipv4-in-ipv6.ts';

const v4 = (text: string): number => {
  const ip = parseIp(text);
  if (ip?.version !== 4) throw new Error(`not an IPv4 address: ${text}`);
  return ip.value;
};

/**
 * Metadata endpoints by address, link-local ones included (managed rules' SSRF checks tell a named
 * endpoint from the rest of the link-local range; for origins the whole range is refused anyway).
 */
export const METADATA_ENDPOINTS_V4: ReadonlyMap<number, string> = new Map([
  [v4('169.254.169.254'), 'the instance metadata service of AWS, GCP, Azure, OCI, DigitalOcean and OpenStack'],
  [v4('169.254.170.2'), 'the AWS ECS task credentials endpoint'],
  [v4('169.254.170.23'), 'the AWS EKS Pod Identity Agent'],
  [v4('100.100.100.200'), 'the Alibaba Cloud instance metadata service'],
  [v4('192.0.0.192'), 'the Oracle Cloud Classic instance metadata service'],
  [v4('168.63.129.16'), 'the Azure WireServer (VM agent and extension settings)'],
]);

/** Keyed by the canonical (RFC 5952) text. */
export const METADATA_ENDPOINTS_V6: ReadonlyMap<string, string> = new Map([
  ['fd00:ec2::254', 'the AWS EC2 instance metadata service (IPv6)'],
  ['fd00:ec2::23', 'the AWS EKS Pod Identity Agent (IPv6)'],
  ['fd20:ce::254', 'the Google Cloud metadata server (IPv6)'],
  ['fd00:c1::a9fe:a9fe', 'the Oracle Cloud Infrastructure metadata service (IPv6)'],
]);

export const isLinkLocalV4 = (value: number): boolean => value >>> 16 === 0xa9fe;
export const isLinkLocalV6 = (groups: Uint16Array): boolean => (groups[0]! & 0xffc0) === 0xfe80;

function v4Reason(value: number): string | null {
  if (isLinkLocalV4(value)) return 'a link-local address (169.254.0.0/16, where cloud metadata services answer)';
  return METADATA_ENDPOINTS_V4.get(value) ?? null;
}

const dotted = (value: number) => formatIp({ version: 4, value });

/**
 * Why `address` may not be a Shield origin's address — a sentence naming it — or null when it may.
 * Anything that is not an IP address (a name) is null: resolve names first.
 */
export function metadataAddress(address: string): string | null {
  const zone = address.indexOf('%');
  const ip = parseIp(zone === -1 ? address : address.slice(0, zone));
  if (!ip) return null;
  if (ip.version === 4) {
    const reason = v4Reason(ip.value);
    return reason ? `${address} is ${reason}` : null;
  }
  const g = ip.groups;
  if (isLinkLocalV6(g)) return `${address} is a link-local IPv6 address (fe80::/10)`;
  for (const embedded of embeddedIpv4s(g)) {
    const reason = v4Reason(embedded.value);
    if (reason) return `${address} is ${dotted(embedded.value)} in IPv6 form (${embedded.form}), ${reason}`;
  }
  const known = METADATA_ENDPOINTS_V6.get(formatIp(ip));
  return known ? `${address} is ${known}` : null;
}
