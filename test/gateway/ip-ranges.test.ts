import { describe, expect, it } from 'vitest';
import { cidrToRange, IpRangeTableBuilder, ipToRange, prefixToRange, v6ToBigInt, type IpRange } from '../../gateway/rules/ip-ranges.ts';
import { parseIp, type ParsedIp } from '../../schemas/checks/ip.ts';
import { seededRandom } from '../support/seeded-random.ts';

const ip = (text: string): ParsedIp => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`bad test address ${text}`);
  return parsed;
};
const v4 = (text: string): number => {
  const parsed = ip(text);
  if (parsed.version !== 4) throw new Error(`${text} is not IPv4`);
  return parsed.value;
};
const v6 = (text: string): bigint => {
  const parsed = ip(text);
  if (parsed.version !== 6) throw new Error(`${text} is not IPv6`);
  return v6ToBigInt(parsed.groups);
};
const range = (text: string): IpRange => {
  const r = cidrToRange(text);
  if (!r) throw new Error(`bad test range ${text}`);
  return r;
};


describe('range helpers', () => {
  it('turns CIDRs and single addresses into inclusive ranges', () => {
    expect(cidrToRange('198.51.100.0/24')).toEqual({ version: 4, start: v4('198.51.100.0'), end: v4('198.51.100.255') });
    expect(cidrToRange('0.0.0.0/0')).toEqual({ version: 4, start: 0, end: 0xffffffff });
    expect(cidrToRange('203.0.113.7/32')).toEqual({ version: 4, start: v4('203.0.113.7'), end: v4('203.0.113.7') });
    expect(cidrToRange('203.0.113.7')).toEqual({ version: 4, start: v4('203.0.113.7'), end: v4('203.0.113.7') });
    expect(cidrToRange('2001:db8::/32')).toEqual({ version: 6, start: v6('2001:db8::'), end: v6('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff') });
    expect(cidrToRange('::/0')).toEqual({ version: 6, start: 0n, end: (1n << 128n) - 1n });
    expect(cidrToRange('2001:db8::1')).toEqual({ version: 6, start: v6('2001:db8::1'), end: v6('2001:db8::1') });
    expect(ipToRange(ip('::1'))).toEqual({ version: 6, start: 1n, end: 1n });
  });

  it('ignores host bits and refuses what is not a network', () => {
    expect(cidrToRange('198.51.100.77/24')).toEqual(cidrToRange('198.51.100.0/24'));
    expect(cidrToRange('198.51.100.0/33')).toBeNull();
    expect(cidrToRange('2001:db8::/129')).toBeNull();
    expect(cidrToRange('198.51.100.0/')).toBeNull();
    expect(cidrToRange('198.51.100/24')).toBeNull();
    expect(cidrToRange('example.com')).toBeNull();
    expect(prefixToRange(ip('10.0.0.0'), -1)).toBeNull();
  });
});

