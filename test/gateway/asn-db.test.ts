import { describe, expect, it } from 'vitest';
import { AsnDatabase } from '../../gateway/rules/asn-db.ts';
import { formatIp, parseIp, type ParsedIp } from '../../schemas/checks/ip.ts';

const ip = (text: string): ParsedIp => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`bad test address ${text}`);
  return parsed;
};

describe('AsnDatabase from the fixture', () => {
  const db = AsnDatabase.load('test/fixtures/ip2asn/ip2asn-small.tsv');

  it('answers ASN and country for routed ranges, first and last address included', () => {
    expect(db.lookup(ip('127.0.0.1'))).toEqual({ asn: 64510, country: 'FR' });
    expect(db.lookup(ip('127.0.0.0'))).toEqual({ asn: 64510, country: 'FR' });
    expect(db.lookup(ip('127.255.255.255'))).toEqual({ asn: 64510, country: 'FR' });
    expect(db.lookup(ip('198.51.100.0'))).toEqual({ asn: 64500, country: 'NL' });
    expect(db.lookup(ip('198.51.100.255'))).toEqual({ asn: 64500, country: 'NL' });
    expect(db.lookup(ip('203.0.113.99'))).toEqual({ asn: 64501, country: 'US' });
    expect(db.lookup(ip('::1'))).toEqual({ asn: 64511, country: 'FR' });
    expect(db.lookup(ip('2001:db8::5'))).toEqual({ asn: 64502, country: 'DE' });
    expect(db.lookup(ip('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'))).toEqual({ asn: 64502, country: 'DE' });
    expect(db.lookup(ip('::ffff:127.0.0.1'))).toEqual({ asn: 64510, country: 'FR' });
  });

  it('answers null for unrouted space and outside every row', () => {
    for (const address of ['0.0.0.0', '10.0.0.1', '126.255.255.255', '128.0.0.0', '198.51.99.255', '198.51.101.0', '203.0.114.0', '255.255.255.255', '::', '::2', '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::']) {
      expect(db.lookup(ip(address)), address).toBeNull();
    }
  });

  it('stores only routed ranges', () => {
    expect(db.size).toBe(5);
    expect(db.skippedRows).toBe(0);
  });
});

