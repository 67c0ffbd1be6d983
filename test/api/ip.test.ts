// The address parser is checked against ipaddr.js, an independent implementation.
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { formatIp, networkOf, parseIp } from '../../schemas/checks/ip.ts';

describe('IP parsing', () => {
  const v6 = ['::', '::1', '2001:db8::1', '2001:DB8:0:0:0:0:0:1', 'fe80::1:2:3:4', '2001:db8:0:1::', '1:0:0:1:0:0:0:1', '::ffff:192.0.2.1', '64:ff9b::192.0.2.33', '1:2:3:4:5:6:7:8', '2001:0db8:0000:0000:0001:0000:0000:0001'];
  it.each(v6)('formats %s like ipaddr.js (RFC 5952)', (text) => {
    const ours = parseIp(text);
    expect(ours?.version).toBe(6);
    expect(formatIp(ours!)).toBe(ipaddr.IPv6.parse(text).toRFC5952String());
  });

  it('parses IPv4 strictly', () => {
    expect(formatIp(parseIp('203.0.113.7')!)).toBe('203.0.113.7');
    for (const bad of ['0x7f.0.0.1', '1.2.3', '256.1.1.1', '01.2.3.4', 'fe80::1%eth0', '', 'abc']) expect(parseIp(bad), bad).toBeNull();
  });

  it('computes networks like ipaddr.js', () => {
    for (const [addr, prefix] of [['10.1.2.3', 8], ['10.1.2.3', 0], ['10.1.2.3', 32], ['192.168.77.200', 27]] as const) {
      expect(formatIp(networkOf(parseIp(addr)!, prefix))).toBe(ipaddr.IPv4.networkAddressFromCIDR(`${addr}/${prefix}`).toString());
    }
    for (const [addr, prefix] of [['2001:db8:abcd:1234::99', 48], ['2001:db8:abcd:1234::99', 0], ['2001:db8:abcd:1234::99', 128], ['2001:db8:abcd:1234::99', 61]] as const) {
      expect(formatIp(networkOf(parseIp(addr)!, prefix))).toBe(ipaddr.IPv6.networkAddressFromCIDR(`${addr}/${prefix}`).toRFC5952String());
    }
  });
});