describe('IpRangeTable', () => {
  it('finds the first and last address of a range and nothing just outside', () => {
    const table = new IpRangeTableBuilder<string>().add(range('198.51.100.0/24'), 'a').add(range('2001:db8::/32'), 'b').build();
    expect(table.lookup(ip('198.51.100.0'))).toBe('a');
    expect(table.lookup(ip('198.51.100.255'))).toBe('a');
    expect(table.lookup(ip('198.51.99.255'))).toBeUndefined();
    expect(table.lookup(ip('198.51.101.0'))).toBeUndefined();
    expect(table.lookup(ip('2001:db8::'))).toBe('b');
    expect(table.lookup(ip('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'))).toBe('b');
    expect(table.lookup(ip('2001:db7:ffff:ffff:ffff:ffff:ffff:ffff'))).toBeUndefined();
    expect(table.lookup(ip('2001:db9::'))).toBeUndefined();
    expect(table.lookup(ip('::'))).toBeUndefined();
    expect(table.size).toBe(2);
  });

  it('covers the whole address space at both ends', () => {
    const table = new IpRangeTableBuilder<string>().add(range('0.0.0.0/0'), 'all4').add(range('::/0'), 'all6').build();
    for (const address of ['0.0.0.0', '255.255.255.255', '127.0.0.1']) expect(table.lookup(ip(address))).toBe('all4');
    for (const address of ['::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '8000::']) expect(table.lookup(ip(address))).toBe('all6');
  });

  it('lets the entry added first win an overlap, in either order', () => {
    const narrowFirst = new IpRangeTableBuilder<string>().add(range('10.1.2.0/24'), 'narrow').add(range('10.0.0.0/8'), 'wide').build();
    expect(narrowFirst.lookup(ip('10.1.2.0'))).toBe('narrow');
    expect(narrowFirst.lookup(ip('10.1.2.255'))).toBe('narrow');
    expect(narrowFirst.lookup(ip('10.1.1.255'))).toBe('wide');
    expect(narrowFirst.lookup(ip('10.1.3.0'))).toBe('wide');
    expect(narrowFirst.lookup(ip('10.0.0.0'))).toBe('wide');
    expect(narrowFirst.lookup(ip('10.255.255.255'))).toBe('wide');
    expect(narrowFirst.lookup(ip('11.0.0.0'))).toBeUndefined();
    expect([...narrowFirst.ranges()].map((r) => r.payload)).toEqual(['wide', 'narrow', 'wide']);

    const wideFirst = new IpRangeTableBuilder<string>().add(range('10.0.0.0/8'), 'wide').add(range('10.1.2.0/24'), 'narrow').build();
    expect(wideFirst.lookup(ip('10.1.2.7'))).toBe('wide');
    expect(wideFirst.size).toBe(1);

    const six = new IpRangeTableBuilder<string>().add(range('2001:db8:1::/48'), 'narrow').add(range('2001:db8::/32'), 'wide').build();
    expect(six.lookup(ip('2001:db8:1::'))).toBe('narrow');
    expect(six.lookup(ip('2001:db8:1:ffff:ffff:ffff:ffff:ffff'))).toBe('narrow');
    expect(six.lookup(ip('2001:db8:0:ffff:ffff:ffff:ffff:ffff'))).toBe('wide');
    expect(six.lookup(ip('2001:db8:2::'))).toBe('wide');
  });

  it('merges neighbouring ranges with the same payload', () => {
    const shared = { name: 'x' };
    const table = new IpRangeTableBuilder<{ name: string }>().add(range('192.0.2.0/25'), shared).add(range('192.0.2.128/25'), shared).add(range('192.0.3.0/24'), { name: 'x' }).build();
    expect([...table.ranges()].map((r) => r.range)).toEqual([
      { version: 4, start: v4('192.0.2.0'), end: v4('192.0.2.255') },
      { version: 4, start: v4('192.0.3.0'), end: v4('192.0.3.255') },
    ]);
  });

  it('treats IPv4-mapped IPv6 addresses as the IPv4 address, both ways', () => {
    const table = new IpRangeTableBuilder<string>().add(range('198.51.100.0/24'), 'v4 rule').add(range('::ffff:203.0.113.0/120'), 'mapped rule').build();
    expect(table.lookup(ip('::ffff:198.51.100.9'))).toBe('v4 rule');
    expect(table.lookup(ip('203.0.113.200'))).toBe('mapped rule');
    expect(table.lookup(ip('::ffff:203.0.113.200'))).toBe('mapped rule');
    expect(table.lookup(ip('::ffff:203.0.114.0'))).toBeUndefined();
    const everything = new IpRangeTableBuilder<string>().add(range('::/0'), 'all6').build();
    expect(everything.lookup(ip('192.0.2.1'))).toBe('all6');
  });

  it('agrees with a brute-force reference on random overlapping IPv4 ranges', () => {
    const rand = seededRandom(42);
    const base = v4('10.0.0.0');
    const entries: { start: number; end: number; payload: number }[] = [];
    for (let i = 0; i < 400; i++) {
      const start = base + Math.floor(rand() * 5000);
      entries.push({ start, end: start + Math.floor(rand() * (rand() < 0.2 ? 2000 : 40)), payload: i % 17 });
    }
    const builder = new IpRangeTableBuilder<number>();
    for (const e of entries) builder.addV4(e.start, e.end, e.payload);
    const table = builder.build();
    for (let value = base - 5; value < base + 7100; value++) {
      const expected = entries.find((e) => e.start <= value && value <= e.end)?.payload;
      expect(table.lookupV4(value), `offset ${value - base}`).toBe(expected);
    }
    const ranges = [...table.ranges()].map((r) => r.range as { start: number; end: number });
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.start).toBeGreaterThan(ranges[i - 1]!.end);
  });

  it('agrees with a brute-force reference on random overlapping IPv6 ranges, across word boundaries', () => {
    const rand = seededRandom(7);
    // Around 2^64 and 2^96 so that carries between 32-bit words are exercised.
    const bases = [v6('2001:db8::'), (1n << 64n) - 300n, (1n << 96n) - 300n];
    for (const base of bases) {
      const entries: { start: bigint; end: bigint; payload: string }[] = [];
      for (let i = 0; i < 120; i++) {
        const start = base + BigInt(Math.floor(rand() * 600));
        entries.push({ start, end: start + BigInt(Math.floor(rand() * 60)), payload: `p${i % 9}` });
      }
      const builder = new IpRangeTableBuilder<string>();
      for (const e of entries) builder.addV6(e.start, e.end, e.payload);
      const table = builder.build();
      for (let offset = -3n; offset < 700n; offset++) {
        const value = base + offset;
        const groups = new Uint16Array(8);
        for (let g = 0; g < 8; g++) groups[g] = Number((value >> BigInt(112 - g * 16)) & 0xffffn);
        const expected = entries.find((e) => e.start <= value && value <= e.end)?.payload;
        expect(table.lookupV6(groups), `offset ${offset}`).toBe(expected);
      }
    }
  });

  it('rejects reversed or out-of-range entries', () => {
    expect(() => new IpRangeTableBuilder<string>().addV4(10, 9, 'x')).toThrow(RangeError);
    expect(() => new IpRangeTableBuilder<string>().addV4(0, 2 ** 32, 'x')).toThrow(RangeError);
    expect(() => new IpRangeTableBuilder<string>().addV6(0n, 1n << 128n, 'x')).toThrow(RangeError);
  });
});
