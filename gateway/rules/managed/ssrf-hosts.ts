// Where a URL in a parameter points, for the SSRF rules. Regular expressions are the wrong tool for
// IPv4 literals — 169.254.169.254 can be written 2852039166, 0xa9fea9fe, 0251.0376.0251.0376,
// 169.254.43518, 0xa9.254.0251.0xfe, [::ffff:a9fe:a9fe] — so hosts are read by the WHATWG URL parser
// (which accepts every one of those, as curl, browsers and most HTTP clients do) and the resulting
// address is compared with ranges.
//
// Which hosts are read (from the canonical text, so percent- and entity-decoded, NFKC-normalised):
//   - the authority after every `//` (or `\\`, `/\`: WHATWG reads `\` as `/` in http URLs) that
//     follows a scheme's colon or starts a token (a protocol-relative `//host`; a doubled slash
//     inside a path, `/api//123`, is no URL), and after `http:` / `https:` without slashes
//     (`http:169.254.169.254` is a valid URL to WHATWG);
//   - the `@`-separated pieces of an authority (up to MAX_USERINFO_PIECES), since parsers disagree
//     on which `@` ends userinfo;
//   - a value that starts with a dotted quad, a hex number or a bracketed IPv6 address followed by
//     the end, a port or a path (`169.254.169.254/latest/meta-data`). Bare numbers and short dotted
//     forms (`10.5`, `2852039166`) are not read without a scheme: they are prices and ids far more often.
// At most MAX_AUTHORITIES hosts are read from one text.
import { embeddedIpv4, formatIp, parseIp, type ParsedIp } from '../../../schemas/checks/ip.ts';
import { isLinkLocalV4, isLinkLocalV6, METADATA_ENDPOINTS_V4, METADATA_ENDPOINTS_V6 } from '../../../platform/net/metadata-address.ts';
import type { HostClass } from '../../../schemas/managed-rules/types.ts';

const MAX_AUTHORITIES = 16;
/** `@`-separated pieces of one authority read as hosts, beyond the whole. */
const MAX_USERINFO_PIECES = 4;
const MAX_AUTHORITY_LENGTH = 256;

const METADATA_NAMES: ReadonlySet<string> = new Set([
  'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.tencentyun.com',
  'metadata.platformequinix.com', 'metadata.packet.net', 'rancher-metadata',
]);
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback', 'localtest.me', 'lvh.me', 'vcap.me']);
const PRIVATE_SUFFIXES = ['.internal', '.local', '.localdomain', '.svc', '.cluster.local', '.corp', '.lan', '.intranet', '.home.arpa'];
/** Wildcard DNS services that answer with the address written in the name (`10.0.0.1.nip.io`, `a9fea9fe.nip.io`). */
const REBINDING_SUFFIXES = ['.nip.io', '.sslip.io', '.xip.io', '.traefik.me', '.nip.direct', '.localtest.me', '.lvh.me', '.vcap.me'];

const v4 = (a: number, b: number, c: number, d: number): number => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
const inV4 = (value: number, network: number, prefix: number): boolean => (prefix === 0 ? true : value >>> (32 - prefix) === network >>> (32 - prefix));

function classifyV4(value: number): HostClass | null {
  if (METADATA_ENDPOINTS_V4.has(value)) return 'metadata';
  if (isLinkLocalV4(value)) return 'link_local';
  if (inV4(value, v4(127, 0, 0, 0), 8) || inV4(value, 0, 8)) return 'loopback';
  if (inV4(value, v4(10, 0, 0, 0), 8) || inV4(value, v4(172, 16, 0, 0), 12) || inV4(value, v4(192, 168, 0, 0), 16) || inV4(value, v4(100, 64, 0, 0), 10)) return 'private';
  return null;
}

function classifyV6(groups: Uint16Array): { hostClass: HostClass | null; embedded: boolean } {
  const inner = embeddedIpv4(groups);
  // `::1` and `::` are loopback, not the IPv4 addresses 0.0.0.1 and 0.0.0.0 in disguise.
  if (inner !== null && inner > 1) return { hostClass: classifyV4(inner), embedded: true };
  if (METADATA_ENDPOINTS_V6.has(formatIp({ version: 6, groups }))) return { hostClass: 'metadata', embedded: false };
  if (isLinkLocalV6(groups)) return { hostClass: 'link_local', embedded: false };
  if (groups.subarray(0, 7).every((g) => g === 0) && groups[7]! <= 1) return { hostClass: 'loopback', embedded: false }; // ::1 and ::
  if ((groups[0]! & 0xfe00) === 0xfc00) return { hostClass: 'private', embedded: false };
  return { hostClass: null, embedded: false };
}

/** An address written inside a wildcard-DNS name: `169.254.169.254.nip.io`, `169-254-169-254.nip.io`, `a9fea9fe.nip.io`. */
function rebindingAddress(hostname: string): number | null {
  const suffix = REBINDING_SUFFIXES.find((s) => hostname.endsWith(s));
  if (!suffix) return null;
  const label = hostname.slice(0, -suffix.length);
  const dotted = /(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})$/.exec(label);
  if (dotted) {
    const parts = dotted.slice(1, 5).map(Number);
    if (parts.every((p) => p <= 255)) return v4(parts[0]!, parts[1]!, parts[2]!, parts[3]!);
  }
  const hex = /(?:^|[.-])([0-9a-f]{8})$/.exec(label);
  return hex ? Number.parseInt(hex[1]!, 16) >>> 0 : null;
}

