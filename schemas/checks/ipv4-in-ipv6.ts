// The one decoder of IPv4 addresses carried inside IPv6 addresses. An address check that looks only
// at the IPv6 ranges lets `::7f00:1` or `2002:7f00:1::1` through although the packets (or the
// translator, or the relay) end at 127.0.0.1, so both address policies (address-policy.ts for
// tenant URLs, metadata-address.ts for Shield origins) judge every IPv4 address an IPv6 address may
// stand for with their IPv4 rules. The forms:
//
//   ::ffff:a.b.c.d           IPv4-mapped (RFC 4291): what a dual-stack socket connects to as IPv4
//   ::ffff:0:a.b.c.d         IPv4-translated (RFC 2765, SIIT)
//   ::a.b.c.d                IPv4-compatible (RFC 4291, deprecated); `::` and `::1` decode to
//                            0.0.0.0 and 0.0.0.1, which the callers tell apart themselves
//   64:ff9b::a.b.c.d         NAT64 well-known prefix (RFC 6052), always a /96
//   64:ff9b:1::/48           NAT64 local-use prefix (RFC 8215): a network may use any RFC 6052
//                            prefix length inside it (48, 56, 64 or 96), so every placement of the
//                            IPv4 address those lengths define is returned
//   2002:AABB:CCDD::/48      6to4 (RFC 3056): the IPv4 address of the site's relay end, bits 16–47
//   2001:0::/32              Teredo (RFC 4380): the server's IPv4 address in bits 32–63 and the
//                            client's, obfuscated (every bit inverted), in bits 96–127
//
// Works on the eight 16-bit groups of ip.ts's parser; imports nothing, so ip.ts may use it too.

export type EmbeddingForm = 'IPv4-mapped' | 'IPv4-translated' | 'IPv4-compatible' | 'NAT64' | 'local-use NAT64' | '6to4' | 'Teredo server' | 'Teredo client';

export interface EmbeddedIpv4 {
  /** The IPv4 address as an unsigned 32-bit number. */
  value: number;
  form: EmbeddingForm;
}

const u32 = (high: number, low: number): number => ((high << 16) | low) >>> 0;

/** Every IPv4 address `groups` (an IPv6 address) may stand for, with the form that carries it; empty for none. */
export function embeddedIpv4s(groups: Uint16Array): EmbeddedIpv4[] {
  const g = groups;
  const low = u32(g[6]!, g[7]!);
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0) {
    if (g[4] === 0 && g[5] === 0xffff) return [{ value: low, form: 'IPv4-mapped' }];
    if (g[4] === 0xffff && g[5] === 0) return [{ value: low, form: 'IPv4-translated' }];
    if (g[4] === 0 && g[5] === 0) return [{ value: low, form: 'IPv4-compatible' }];
    return [];
  }
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    if (g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0) return [{ value: low, form: 'NAT64' }];
    if (g[2] === 1) {
      // RFC 6052 §2.2: bits 64–71 (the "u" octet) never carry address bits.
      return [
        { value: u32(g[3]!, ((g[4]! & 0xff) << 8) | (g[5]! >>> 8)), form: 'local-use NAT64' }, // /48
        { value: (((g[3]! & 0xff) << 24) | ((g[4]! & 0xff) << 16) | g[5]!) >>> 0, form: 'local-use NAT64' }, // /56
        { value: (((g[4]! & 0xff) << 24) | (g[5]! << 8) | (g[6]! >>> 8)) >>> 0, form: 'local-use NAT64' }, // /64
        { value: low, form: 'local-use NAT64' }, // /96
      ];
    }
    return [];
  }
  if (g[0] === 0x2002) return [{ value: u32(g[1]!, g[2]!), form: '6to4' }];
  if (g[0] === 0x2001 && g[1] === 0) {
    return [
      { value: u32(g[2]!, g[3]!), form: 'Teredo server' },
      { value: ~low >>> 0, form: 'Teredo client' },
    ];
  }
  return [];
}
