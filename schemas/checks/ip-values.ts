// Checks the `value` of an IP access rule against its `type` and gives the canonical key that
// uniqueness is decided on (so `2001:DB8::1` and `2001:db8::1` are one rule). The value itself is
// stored as written, so a config file and the API never disagree about it.
import { isIPv4, isIPv6 } from 'node:net';
import { formatIp, formatV6, networkOf, parseIp, parseV4, sameIp } from './ip.ts';
import { ISO_COUNTRIES } from './countries.ts';

export type IpRuleType = 'ip' | 'cidr' | 'asn' | 'country';
export type ValueCheck = { ok: true; key: string } | { ok: false; reason: string };

const MAX_ASN = 4_294_967_295;

// IPv6 groups of the address being checked: one array, reused (checks are synchronous).
const v6 = new Uint16Array(8);

/** Hex groups `a:b:c` of text[from, to) into v6 from `at`; returns how many. */
function readGroups(text: string, from: number, to: number, at: number): number {
  let count = 0;
  let group = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 58) {
      v6[at + count++] = group;
      group = 0;
    } else group = group * 16 + (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  v6[at + count++] = group;
  return count;
}

/**
 * Reads an address that isIPv6 accepted and that has no embedded IPv4 part and no zone into v6. The
 * same groups as parseIp from net/ip.ts, without its intermediate arrays (which show in a profile
 * of a 100 000-row import).
 */
function readV6(text: string): void {
  v6.fill(0);
  const gap = text.indexOf('::');
  if (gap === -1) {
    readGroups(text, 0, text.length, 0);
    return;
  }
  if (gap > 0) readGroups(text, 0, gap, 0);
  if (gap + 2 < text.length) {
    let count = 1;
    for (let i = gap + 2; i < text.length; i++) if (text.charCodeAt(i) === 58) count++;
    readGroups(text, gap + 2, text.length, 8 - count);
  }
}

/** Whether v6 has a bit set after the first `prefix`. */
function v6HostBits(prefix: number): boolean {
  for (let i = 0; i < 8; i++) {
    const bits = Math.max(0, Math.min(16, prefix - i * 16));
    if (bits < 16 && (v6[i]! & (0xffff >> bits)) !== 0) return true;
  }
  return false;
}

const plainV6 = (text: string) => !text.includes('.') && !text.includes('%') && isIPv6(text);

// Fast paths for the valid addresses that make up nearly every rule set (and CSV import): node:net's
// isIPv4 admits no leading zeros, so an IPv4 address it accepts is already in canonical form, and
// IPv6 is read and written without intermediate objects. Anything else, and every invalid value,
// takes the general path, which words the problem.

export function checkRuleValue(type: IpRuleType, value: string): ValueCheck {
  switch (type) {
    case 'ip': {
      if (isIPv4(value)) return { ok: true, key: value };
      if (plainV6(value)) {
        readV6(value);
        return { ok: true, key: formatV6(v6) };
      }
      const address = parseIp(value);
      return address ? { ok: true, key: formatIp(address) } : { ok: false, reason: 'is not an IPv4 or IPv6 address' };
    }
    case 'cidr': {
      const slash = value.indexOf('/');
      const prefixText = value.slice(slash + 1);
      if (slash > 0 && /^\d{1,3}$/.test(prefixText) && isIPv4(value.slice(0, slash))) {
        const prefix = Number(prefixText);
        if (prefix <= 32) {
          const host = prefix === 32 ? 0 : 0xffffffff >>> prefix;
          if ((parseV4(value.slice(0, slash)) & host) === 0) return { ok: true, key: `${value.slice(0, slash)}/${prefix}` };
        }
      } else if (slash > 0 && /^\d{1,3}$/.test(prefixText) && plainV6(value.slice(0, slash))) {
        const prefix = Number(prefixText);
        if (prefix <= 128) {
          readV6(value.slice(0, slash));
          if (!v6HostBits(prefix)) return { ok: true, key: `${formatV6(v6)}/${prefix}` };
        }
      }
      // Anything wrong with it is described by the general path below.
      const address = slash > 0 ? parseIp(value.slice(0, slash)) : null;
      if (!address || !/^\d{1,3}$/.test(prefixText)) return { ok: false, reason: 'is not a network in CIDR notation (198.51.100.0/24, 2001:db8::/48)' };
      const prefix = Number(prefixText);
      const max = address.version === 4 ? 32 : 128;
      if (prefix > max) return { ok: false, reason: `has a prefix longer than /${max}` };
      const network = networkOf(address, prefix);
      if (!sameIp(network, address)) return { ok: false, reason: `has host bits set; the network is ${formatIp(network)}/${prefix}` };
      return { ok: true, key: `${formatIp(network)}/${prefix}` };
    }
    case 'asn': {
      const match = /^AS(\d{1,10})$/i.exec(value);
      const number = match?.[1] ? Number(match[1]) : NaN;
      if (!Number.isInteger(number) || number < 1 || number > MAX_ASN) return { ok: false, reason: 'is not an autonomous system of the form AS<number> (AS64500)' };
      return { ok: true, key: `AS${number}` };
    }
    case 'country': {
      const code = value.toUpperCase();
      return /^[A-Z]{2}$/.test(value) && ISO_COUNTRIES.has(code)
        ? { ok: true, key: code }
        : { ok: false, reason: 'is not an ISO 3166-1 alpha-2 country code (NL, US, …)' };
    }
  }
}
