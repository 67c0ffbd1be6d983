// A site's IP access rules compiled for the request path: address and network rules become one
// range table (binary search), ASN and country rules two hash maps. A lookup therefore costs the
// same with 10 or 10 000 rules.
//
// Precedence: allow > deny > challenge, whatever the specificity — an allow for 198.51.100.9 beats
// a deny for 198.51.100.0/24, and equally an allow for a /8 beats a deny for one address inside
// it: a site admin's explicit allow always wins (docs/shield-gateway.md). Among rules with the same
// action the match reported is the most specific one (address/network before ASN before country;
// the narrowest network; then the earliest row, the loader's id order), so the decision names the
// rule an operator would expect.
//
// Rows are validated again here and unreadable ones ignored (the API refuses them already; a
// compile must never throw on stored data). Rows whose `expires_at` has passed are ignored too.
import type { IpAccessRuleRow } from '../../platform/db/schema.ts';
import type { ParsedIp } from '../../schemas/checks/ip.ts';
import { cidrToRange, IpRangeTableBuilder, type IpRange, type IpRangeTable } from './ip-ranges.ts';

export type IpAccessAction = 'allow' | 'deny' | 'challenge';

export interface IpAccessMatch {
  action: IpAccessAction;
  ruleId: string;
}

export interface IpAccessTable {
  /** Whether any ASN or country rule exists: only then is the client's origin worth looking up. */
  needsAsn: boolean;
  match(ip: ParsedIp, origin: { asn: number; country: string | null } | null): IpAccessMatch | null;
}

export type IpAccessSource = Pick<IpAccessRuleRow, 'id' | 'type' | 'value' | 'action' | 'expires_at'>;

const RANK: Record<IpAccessAction, number> = { allow: 0, deny: 1, challenge: 2 };

function isAction(value: string): value is IpAccessAction {
  return value === 'allow' || value === 'deny' || value === 'challenge';
}

/** `AS64500`, `as64500` or `64500` → 64500; null when not an AS number. */
export function parseAsnValue(value: string): number | null {
  const digits = /^(?:AS)?(\d{1,10})$/i.exec(value.trim())?.[1];
  if (digits === undefined) return null;
  const asn = Number(digits);
  return asn >= 1 && asn <= 4_294_967_295 ? asn : null;
}

/** Keeps the better of two matches for a key: lower action rank, else the one seen first. */
function keepBest<K>(map: Map<K, IpAccessMatch>, key: K, match: IpAccessMatch): void {
  const existing = map.get(key);
  if (!existing || RANK[match.action] < RANK[existing.action]) map.set(key, match);
}

function better(a: IpAccessMatch | null | undefined, b: IpAccessMatch | null | undefined): IpAccessMatch | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return RANK[b.action] < RANK[a.action] ? b : a;
}

const rangeSize = (range: IpRange): bigint => (range.version === 4 ? BigInt(range.end - range.start) : range.end - range.start);

export function compileIpAccess(rows: readonly IpAccessSource[], now: number = Date.now()): IpAccessTable {
  const ranges: { range: IpRange; match: IpAccessMatch; order: number }[] = [];
  const asns = new Map<number, IpAccessMatch>();
  const countries = new Map<string, IpAccessMatch>();

  rows.forEach((row, order) => {
    // new Date() also copes with a driver handing back the timestamp as text.
    if (row.expires_at && new Date(row.expires_at).getTime() <= now) return;
    if (!isAction(row.action)) return;
    const match: IpAccessMatch = { action: row.action, ruleId: row.id };
    switch (row.type) {
      case 'ip':
      case 'cidr': {
        const range = row.type === 'ip' && row.value.includes('/') ? null : cidrToRange(row.value.trim());
        if (range) ranges.push({ range, match, order });
        return;
      }
      case 'asn': {
        const asn = parseAsnValue(row.value);
        if (asn !== null) keepBest(asns, asn, match);
        return;
      }
      case 'country': {
        const code = row.value.trim().toUpperCase();
        if (/^[A-Z]{2}$/.test(code)) keepBest(countries, code, match);
        return;
      }
    }
  });

  // The builder lets the entry added first win an overlap: add in precedence order.
  ranges.sort((a, b) => {
    const byAction = RANK[a.match.action] - RANK[b.match.action];
    if (byAction !== 0) return byAction;
    const sa = rangeSize(a.range);
    const sb = rangeSize(b.range);
    return sa < sb ? -1 : sa > sb ? 1 : a.order - b.order;
  });
  const builder = new IpRangeTableBuilder<IpAccessMatch>();
  for (const { range, match } of ranges) builder.add(range, match);
  const table: IpRangeTable<IpAccessMatch> | null = ranges.length > 0 ? builder.build() : null;

  const needsAsn = asns.size > 0 || countries.size > 0;
  return {
    needsAsn,
    match(ip, origin) {
      const byAddress = table?.lookup(ip) ?? null;
      if (byAddress?.action === 'allow' || !needsAsn || !origin) return byAddress;
      // Ties keep the earlier argument: address before ASN before country.
      const byAsn = asns.get(origin.asn);
      const byCountry = origin.country === null ? undefined : countries.get(origin.country.toUpperCase());
      return better(better(byAddress, byAsn), byCountry);
    },
  };
}
