// Server-side request forgery: a parameter holding a URL (or a bare address) that points where an
// application server must not be made to connect. Hosts are classified by ssrf-hosts.ts, after the
// WHATWG URL parser has read them — so 2852039166, 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518,
// [::ffff:a9fe:a9fe] and fullwidth digits are all 169.254.169.254 — and the patterns catch the
// dotted and named forms wherever they sit in a text.
import type { RuleDefinition } from '../types.ts';

const T = ['value', 'path', 'body'] as const;
/** The server itself as a URL host: localhost, 127/8 in any dotted form, 0.0.0.0 and 0, IPv6 ::1 and ::. */
const LOOPBACK = String.raw`(?:localhost|127(?:\.\d{1,3}){1,3}|0\.0\.0\.0|0|\[[0:]*(?:1|:)\])`;

/**
 * Ports of services that speak no HTTP and listen on the loopback interface of servers: SSH, SMTP,
 * POP3, IMAP, LDAP, SMB, SQL Server, Oracle, Docker, etcd, MySQL, PostgreSQL, Redis, Elasticsearch's
 * transport, the kubelet, memcached, MongoDB, and the HTTP proxy port.
 */
const SERVICE_PORTS = '22|23|25|110|143|389|445|1433|1521|2375|2376|2379|3128|3306|5432|6379|9300|10250|11211|27017';

/** Where a URL's host starts: after `scheme` (a pattern, maybe empty) and `//`, past any credentials. */
const urlHost = (scheme: string): string => String.raw`(?:^|[\s"'=(])${scheme}//(?:[^/@\s]*@)?`;
const ANY_SCHEME = String.raw`(?:[a-z][a-z0-9+.-]*:)?`;

