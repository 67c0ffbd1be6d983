// The CSV import's fast paths against the general code they stand in for: the plain split against
// csv-parse, the direct schema check against ajv's messages, the IPv4/IPv6 canonical keys against
// net/ip's parse-and-format.
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { formatIp, networkOf, parseIp, sameIp } from '../../schemas/checks/ip.ts';
import { parseIpRulesCsv, readCsvRecords } from '../../api/shield/ip-access/csv-import.ts';
import { checkRuleValue } from '../../schemas/checks/ip-values.ts';

// A small deterministic generator, so a failure can be replayed.
function random(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

describe('CSV records', () => {
  it('reads quote-free text exactly as csv-parse does, line numbers included', () => {
    const next = random(7);
    const pieces = ['a', 'b1', ' ', ',', ',', 'é', '\t', '10.0.0.1', ''];
    // Mostly one line ending per text (the plain split's case), some mixed (csv-parse's).
    const endings = [['\n'], ['\r\n'], ['\n', '\r\n', '\r']];
    let compared = 0;
    let plain = 0;
    for (let round = 0; round < 3000; round++) {
      let text = next(10) === 0 ? '\ufeff' : '';
      const length = next(30);
      const ending = endings[next(4) === 0 ? 2 : next(2)]!;
      for (let i = 0; i < length; i++) text += next(4) === 0 ? ending[next(ending.length)] : pieces[next(pieces.length)];
      if (!/\r(?!\n)|[^\r]\n|^\n/.test(text)) plain++;
      const read = readCsvRecords(text);
      let expected: { record: string[]; info: { lines: number } }[];
      try {
        expected = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, info: true });
      } catch {
        continue;
      }
      expect('records' in read, JSON.stringify(text)).toBe(true);
      if (!('records' in read)) continue;
      expect(read.records, JSON.stringify(text)).toEqual(expected.map((r) => r.record));
      expect(read.records.map((_, i) => read.lineOf(i)), JSON.stringify(text)).toEqual(expected.map((r) => r.info.lines));
      compared++;
    }
    expect(compared).toBeGreaterThan(2500);
    expect(plain).toBeGreaterThan(1500);
  });

  it('leaves quoted fields to csv-parse', () => {
    const read = readCsvRecords('type,value,action,note\r\nip,192.0.2.1,deny,"a, ""quoted""\r\nnote"\r\n');
    expect('records' in read && read.records[1]).toEqual(['ip', '192.0.2.1', 'deny', 'a, "quoted"\r\nnote']);
  });
});

describe('CSV rows', () => {
  it('words schema problems as the JSON route does, and checks expiry through ajv', () => {
    const header = 'type,value,action,note,expires_at';
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const rows = [
      `ip,192.0.2.1,deny,${'n'.repeat(1025)},`,
      `ip,${'1'.repeat(65)},deny,,`,
      'ip,,deny,,',
      'ip,192.0.2.2,deny,,not-a-date',
      `ip,192.0.2.3,deny, fine ,${later}`,
    ];
    const result = parseIpRulesCsv([header, ...rows].join('\n'));
    expect(result.ok).toBe(false);
    expect('problems' in result && result.problems).toEqual([
      { line: 2, column: 'note', reason: 'must NOT have more than 1024 characters' },
      { line: 3, column: 'value', reason: 'must NOT have more than 64 characters' },
      { line: 4, column: 'value', reason: 'must NOT have fewer than 1 characters' },
      { line: 5, column: 'expires_at', reason: 'must match format "date-time"' },
    ]);
    const good = parseIpRulesCsv([header, rows[4]].join('\n'));
    expect(good.ok && good.rows[0]!.rule).toMatchObject({ type: 'ip', value: '192.0.2.3', valueKey: '192.0.2.3', note: 'fine', expiresAt: new Date(later) });
  });
});

describe('canonical rule values', () => {
  const general = (type: 'ip' | 'cidr', value: string): string | null => {
    const [address, prefixText] = type === 'ip' ? [value, undefined] : value.split('/');
    const ip = parseIp(address!);
    if (!ip) return null;
    if (type === 'ip') return formatIp(ip);
    const prefix = Number(prefixText);
    if (prefix > (ip.version === 4 ? 32 : 128)) return null;
    const network = networkOf(ip, prefix);
    return sameIp(network, ip) ? `${formatIp(network)}/${prefix}` : null;
  };

  it('match parse-and-format for random IPv4 and IPv6 addresses and networks', () => {
    const next = random(11);
    const v6 = () => {
      const groups = Array.from({ length: 8 }, () => (next(5) < 2 ? 0 : next(65536)));
      const text = groups.map((g) => {
        let hex = g.toString(16);
        if (next(5) === 0) hex = hex.padStart(4, '0');
        return next(5) === 0 ? hex.toUpperCase() : hex;
      });
      const at = next(8);
      const length = 1 + next(8 - at);
      if (next(2) === 0 && groups.slice(at, at + length).every((g) => g === 0)) return `${text.slice(0, at).join(':')}::${text.slice(at + length).join(':')}`;
      return text.join(':');
    };
    const v4 = () => [next(256), next(256), next(256), next(256)].join('.');
    for (let i = 0; i < 20_000; i++) {
      const address = next(2) === 0 ? v4() : v6();
      const check = checkRuleValue('ip', address);
      expect(check.ok ? check.key : null, address).toBe(general('ip', address));
      const prefix = next(3) === 0 ? next(130) : next(address.includes(':') ? 129 : 33);
      for (const network of [`${address}/${prefix}`, `${general('cidr', `${address}/0`) === null ? address : formatIp(networkOf(parseIp(address)!, Math.min(prefix, address.includes(':') ? 128 : 32)))}/${prefix}`]) {
        const checked = checkRuleValue('cidr', network);
        expect(checked.ok ? checked.key : null, network).toBe(general('cidr', network));
      }
    }
    for (const special of ['::', '::1', '1::', '1:2:3:4:5:6:7::', '::ffff:192.0.2.1', 'fe80::1%eth0', '01.2.3.4', '1.2.3.4/024', '::/0', '0.0.0.0/0']) {
      const type = special.includes('/') ? 'cidr' : 'ip';
      const check = checkRuleValue(type, special);
      expect(check.ok ? check.key : null, special).toBe(general(type, special));
    }
  });
});
