// The plan-time impact warning in words (provider/resources/impact.ts): answers of the impact
// preview API, built in the response's shape, and the sentence each gives; and the provider's
// `impact_window` durations.
import { describe, expect, it } from 'vitest';
import { describeImpact, windowText, type ImpactAnswer } from '../../provider/resources/impact.ts';
import { readImpactWindow } from '../../schemas/impact-window.ts';

type Stats = ImpactAnswer['totals']['newly_blocked'];

const DAY = 24 * 3_600_000;

function stats(requests: number, clients: number, statuses: Record<string, number> = {}): Stats {
  const classes: Record<string, number> = {};
  for (const [code, n] of Object.entries(statuses)) classes[`${code[0]}xx`] = (classes[`${code[0]}xx`] ?? 0) + n;
  return {
    requests,
    clients,
    networks: clients,
    top_clients: [],
    top_networks: [],
    origin_statuses: { classes, exact: statuses },
    with_session: 0,
    first_seen: null,
    last_seen: null,
    hourly: [],
    examples: [],
  };
}

function answer(totals: { blocked?: Stats; challenged?: Stats; allowed?: Stats; records?: number; withValues?: number; exact?: boolean }, extra: Partial<ImpactAnswer> = {}): ImpactAnswer {
  const until = '2025-06-02T12:00:00.000Z';
  const since = '2025-06-01T12:00:00.000Z';
  const records = totals.records ?? 100;
  return {
    site_id: 'site_1',
    window: { since, until },
    covered: { since, recorded_since: '2025-05-01T00:00:00.000Z' },
    mode: { current: 'block', proposed: 'block' },
    totals: {
      coverage: { records, with_values: totals.withValues ?? records, exact: totals.exact ?? true },
      newly_blocked: totals.blocked ?? stats(0, 0),
      newly_challenged: totals.challenged ?? stats(0, 0),
      newly_allowed: totals.allowed ?? stats(0, 0),
      unchanged: records,
      softened: 0,
    },
    objects: [],
    differs_from_recorded: 0,
    warnings: [],
    ...extra,
  };
}

describe('the impact warning', () => {
  it('new blocks: requests, clients and how many the origin had answered 2xx', () => {
    expect(describeImpact(answer({ blocked: stats(37, 4, { '200': 2, '404': 35 }) }), DAY)).toBe('would have blocked 37 requests from 4 clients in the last 24 h (2 answered 200 by the origin).');
    expect(describeImpact(answer({ blocked: stats(1, 1, { '403': 1 }) }), DAY)).toBe('would have blocked 1 request from 1 client in the last 24 h.');
    expect(describeImpact(answer({ blocked: stats(5, 2, { '200': 3, '204': 2 }) }), DAY)).toBe('would have blocked 5 requests from 2 clients in the last 24 h (5 answered 2xx by the origin).');
  });

  it('challenges and newly allowed requests, each in its own clause', () => {
    const text = describeImpact(answer({ blocked: stats(3, 1, { '200': 3 }), challenged: stats(4, 2), allowed: stats(6, 3) }), DAY);
    expect(text).toBe('would have blocked 3 requests from 1 client in the last 24 h (3 answered 200 by the origin), challenged 4 requests from 2 clients and let through 6 requests from 3 clients (blocked or challenged now).');
    expect(describeImpact(answer({ allowed: stats(2, 1) }), DAY, 'Deleting aegis_ip_access_rule ip 192.0.2.50 (deny)')).toBe(
      'Deleting aegis_ip_access_rule ip 192.0.2.50 (deny) would have let through 2 requests from 1 client in the last 24 h (blocked or challenged now).',
    );
  });

  it('notes sampled values, a record younger than the window, and the replay’s own warnings', () => {
    const sampled = answer({ blocked: stats(2, 1), records: 5000, withValues: 120, exact: false });
    expect(describeImpact(sampled, DAY)).toBe('would have blocked 2 requests from 1 client in the last 24 h. Values sampled: 120 of 5000 requests (the counts are a lower bound).');
    // Not exact, but every request kept its values: the counts are complete.
    expect(describeImpact(answer({ blocked: stats(2, 1), records: 50, withValues: 50, exact: false }), DAY)).not.toMatch(/sampled/);
    const young = answer({ blocked: stats(2, 1) }, { covered: { since: '2025-06-02T09:30:00.123Z', recorded_since: '2025-06-02T09:30:00.123Z' }, warnings: ['proposed: ASN and country rules were not replayed: no ASN database'] });
    expect(describeImpact(young, DAY)).toBe(
      'would have blocked 2 requests from 1 client in the last 24 h. Traffic is recorded only since 2025-06-02T09:30:00Z. proposed: ASN and country rules were not replayed: no ASN database.',
    );
  });

  it('nothing when no traffic is recorded or no outcome changes', () => {
    expect(describeImpact(answer({}), DAY)).toBeNull();
    expect(describeImpact(answer({ blocked: stats(3, 1) }, { covered: { since: null, recorded_since: null } }), DAY)).toBeNull();
  });
});

describe('impact_window (the grammar the reconciler and the API share: schemas/impact-window.ts)', () => {
  it('reads days, hours and minutes, and refuses anything else', () => {
    const ms = (text: string): number | undefined => readImpactWindow(text)?.ms;
    expect(ms('24h')).toBe(DAY);
    expect(ms('90m')).toBe(90 * 60_000);
    expect(ms('1d12h')).toBe(36 * 3_600_000);
    expect(ms(' 7d ')).toBe(7 * DAY);
    for (const bad of ['', '0h', '24', '1.5h', '24 h', 'h', '-1h', '1w', '12h1d', '91d']) expect(ms(bad), bad).toBeUndefined();
  });

  it('is named as people read it', () => {
    expect(windowText(DAY)).toBe('24 h');
    expect(windowText(2 * 3_600_000)).toBe('2 h');
    expect(windowText(7 * DAY)).toBe('7 days');
    expect(windowText(36 * 3_600_000)).toBe('36 h');
    expect(windowText(90 * 60_000)).toBe('90 min');
  });
});
