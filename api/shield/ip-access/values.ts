// Checks the `value` of an IP access rule against its `type` and gives the canonical key that
// uniqueness is decided on (so `2001:DB8::1` and `2001:db8::1` are one rule). The value itself is
// stored as written, so a config file and the API never disagree about it.
import { formatIp, networkOf, parseIp, sameIp } from '../../net/ip.ts';
import { ISO_COUNTRIES } from './countries.ts';

export type IpRuleType = 'ip' | 'cidr' | 'asn' | 'country';
export type ValueCheck = { ok: true; key: string } | { ok: false; reason: string };

const MAX_ASN = 4_294_967_295;

export function checkRuleValue(type: IpRuleType, value: string): ValueCheck {
  switch (type) {
    case 'ip': {
      const address = parseIp(value);
      return address ? { ok: true, key: formatIp(address) } : { ok: false, reason: 'is not an IPv4 or IPv6 address' };
    }
    case 'cidr': {
      const slash = value.indexOf('/');
      const address = slash > 0 ? parseIp(value.slice(0, slash)) : null;
      const prefixText = value.slice(slash + 1);
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