function classifyName(hostname: string): HostClass | null {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (METADATA_NAMES.has(name)) return 'metadata';
  const rebound = rebindingAddress(name);
  if (rebound !== null) return classifyV4(rebound);
  if (LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')) return 'loopback';
  if (name === 'kubernetes' || PRIVATE_SUFFIXES.some((s) => name.endsWith(s))) return 'private';
  return null;
}

/**
 * A numeric host WHATWG refuses because a number overflows (`7147006462`, `425.510.425.510`,
 * `0x41414141a9fea9fe`), read as C libraries that keep the low bits read it; null otherwise.
 */
function overflowedV4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length === 0 || parts.length > 4 || !parts.every((p) => /^(?:0x[0-9a-f]+|\d+)$/.test(p))) return null;
  const values = parts.map((p) => (p.startsWith('0x') ? BigInt(p) : p.length > 1 && p.startsWith('0') ? BigInt(`0o${p}`) : BigInt(p)));
  const sizes = [[32n], [8n, 24n], [8n, 8n, 16n], [8n, 8n, 8n, 8n]][parts.length - 1]!;
  let value = 0n;
  values.forEach((v, i) => {
    value = (value << sizes[i]!) | (v & ((1n << sizes[i]!) - 1n));
  });
  return Number(value & 0xffffffffn);
}

/** Classes of one host as written in a URL authority (userinfo and port allowed). */
function classifyAuthority(authority: string, found: Set<HostClass>): void {
  let hostname: string;
  try {
    hostname = new URL(`http://${authority}/`).hostname;
  } catch {
    const host = authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '');
    const wrapped = host.length <= 64 ? overflowedV4(host) : null;
    const hostClass = wrapped === null ? null : classifyV4(wrapped);
    if (hostClass) {
      found.add(hostClass);
      found.add('obfuscated');
    }
    return;
  }
  let parsed: ParsedIp | null = null;
  if (hostname.startsWith('[')) parsed = parseIp(hostname.slice(1, -1));
  else if (/^[\d.]+$/.test(hostname)) parsed = parseIp(hostname);
  if (!parsed) {
    const named = classifyName(hostname);
    if (named) found.add(named);
    return;
  }
  let hostClass: HostClass | null;
  let obfuscated: boolean;
  if (parsed.version === 4) {
    hostClass = classifyV4(parsed.value);
    // What was written, without userinfo and port, differs from the dotted quad WHATWG made of it.
    const written = authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '').replace(/\.$/, '');
    obfuscated = written !== hostname;
  } else {
    const v6 = classifyV6(parsed.groups);
    hostClass = v6.hostClass;
    obfuscated = v6.embedded;
  }
  if (!hostClass) return;
  found.add(hostClass);
  if (obfuscated) found.add('obfuscated');
}

const AUTHORITY_END = /[/\\?#\s"'<>`]/;
const LEADING_HOST = /^(?:\d{1,3}(?:\.\d+){3}|0x[0-9a-f]+(?:\.[0-9a-fx]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?(?=$|[/?#\\])/;

function authorityAt(text: string, start: number): string {
  let end = start;
  const limit = Math.min(text.length, start + MAX_AUTHORITY_LENGTH);
  while (end < limit && !AUTHORITY_END.test(text[end]!)) end++;
  return text.slice(start, end);
}

function addAuthority(authority: string, found: Set<HostClass>): void {
  if (authority === '') return;
  classifyAuthority(authority, found);
  // Parsers disagree on which `@` ends userinfo: each piece after an `@` is a host to someone.
  let at = authority.indexOf('@');
  for (let pieces = 0; at >= 0 && pieces < MAX_USERINFO_PIECES; pieces++) {
    const next = authority.indexOf('@', at + 1);
    classifyAuthority(authority.slice(at + 1, next < 0 ? undefined : next), found);
    at = next;
  }
}

const isSlash = (code: number): boolean => code === 47 || code === 92;
/** What may stand before the `//` of a URL: a scheme's colon, or the start of a token (`url=//host`). */
const AUTHORITY_LEAD = /[:\s=("'[,>`]/;

/** Whether the text may hold a URL or an address worth reading: cheap, to skip most values. */
export function mayHoldHost(canonical: string): boolean {
  return canonical.includes('//') || canonical.includes('\\') || canonical.includes('http') || LEADING_HOST.test(canonical);
}

/**
 * The host classes of every URL host and leading address in a canonical text (see the file
 * comment). `schemeOnly` (request paths, where `//` is a doubled slash and a leading number a
 * segment) reads only authorities that follow a scheme.
 */
export function hostClasses(canonical: string, schemeOnly = false): ReadonlySet<HostClass> {
  const found = new Set<HostClass>();
  let count = 0;
  const leading = schemeOnly ? null : LEADING_HOST.exec(canonical);
  if (leading) {
    addAuthority(leading[0], found);
    count++;
  }
  let i = 0;
  while (i < canonical.length - 1 && count < MAX_AUTHORITIES) {
    const code = canonical.charCodeAt(i);
    let start = -1;
    if (isSlash(code) && isSlash(canonical.charCodeAt(i + 1)) && (schemeOnly ? canonical[i - 1] === ':' : i === 0 || AUTHORITY_LEAD.test(canonical[i - 1]!))) {
      start = i + 2;
    } else if (code === 58 /* : */ && i >= 4 && /https?$/.test(canonical.slice(Math.max(0, i - 5), i)) && !isSlash(canonical.charCodeAt(i + 1))) {
      start = i + 1;
    }
    if (start < 0) {
      i++;
      continue;
    }
    while (start < canonical.length && isSlash(canonical.charCodeAt(start))) start++;
    const authority = authorityAt(canonical, start);
    addAuthority(authority, found);
    count++;
    i = start + Math.max(authority.length, 1);
  }
  return found;
}