describe('AsnDatabase.parse', () => {
  it('reads country "None" or empty as null, lower case as upper case, and AS-prefixed numbers', () => {
    const db = AsnDatabase.parse(
      ['192.0.2.0\t192.0.2.255\t64496\tNone\tNO-COUNTRY', '198.18.0.0\t198.18.255.255\t64497\t\tEMPTY', '198.19.0.0\t198.19.255.255\tAS64498\tse\tLOWER', ''].join('\n'),
    );
    expect(db.lookup(ip('192.0.2.1'))).toEqual({ asn: 64496, country: null });
    expect(db.lookup(ip('198.18.1.1'))).toEqual({ asn: 64497, country: null });
    expect(db.lookup(ip('198.19.1.1'))).toEqual({ asn: 64498, country: 'SE' });
  });

  it('skips comments, blank lines and CRLF endings, and counts unreadable rows without failing', () => {
    const db = AsnDatabase.parse(
      [
        '# a comment',
        '',
        '192.0.2.0\t192.0.2.255\t64496\tUS\tOK\r',
        '192.0.2.300\t192.0.3.0\t64497\tUS\tBAD-ADDRESS',
        '198.51.100.9\t198.51.100.1\t64497\tUS\tREVERSED',
        '2001:db8::\t192.0.2.1\t64497\tUS\tMIXED',
        '2001:db8:::1\t2001:db8::2\t64497\tUS\tBAD-V6',
        '203.0.113.0\t203.0.113.255\tAS\tUS\tNO-NUMBER',
        '203.0.113.0\t203.0.113.255\t99999999999\tUS\tTOO-BIG',
        'just one field',
        '2001:db8::\t2001:db8::ffff\t64499\tCA\tLAST',
      ].join('\n'),
    );
    expect(db.lookup(ip('192.0.2.255'))).toEqual({ asn: 64496, country: 'US' });
    expect(db.lookup(ip('2001:db8::ff'))).toEqual({ asn: 64499, country: 'CA' });
    expect(db.lookup(ip('203.0.113.1'))).toBeNull();
    expect(db.skippedRows).toBe(7);
  });

  it('treats AS 0, "None" and "Not routed" rows as unrouted', () => {
    const db = AsnDatabase.parse(['10.0.0.0\t10.0.0.255\t0\tNone\tNot routed', '10.0.1.0\t10.0.1.255\tNone\tNone\tNone', '10.0.2.0\t10.0.2.255\t64500\tUS\tNot routed', '10.0.3.0\t10.0.3.255\t64500\tUS\tROUTED'].join('\n'));
    expect(db.lookup(ip('10.0.0.1'))).toBeNull();
    expect(db.lookup(ip('10.0.1.1'))).toBeNull();
    expect(db.lookup(ip('10.0.2.1'))).toBeNull();
    expect(db.lookup(ip('10.0.3.1'))).toEqual({ asn: 64500, country: 'US' });
    expect(db.size).toBe(1);
  });

  it('reads every IPv6 spelling, including an embedded IPv4 tail', () => {
    const db = AsnDatabase.parse(
      [
        '2001:0db8:0000:0000:0000:0000:0000:0000\t2001:0db8:0000:0000:ffff:ffff:ffff:ffff\t64501\tNL\tFULL',
        '2001:db8:1::\t2001:db8:1::ffff\t64502\tNL\tCOMPRESSED',
        '::ffff:192.0.2.0\t::ffff:192.0.2.255\t64503\tNL\tMAPPED',
        'FE80::\tFE80::FFFF\t64504\tNL\tUPPER',
      ].join('\n'),
    );
    expect(db.lookup(ip('2001:db8::abcd'))?.asn).toBe(64501);
    expect(db.lookup(ip('2001:db8:1::42'))?.asn).toBe(64502);
    expect(db.lookup(ip('192.0.2.10'))?.asn).toBe(64503);
    expect(db.lookup(ip('fe80::1'))?.asn).toBe(64504);
    expect(db.skippedRows).toBe(0);
  });

  it('copes with rows out of order and overlapping (first row wins)', () => {
    const db = AsnDatabase.parse(['203.0.113.0\t203.0.113.255\t64501\tUS\tB', '198.51.100.0\t198.51.100.255\t64500\tNL\tA', '198.51.100.128\t198.51.101.255\t64509\tDE\tOVERLAP'].join('\n'));
    expect(db.lookup(ip('198.51.100.200'))?.asn).toBe(64500);
    expect(db.lookup(ip('198.51.101.0'))?.asn).toBe(64509);
    expect(db.lookup(ip('203.0.113.0'))?.asn).toBe(64501);
  });

  it('loads a large generated file and answers every sampled address correctly', () => {
    const rows: string[] = [];
    const expected: { start: number; end: number; asn: number | null }[] = [];
    let next = 16_777_216;
    for (let i = 0; i < 100_000; i++) {
      const start = next;
      const end = start + 256 * (1 + (i % 4)) - 1;
      next = end + 1;
      const routed = i % 6 !== 0;
      const asn = routed ? 1000 + (i % 5000) : null;
      const text = (v: number) => formatIp({ version: 4, value: v });
      rows.push(routed ? `${text(start)}\t${text(end)}\t${asn}\tUS\tNET-${i}` : `${text(start)}\t${text(end)}\t0\tNone\tNot routed`);
      expected.push({ start, end, asn });
    }
    const db = AsnDatabase.parse(rows.join('\n'));
    for (let i = 0; i < expected.length; i += 97) {
      const row = expected[i]!;
      for (const value of [row.start, row.end, (row.start + row.end) >>> 1]) {
        expect(db.lookup({ version: 4, value })?.asn ?? null).toBe(row.asn);
      }
    }
  });
});
