// IP address parsing and formatting without allocation-heavy objects: validation is Node's own
// (net.isIPv4/isIPv6); IPv4 becomes one unsigned 32-bit number, IPv6 eight 16-bit groups. The
// gateway's range tables and the rule checks share this module.
import { isIPv4, isIPv6 } from 'node:net';
import { embeddedIpv4s, type EmbeddingForm } from './ipv4-in-ipv6.ts';

export type ParsedIp = { version: 4; value: number } | { version: 6; groups: Uint16Array };

/** A dotted-decimal IPv4 address that isIPv4 accepted, as an unsigned 32-bit number. */
export function parseV4(text: string): number {
  let value = 0;
  let part = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      value = value * 256 + part;
      part = 0;
    } else part = part * 10 + (c - 48);
  }
  return value * 256 + part;
}

function parseV6(text: string): Uint16Array {
  const groups = new Uint16Array(8);
  let body = text;
  let tail: number[] = [];
  const lastColon = body.lastIndexOf(':');
  if (body.includes('.', lastColon)) {
    const v4 = parseV4(body.slice(lastColon + 1));
    tail = [v4 >>> 16, v4 & 0xffff];
    body = `${body.slice(0, lastColon + 1)}0`; // placeholder group, replaced below
  }
  const [head, rest] = body.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const restGroups = rest !== undefined && rest !== '' ? rest.split(':').map((g) => Number.parseInt(g, 16)) : [];
  let all: number[];
  if (rest === undefined) all = headGroups;
  else all = [...headGroups, ...new Array<number>(8 - headGroups.length - restGroups.length - (tail.length ? 1 : 0)).fill(0), ...restGroups];
  if (tail.length) all = [...all.slice(0, all.length - 1), ...tail];
  for (let i = 0; i < 8; i++) groups[i] = all[i] ?? 0;
  return groups;
}

/** Strict parse: dotted-decimal IPv4 or IPv6 without a zone; null for anything else. */
export function parseIp(text: string): ParsedIp | null {
  if (isIPv4(text)) return { version: 4, value: parseV4(text) };
  if (isIPv6(text) && !text.includes('%')) return { version: 6, groups: parseV6(text) };
  return null;
}

/** Eight IPv6 groups in RFC 5952 form: lower case, no leading zeros, the longest run (≥ 2) of zero groups as "::". */
export function formatV6(groups: Uint16Array): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  // Written out rather than joined: CSV imports format 100 000 of these at a time.
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      out += '::';
      i += bestLength - 1;
      continue;
    }
    if (out !== '' && !out.endsWith(':')) out += ':';
    out += groups[i]!.toString(16);
  }
  return out;
}

export function formatIp(ip: ParsedIp): string {
  if (ip.version === 4) return [ip.value >>> 24, (ip.value >>> 16) & 255, (ip.value >>> 8) & 255, ip.value & 255].join('.');
  return formatV6(ip.groups);
}

/** The address with every bit after `prefix` cleared. */
export function networkOf(ip: ParsedIp, prefix: number): ParsedIp {
  if (ip.version === 4) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    return { version: 4, value: (ip.value & mask) >>> 0 };
  }
  const groups = new Uint16Array(8);
  for (let i = 0; i < 8; i++) {
    const bits = Math.max(0, Math.min(16, prefix - i * 16));
    const mask = bits === 0 ? 0 : (0xffff << (16 - bits)) & 0xffff;
    groups[i] = ip.groups[i]! & mask;
  }
  return { version: 6, groups };
}

export function sameIp(a: ParsedIp, b: ParsedIp): boolean {
  if (a.version === 4 || b.version === 4) return a.version === b.version && (a as { value: number }).value === (b as { value: number }).value;
  return a.groups.every((g, i) => g === b.groups[i]);
}

const EXACT_FORMS: ReadonlySet<EmbeddingForm> = new Set(['IPv4-mapped', 'IPv4-translated', 'IPv4-compatible', 'NAT64']);

/**
 * The IPv4 address an IPv6 address stands for in the forms that name one address exactly —
 * IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
 * (`::a.b.c.d`, deprecated) or the NAT64 well-known prefix (`64:ff9b::a.b.c.d`) — or null. `::1`
 * and `::` come out as 0.0.0.1 and 0.0.0.0. The managed rules' SSRF classification reads these; the
 * address policies judge every form ipv4-in-ipv6.ts decodes (6to4, Teredo, local-use NAT64 too).
 */
export function embeddedIpv4(groups: Uint16Array): number | null {
  const [first] = embeddedIpv4s(groups);
  return first && EXACT_FORMS.has(first.form) ? first.value : null;
}
