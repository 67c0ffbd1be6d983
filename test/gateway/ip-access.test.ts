import { describe, expect, it } from 'vitest';
import { compileIpAccess, parseAsnValue, type IpAccessSource } from '../../gateway/rules/ip-access.ts';
import { cidrToRange } from '../../gateway/rules/ip-ranges.ts';
import { formatIp, parseIp, type ParsedIp } from '../../schemas/checks/ip.ts';

const ip = (text: string): ParsedIp => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`bad test address ${text}`);
  return parsed;
};

let counter = 0;
const rule = (type: string, value: string, action: string, expires_at: Date | null = null): IpAccessSource => ({ id: `r${++counter}-${type}-${value}-${action}`, type, value, action, expires_at });

describe('compileIpAccess', () => {
  it('matches addresses and networks, IPv4 and IPv6, at their boundaries', () => {
    const rules = [rule('ip', '198.51.100.7', 'deny'), rule('cidr', '203.0.113.0/24', 'challenge'), rule('cidr', '2001:db8::/32', 'deny'), rule('ip', '2001:db9::1', 'deny')];
    const table = compileIpAccess(rules);
    expect(table.needsAsn).toBe(false);
    expect(table.match(ip('198.51.100.7'), null)).toEqual({ action: 'deny', ruleId: rules[0]!.id });
    expect(table.match(ip('198.51.100.6'), null)).toBeNull();
    expect(table.match(ip('198.51.100.8'), null)).toBeNull();
    expect(table.match(ip('203.0.113.0'), null)?.ruleId).toBe(rules[1]!.id);
    expect(table.match(ip('203.0.113.255'), null)?.action).toBe('challenge');
    expect(table.match(ip('203.0.112.255'), null)).toBeNull();
    expect(table.match(ip('203.0.114.0'), null)).toBeNull();
    expect(table.match(ip('2001:db8::'), null)?.ruleId).toBe(rules[2]!.id);
    expect(table.match(ip('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'), null)?.ruleId).toBe(rules[2]!.id);
    expect(table.match(ip('2001:db9::'), null)).toBeNull();
    expect(table.match(ip('2001:DB9::1'), null)?.ruleId).toBe(rules[3]!.id);
    expect(table.match(ip('::ffff:198.51.100.7'), null)?.ruleId).toBe(rules[0]!.id);
  });

  it('lets allow beat deny and deny beat challenge, whatever the specificity', () => {
    const denyNet = rule('cidr', '198.51.100.0/24', 'deny');
    const allowOne = rule('ip', '198.51.100.9', 'allow');
    const challengeOne = rule('ip', '198.51.100.10', 'challenge');
    const allowWide = rule('cidr', '10.0.0.0/8', 'allow');
    const denyInside = rule('ip', '10.1.2.3', 'deny');
    const challengeWide = rule('cidr', '172.16.0.0/12', 'challenge');
    const denyNarrow = rule('cidr', '172.16.5.0/24', 'deny');
    const table = compileIpAccess([denyNet, allowOne, challengeOne, allowWide, denyInside, challengeWide, denyNarrow]);
    expect(table.match(ip('198.51.100.9'), null)).toEqual({ action: 'allow', ruleId: allowOne.id });
    expect(table.match(ip('198.51.100.10'), null)).toEqual({ action: 'deny', ruleId: denyNet.id });
    expect(table.match(ip('198.51.100.11'), null)).toEqual({ action: 'deny', ruleId: denyNet.id });
    expect(table.match(ip('10.1.2.3'), null)).toEqual({ action: 'allow', ruleId: allowWide.id });
    expect(table.match(ip('172.16.5.1'), null)).toEqual({ action: 'deny', ruleId: denyNarrow.id });
    expect(table.match(ip('172.16.6.1'), null)).toEqual({ action: 'challenge', ruleId: challengeWide.id });
  });

  it('names the most specific rule among rules with the same action, then the earliest', () => {
    const wide = rule('cidr', '198.51.0.0/16', 'deny');
    const narrow = rule('cidr', '198.51.100.0/24', 'deny');
    const single = rule('ip', '198.51.100.1', 'deny');
    const duplicate = rule('cidr', '198.51.100.0/24', 'deny');
    const table = compileIpAccess([wide, narrow, single, duplicate]);
    expect(table.match(ip('198.51.100.1'), null)?.ruleId).toBe(single.id);
    expect(table.match(ip('198.51.100.2'), null)?.ruleId).toBe(narrow.id);
    expect(table.match(ip('198.51.7.7'), null)?.ruleId).toBe(wide.id);
  });

  it('matches ASN and country rules from the origin, and only asks for it when such rules exist', () => {
    const asnDeny = rule('asn', 'AS64500', 'deny');
    const asnPlain = rule('asn', '64501', 'challenge');
    const countryDeny = rule('country', 'FR', 'deny');
    const table = compileIpAccess([asnDeny, asnPlain, countryDeny]);
    expect(table.needsAsn).toBe(true);
    expect(table.match(ip('192.0.2.1'), { asn: 64500, country: 'NL' })?.ruleId).toBe(asnDeny.id);
    expect(table.match(ip('192.0.2.1'), { asn: 64501, country: 'NL' })).toEqual({ action: 'challenge', ruleId: asnPlain.id });
    expect(table.match(ip('192.0.2.1'), { asn: 64501, country: 'FR' })).toEqual({ action: 'deny', ruleId: countryDeny.id });
    expect(table.match(ip('192.0.2.1'), { asn: 64999, country: 'fr' })?.ruleId).toBe(countryDeny.id);
    expect(table.match(ip('192.0.2.1'), { asn: 64999, country: null })).toBeNull();
    expect(table.match(ip('192.0.2.1'), null)).toBeNull();
    expect(compileIpAccess([rule('ip', '192.0.2.1', 'deny')]).needsAsn).toBe(false);
  });

  it('applies precedence across kinds: an address allow beats an ASN deny, a country allow beats an address deny', () => {
    const allowAddress = rule('ip', '198.51.100.9', 'allow');
    const denyAsn = rule('asn', 'AS64500', 'deny');
    const denyAddress = rule('ip', '203.0.113.5', 'deny');
    const allowCountry = rule('country', 'NL', 'allow');
    const table = compileIpAccess([allowAddress, denyAsn, denyAddress, allowCountry]);
    expect(table.match(ip('198.51.100.9'), { asn: 64500, country: 'US' })?.ruleId).toBe(allowAddress.id);
    expect(table.match(ip('198.51.100.8'), { asn: 64500, country: 'US' })?.ruleId).toBe(denyAsn.id);
    expect(table.match(ip('203.0.113.5'), { asn: 64501, country: 'NL' })?.ruleId).toBe(allowCountry.id);
    // Same action from two kinds: the address rule is named.
    const denyBoth = compileIpAccess([denyAsn, denyAddress]);
    expect(denyBoth.match(ip('203.0.113.5'), { asn: 64500, country: null })?.ruleId).toBe(denyAddress.id);
  });

  it('ignores expired rows, unknown kinds and actions, and unreadable values', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const expired = rule('ip', '192.0.2.1', 'allow', new Date(now - 1));
    const live = rule('ip', '192.0.2.1', 'deny', new Date(now + 60_000));
    const table = compileIpAccess(
      [expired, live, rule('ip', 'not an ip', 'deny'), rule('cidr', '192.0.2.0/40', 'deny'), rule('ip', '192.0.2.0/24', 'deny'), rule('asn', 'ASX', 'deny'), rule('country', 'France', 'deny'), rule('port', '80', 'deny'), rule('ip', '192.0.2.2', 'block')],
      now,
    );
    expect(table.match(ip('192.0.2.1'), null)?.ruleId).toBe(live.id);
    expect(table.match(ip('192.0.2.2'), null)).toBeNull();
    expect(table.match(ip('192.0.2.3'), null)).toBeNull();
    expect(table.needsAsn).toBe(false);
    expect(compileIpAccess([rule('asn', 'AS1', 'deny', new Date(now - 1))], now).needsAsn).toBe(false);
    expect(compileIpAccess([rule('ip', '192.0.2.1', 'deny', new Date(Date.now() - 1000))]).match(ip('192.0.2.1'), null)).toBeNull();
  });

  it('reads AS numbers in the stored forms', () => {
    expect(parseAsnValue('AS64500')).toBe(64500);
    expect(parseAsnValue('as64500')).toBe(64500);
    expect(parseAsnValue('64500')).toBe(64500);
    expect(parseAsnValue('AS0')).toBeNull();
    expect(parseAsnValue('AS4294967296')).toBeNull();
    expect(parseAsnValue('AS-1')).toBeNull();
  });

  it('gives the same answers as a per-rule scan with 10 000 generated rules', () => {
    let seed = 12345;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const actions = ['allow', 'deny', 'challenge'] as const;
    const rows: IpAccessSource[] = [];
    for (let i = 0; i < 10_000; i++) {
      const action = actions[next(10) === 0 ? 0 : next(10) < 6 ? 1 : 2]!;
      const kind = next(10);
      if (kind < 5) rows.push({ id: `r${String(i).padStart(5, '0')}`, type: 'ip', value: `10.${next(4)}.${next(256)}.${next(256)}`, action, expires_at: null });
      else if (kind < 8) {
        const prefix = 16 + next(17);
        const base = formatIp({ version: 4, value: (10 * 2 ** 24 + next(4 * 65536) * 256) >>> 0 });
        const range = cidrToRange(`${base}/${prefix}`)!;
        rows.push({ id: `r${String(i).padStart(5, '0')}`, type: 'cidr', value: `${formatIp({ version: 4, value: range.start as number })}/${prefix}`, action, expires_at: null });
      } else if (kind < 9) rows.push({ id: `r${String(i).padStart(5, '0')}`, type: 'cidr', value: `2001:db8:${next(64).toString(16)}::/48`, action, expires_at: null });
      else rows.push({ id: `r${String(i).padStart(5, '0')}`, type: 'ip', value: `2001:db8:${next(64).toString(16)}::${next(65536).toString(16)}`, action, expires_at: null });
    }
    const table = compileIpAccess(rows);
    const rank = { allow: 0, deny: 1, challenge: 2 } as const;
    const parsedRules = rows.map((row) => ({ row, range: cidrToRange(row.value)! }));
    const reference = (address: ParsedIp): string | null => {
      let best: string | null = null;
      for (const { row, range } of parsedRules) {
        const inside =
          address.version === 4
            ? range.version === 4 && range.start <= address.value && address.value <= range.end
            : range.version === 6 && (() => {
                let v = 0n;
                for (const g of address.groups) v = (v << 16n) | BigInt(g);
                return range.start <= v && v <= range.end;
              })();
        if (inside && (best === null || rank[row.action as keyof typeof rank] < rank[best as keyof typeof rank])) best = row.action;
      }
      return best;
    };
    const samples: ParsedIp[] = [];
    for (let i = 0; i < 400; i++) samples.push(ip(`10.${next(4)}.${next(256)}.${next(256)}`));
    for (const { row } of parsedRules.slice(0, 300)) samples.push(ip(row.value.split('/')[0]!));
    for (let i = 0; i < 100; i++) samples.push(ip(`2001:db8:${next(64).toString(16)}::${next(65536).toString(16)}`));
    for (const address of samples) expect(table.match(address, null)?.action ?? null, formatIp(address)).toBe(reference(address));
  });
});