export const SSRF_RULES: readonly RuleDefinition[] = [
  {
    id: 'ssrf.cloud_metadata',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'Cloud instance-metadata endpoints (169.254.169.254 in any IPv4/IPv6 notation, metadata.google.internal, 100.100.100.200, fd00:ec2::254, 169.254.170.2)',
    targets: T,
    pattern:
      String.raw`(?:^|[^\d.])(?:169\.254\.169\.254|169\.254\.170\.23?|100\.100\.100\.200|192\.0\.0\.192)(?:[^\d]|$)|\bfd00:ec2::(?:254|23)\b|` +
      String.raw`(?:^|[/@\\])(?:metadata\.google\.internal|metadata\.goog|instance-data(?:\.ec2\.internal)?|metadata\.tencentyun\.com|metadata\.platformequinix\.com|metadata\.packet\.net)(?:[:/?#\\]|$)`,
    check: { kind: 'host', hostClass: 'metadata' },
  },
  {
    id: 'ssrf.link_local',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'A URL host in the link-local ranges (169.254.0.0/16, fe80::/10), where cloud and container agents listen',
    targets: T,
    check: { kind: 'host', hostClass: 'link_local' },
  },
  {
    id: 'ssrf.ip_obfuscation',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'A URL host written in a non-canonical IPv4 notation (decimal, hex, octal, short form, IPv4-mapped IPv6) that resolves to an internal address',
    targets: T,
    check: { kind: 'host', hostClass: 'obfuscated' },
  },
  {
    id: 'ssrf.numeric_host',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'A URL whose host is an IPv4 address written as one number, in hex or in octal, whatever it points at (http://1113982867/, //0x42.0x66.0x7.0x93/, http://0102.0146.0007.0223/, http:2852039166, which WHATWG parsers read without slashes): no link a person writes has one, and blocklists of hosts miss it; ssrf.ip_obfuscation names the internal ones',
    targets: T,
    pattern: String.raw`(?:^|[\s"'=(\x60])(?:https?:/{0,2}|//)(?:[^/@\s]*@)?(?:\d{8,10}|0x[0-9a-f]{1,8}(?:\.(?:0x[0-9a-f]{1,8}|\d{1,3})){0,3}|0\d{1,4}(?:\.\d{1,12}){1,3})(?:[:/?#"'\s>\\]|$)`,
  },
  {
    id: 'ssrf.allowlist_bypass',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'A value that is a URL built to pass a host allowlist and reach the server itself: a domain as credentials before a loopback host (http://example.com@127.0.0.1; postgres://app:pw@localhost:5432/app is a connection string), a loopback host followed by another domain (http://127.0.0.1#example.com, http://localhost/?d=example.com), an allowed domain prefixed to it (http://example.com.127.0.0.1), or an authority URL parsers split differently (http://1.1.1.1&@2.2.2.2#@3.3.3.3/, http://1.1.1.1 &@2.2.2.2# @3.3.3.3/, http://a:80\\@b/). A plain http://localhost:3000/ stays ssrf.loopback (level 2): developers paste it',
    targets: T,
    pattern:
      String.raw`^\s*(?:[a-z][a-z0-9+.-]*:)?//(?:[^\s/@]*\.[^\s/@]*@+${LOOPBACK}(?:[:/?#\\]|$)|${LOOPBACK}(?::\d+)?(?:[/?#\\]|%00)[^\s]*?[a-z0-9-]+\.[a-z]{2,}|[a-z0-9.-]+\.(?:127\.0\.0\.1|localhost)(?:[:/?#\\]|$)|[^\s/]*\s?(?:\\@|[#&]\s?\\?@))`,
  },
  {
    id: 'ssrf.loopback_probe',
    category: 'ssrf',
    paranoia_level: 1,
    // Install guides show such URLs in their prose (check http://localhost:9300 …).
    in_prose: 'notice',
    description: 'A loopback URL no one pastes from their own machine: an address of 127/8 other than 127.0.0.1 and 127.0.1.1, which slips past a blocklist of the usual one (http://127.127.127.127, http://127.0.0.3/), or an HTTP URL to the port of a service that speaks no HTTP — SSH, mail, directories, databases, caches, Docker, etcd, the kubelet (http://127.0.0.1:22, http://localhost:6379/): a port scan or a protocol smuggled to it; redis://localhost:6379 passes',
    targets: T,
    pattern:
      String.raw`${urlHost(ANY_SCHEME)}127\.(?:[1-9]\d{0,2}\.\d{1,3}\.\d{1,3}|0\.(?:[2-9]|[1-9]\d{1,2})\.\d{1,3}|0\.[01]\.(?:0|[2-9]|[1-9]\d{1,2}))(?:[:/?#\\"']|$)|` +
      // Only an HTTP URL: redis://localhost:6379 is how clients are configured; HTTP to it is the attack.
      String.raw`${urlHost('(?:https?:)?')}${LOOPBACK}:0*(?:${SERVICE_PORTS})(?:[/?#\\"']|$)`,
  },
  {
    id: 'ssrf.container_host',
    category: 'ssrf',
    paranoia_level: 1,
    in_prose: 'notice',
    description: 'A host name that exists only inside a container or cluster network and names its host or control plane (host.docker.internal, gateway.docker.internal, host.containers.internal, kubernetes.default.svc), as a URL host or a value, followed by a port or a path',
    targets: T,
    // Followed by a port, a path or a quote: a name alone is a word the fast path skips (prefilter.ts).
    pattern: String.raw`(?:^|[/@\s="'])(?:(?:host|gateway|kubernetes)\.docker\.internal|host\.containers\.internal|kubernetes\.default(?:\.svc(?:\.cluster\.local)?)?)\.?[:/?#\\"']`,
  },
  {
    id: 'ssrf.enclosed_host',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'A URL whose host is spelt with circled, parenthesised or fullwidth letters and digits (http://①②⑦.⓪.⓪.①, irc://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ), which URL parsers fold back to ASCII: no one writes a link that way, and it slips past host blocklists',
    targets: T,
    form: 'raw',
    pattern: String.raw`${urlHost(ANY_SCHEME)}[^/?#\s]*[\x{2460}-\x{24ff}\x{2776}-\x{2793}\x{ff10}-\x{ff19}\x{ff21}-\x{ff3a}\x{ff41}-\x{ff5a}]`,
  },
  {
    id: 'ssrf.dangerous_scheme',
    category: 'ssrf',
    paranoia_level: 1,
    description: 'gopher:// and dict:// URLs, which let a request speak raw TCP to internal services',
    targets: T,
    pattern: String.raw`\b(?:gopher|dict)://`,
  },
  // --- level 2 -------------------------------------------------------------------------------------
  {
    id: 'ssrf.loopback',
    category: 'ssrf',
    paranoia_level: 2,
    description: 'A URL host on the loopback interface (127.0.0.0/8, ::1, 0.0.0.0, localhost)',
    targets: T,
    check: { kind: 'host', hostClass: 'loopback' },
  },
  {
    id: 'ssrf.uncommon_scheme',
    category: 'ssrf',
    paranoia_level: 2,
    description: 'URL schemes for internal protocols (ldap://, tftp://, rmi://, iiop://, telnet://, smb://)',
    targets: T,
    pattern: String.raw`\b(?:ldaps?|tftp|rmi|iiop|telnet|smb|nfs)://`,
  },
  {
    id: 'ssrf.rebinding_domain',
    category: 'ssrf',
    paranoia_level: 2,
    description: 'Wildcard DNS services that resolve a name to an address written inside it (nip.io, sslip.io, xip.io, localtest.me, lvh.me)',
    targets: T,
    pattern: String.raw`(?:^|[/@.])(?:nip\.io|sslip\.io|xip\.io|localtest\.me|lvh\.me|vcap\.me|1u\.ms|rbndr\.us|traefik\.me|nip\.direct)(?:[:/?#\\]|$)`,
  },
  // --- level 3 -------------------------------------------------------------------------------------
  {
    id: 'ssrf.private_network',
    category: 'ssrf',
    paranoia_level: 3,
    description: 'A URL host in private, carrier-grade NAT or unique-local ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), or an internal DNS name',
    targets: T,
    check: { kind: 'host', hostClass: 'private' },
  },
];
