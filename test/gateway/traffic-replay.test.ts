import { describe, expect, it } from 'vitest';
import type { SiteConfig } from '../../gateway/sites/load.ts';
import { redactQuery, topFive, type ChangeStats, type ImpactReport } from '../../gateway/impact/impact-report.ts';
import { replayImpact, type ReplayInput } from '../../gateway/impact/replay.ts';
import type { RecordedValues, TrafficRecord } from '../../gateway/traffic/traffic-record.ts';
import { RecordList, type RecordRun } from '../../gateway/traffic/record-batch.ts';

const SITE_ID = 'site_replay';
/** A fixed-window boundary of every window used here (10 s, 60 s, 1 h): counters start clean at it. */
const T0 = Date.UTC(2025, 0, 15, 10, 0, 0);
const WINDOW = { since: T0 - 3_600_000, until: T0 + 3_600_000 };

type Rows = Omit<SiteConfig, 'site'>;

function config(mode: 'block' | 'log' | 'challenge', rows: Partial<Rows> = {}): SiteConfig {
  return {
    site: {
      id: SITE_ID,
      org_id: 'org_replay',
      domain: 'shop.example',
      origin_url: 'http://127.0.0.1:9',
      mode,
      path_case: 'insensitive',
      managed_rules: { enabled: false, paranoia_level: 1, exclusions: [] },
      tls: { mode: 'off', redirect_http: false, hsts: null, min_version: '1.2' },
      domain_verified_at: null,
    },
    ipRules: [],
    patches: [],
    rateLimits: [],
    schema: null,
    ...rows,
  };
}

const ipDeny = (id: string, value: string): SiteConfig['ipRules'][number] => ({ id, type: value.includes('/') ? 'cidr' : 'ip', value, action: 'deny', expires_at: null });

const sqliPatch: SiteConfig['patches'][number] = { id: 'new:sqli-id', url_pattern: '/api/*', method: 'ANY', match_param: 'id', match_regex: '(?i)union\\s+select', action: 'block', expires_at: null };

function values(fields: Partial<RecordedValues> = {}): RecordedValues {
  return { query: '', headers: { 'user-agent': 'test' }, contentType: '', body: null, ...fields };
}

function record(fields: Partial<TrafficRecord> = {}): TrafficRecord {
  const clientIp = fields.clientIp ?? '192.0.2.10';
  return {
    siteId: SITE_ID,
    at: T0,
    clientIp,
    network: `${clientIp.split('.').slice(0, 3).join('.')}.0/24`,
    asn: null,
    country: null,
    method: 'GET',
    path: '/api/items',
    status: 200,
    latencyMs: 12,
    hasSession: false,
    apiKeys: [],
    action: 'allow',
    ruleKind: null,
    ruleId: null,
    would: null,
    managedByLevel: null,
    values: null,
    valuesReason: null,
    ...fields,
  };
}

const replay = (input: Omit<ReplayInput, 'window'>): Promise<ImpactReport> => replayImpact({ window: WINDOW, ...input });

function objectOf(report: ImpactReport, kind: string, id: string | null) {
  const found = report.objects.find((o) => o.object.kind === kind && o.object.id === id);
  if (!found) throw new Error(`no ${kind} ${id} in ${JSON.stringify(report.objects.map((o) => o.object))}`);
  return found;
}

const none = (stats: ChangeStats): number => stats.requests;

describe('replayImpact', () => {
  it('counts exactly the requests from the address a new IP deny names', async () => {
    const records = [
      ...Array.from({ length: 10 }, (_, i) => record({ clientIp: '198.51.100.7', at: T0 + i * 1000, status: i < 6 ? 200 : 404, hasSession: i < 3 })),
      ...Array.from({ length: 5 }, (_, i) => record({ clientIp: '198.51.100.8', at: T0 + i * 1000 + 500 })),
    ];
    const report = await replay({ current: config('block'), proposed: config('block', { ipRules: [ipDeny('new:bad-host', '198.51.100.7')] }), records });

    const deny = objectOf(report, 'ip_access', 'new:bad-host');
    expect(deny.newly_blocked.requests).toBe(10);
    expect(deny.newly_blocked.clients).toBe(1);
    expect(deny.newly_blocked.networks).toBe(1);
    expect(deny.newly_blocked.top_clients).toEqual([{ value: '198.51.100.7', requests: 10 }]);
    expect(deny.newly_blocked.with_session).toBe(3);
    expect(deny.newly_blocked.origin_statuses).toEqual({ classes: { '2xx': 6, '3xx': 0, '4xx': 4, '5xx': 0 }, exact: { '200': 6, '404': 4 } });
    expect(deny.newly_blocked.warning).toBe('6 of these requests were answered 2xx by the origin: each is either a false positive or an exploit that worked');
    expect(deny.newly_blocked.first_seen).toBe(new Date(T0).toISOString());
    expect(deny.newly_blocked.last_seen).toBe(new Date(T0 + 9000).toISOString());
    expect(deny.newly_blocked.hourly).toEqual([{ hour: new Date(T0).toISOString(), requests: 10 }]);
    expect(deny.coverage).toEqual({ records: 15, with_values: 0, exact: true });
    expect(none(deny.newly_allowed) + none(deny.newly_challenged)).toBe(0);
    expect(report.totals.newly_blocked.requests).toBe(10);
    expect(report.totals.unchanged).toBe(5);
    expect(report.totals.coverage.exact).toBe(true);
    expect(report.objects).toHaveLength(1);
  });

  it('blocks with a new virtual patch only the records whose kept values match; records without values count in coverage only', async () => {
    const attack = '1 UNION SELECT password FROM users';
    const records = [
      ...Array.from({ length: 3 }, (_, i) => record({ at: T0 + i, clientIp: `203.0.113.${i + 1}`, values: values({ query: `id=${encodeURIComponent(attack)}&page=7` }), valuesReason: 'flagged' })),
      ...Array.from({ length: 4 }, (_, i) => record({ at: T0 + 10 + i, values: values({ query: `id=${40 + i}&page=7` }), valuesReason: 'sample' })),
      ...Array.from({ length: 5 }, (_, i) => record({ at: T0 + 20 + i })),
      // Outside the patch's URL pattern: not matched even with the attack in it.
      record({ at: T0 + 30, path: '/static/app.js', values: values({ query: `id=${encodeURIComponent(attack)}` }), valuesReason: 'sample' }),
    ];
    const report = await replay({ current: config('block'), proposed: config('block', { patches: [sqliPatch] }), records });

    const patch = objectOf(report, 'virtual_patch', 'new:sqli-id');
    expect(patch.newly_blocked.requests).toBe(3);
    expect(patch.newly_blocked.top_clients.map((c) => c.value)).toEqual(['203.0.113.1', '203.0.113.2', '203.0.113.3']);
    expect(patch.coverage.exact).toBe(false);
    expect(patch.coverage.records).toBe(13);
    expect(patch.coverage.with_values).toBe(8);
    expect(patch.coverage.note).toContain('8 of 13');
    expect(report.totals.coverage.exact).toBe(false);
    expect(report.totals.unchanged).toBe(10);

    // Examples name the parameters, never their values — nor does anything else in the report.
    expect(patch.newly_blocked.examples).toHaveLength(3);
    expect(patch.newly_blocked.examples[0]).toEqual({ method: 'GET', path: '/api/items', query: 'id=…&page=…', status: 200, at: new Date(T0).toISOString(), network: '203.0.113.0/24', has_values: true });
    const text = JSON.stringify(report);
    expect(text).not.toMatch(/union/i);
    expect(text).not.toContain('page=7');
    expect(text).not.toContain('password');
  });

  it('re-reads kept JSON and form bodies the way the gateway does', async () => {
    const patches = [{ ...sqliPatch, url_pattern: '/api/*', method: 'POST' }];
    const records = [
      record({ method: 'POST', values: values({ contentType: 'application/json', headers: { 'content-type': 'application/json; charset=utf-16' }, body: JSON.stringify({ order: { id: '0 union select 1' } }) }), valuesReason: 'flagged' }),
      record({ method: 'POST', at: T0 + 1, values: values({ contentType: 'application/x-www-form-urlencoded', body: 'id=2+UNION+SELECT+3&x=1' }), valuesReason: 'flagged' }),
      record({ method: 'POST', at: T0 + 2, values: values({ contentType: 'application/json', body: JSON.stringify({ id: 42 }) }), valuesReason: 'sample' }),
      // A multipart body as the capture keeps it: its fields as a form, the original Content-Type header kept.
      record({ method: 'POST', at: T0 + 3, values: values({ contentType: 'application/x-www-form-urlencoded', headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, body: 'id=9%20union%20select%209' }), valuesReason: 'sample' }),
    ];
    const report = await replay({ current: config('block'), proposed: config('block', { patches }), records });
    expect(objectOf(report, 'virtual_patch', 'new:sqli-id').newly_blocked.requests).toBe(3);
    expect(report.totals.unchanged).toBe(1);
    expect(report.objects.map((o) => o.object.kind)).toEqual(['virtual_patch']);
    expect(JSON.stringify(report)).not.toMatch(/union|select/i);
  });

  it('replays a rate limit over the recorded timestamps: 5 per 10 s blocks 15 of 20 requests in 2 s, none of 20 spread over a minute', async () => {
    const rateLimits: SiteConfig['rateLimits'] = [{ id: 'new:api-burst', identity: 'ip', url_pattern: '/api/*', method: 'ANY', budget: 5, window_seconds: 10, action: 'block', escalate_to_deny_minutes: 0 }];
    const burst = Array.from({ length: 20 }, (_, i) => record({ clientIp: '198.51.100.20', at: T0 + 1000 + i * 100 }));
    const spread = Array.from({ length: 20 }, (_, i) => record({ clientIp: '198.51.100.21', at: T0 + 20_000 + i * 3000 }));
    const report = await replay({ current: config('block'), proposed: config('block', { rateLimits }), records: [...burst, ...spread].sort((a, b) => a.at - b.at) });

    const limit = objectOf(report, 'rate_limit', 'new:api-burst');
    expect(limit.newly_blocked.requests).toBe(15);
    expect(limit.newly_blocked.top_clients).toEqual([{ value: '198.51.100.20', requests: 15 }]);
    expect(limit.newly_blocked.first_seen).toBe(new Date(T0 + 1500).toISOString());
    expect(limit.coverage.exact).toBe(true);
    expect(report.totals.unchanged).toBe(25);
  });

  it('remembers what clients and paths decide, never what counters decide: a log-only deny, a deny and a rate limit on repeated bare requests', async () => {
    // Three clients ask for the same two paths again and again within 3 s (bare records: no values).
    // Current: one client's /24 is denied in log only, another client is denied. Proposed adds a
    // 3-per-10 s limit on /api/*: only the counters tell a client's 4th request from its 3rd.
    const logDeny = { ...ipDeny('ipr_log', '198.51.100.0/24'), action: 'log' } as SiteConfig['ipRules'][number];
    const rateLimits: SiteConfig['rateLimits'] = [{ id: 'new:api', identity: 'ip', url_pattern: '/api/*', method: 'ANY', budget: 3, window_seconds: 10, action: 'block', escalate_to_deny_minutes: 0 }];
    const clients = ['198.51.100.7', '192.0.2.1', '203.0.113.5'];
    const records = Array.from({ length: 30 }, (_, i) => record({ clientIp: clients[i % 3]!, path: i % 2 === 0 ? '/api/items' : '/shop', at: T0 + i * 100 }));
    const current = config('block', { ipRules: [logDeny, ipDeny('ipr_deny', '203.0.113.5')] });
    const report = await replay({ current, proposed: { ...current, rateLimits }, records });
    // The first two clients send 5 requests each to /api/items: the 4th and 5th are over budget. The
    // denied client's are blocked before any counter, on both sides.
    expect(objectOf(report, 'rate_limit', 'new:api').newly_blocked.requests).toBe(4);
    expect(objectOf(report, 'rate_limit', 'new:api').newly_blocked.top_clients).toEqual([
      { value: '192.0.2.1', requests: 2 },
      { value: '198.51.100.7', requests: 2 },
    ]);
    expect(report.totals.newly_allowed.requests).toBe(0);
    expect(report.totals.unchanged).toBe(26);
    // Recorded as allowed, decided as blocked by the current deny: the denied client's 10.
    expect(report.differs_from_recorded).toBe(10);
  });

  it('answers a paranoia-level change from each request\'s recorded verdict at every level: exact without values', async () => {
    const managed = (level: number, exclusions: SiteConfig['site']['managed_rules']['exclusions'] = []) => {
      const site = config('block');
      return { ...site, site: { ...site.site, managed_rules: { enabled: true, paranoia_level: level, exclusions } } };
    };
    const level2 = [null, 'xss.dom_sink', 'xss.dom_sink', 'xss.dom_sink'];
    const level3 = [null, null, 'protocol.missing_user_agent', 'protocol.missing_user_agent'];
    const passes = [null, null, null, null];
    const records = [
      // Flagged from level 2, from level 3, never: none kept values. Read as bare requests they
      // would look like they lack every header, and level 3 would refuse all of them.
      ...Array.from({ length: 3 }, (_, i) => record({ at: T0 + i, clientIp: '203.0.113.5', managedByLevel: level2 })),
      ...Array.from({ length: 2 }, (_, i) => record({ at: T0 + 10 + i, clientIp: '203.0.113.6', managedByLevel: level3 })),
      ...Array.from({ length: 20 }, (_, i) => record({ at: T0 + 20 + i, clientIp: `198.51.100.${i + 1}`, managedByLevel: passes })),
    ];
    const toLevel2 = await replay({ current: managed(1), proposed: managed(2), records });
    expect(toLevel2.totals.newly_blocked).toMatchObject({ requests: 3, top_clients: [{ value: '203.0.113.5', requests: 3 }] });
    expect(toLevel2.objects.map((o) => [o.object, o.coverage.exact])).toEqual([[{ kind: 'managed', id: 'xss.dom_sink' }, true]]);
    expect(toLevel2.totals.coverage.exact).toBe(true);

    const toLevel3 = await replay({ current: managed(1), proposed: managed(3), records });
    expect(toLevel3.totals.newly_blocked.requests).toBe(5);
    expect(objectOf(toLevel3, 'managed', 'protocol.missing_user_agent').newly_blocked.requests).toBe(2);
    // And back down: what level 3 blocks today, level 1 lets through.
    expect((await replay({ current: managed(3), proposed: managed(1), records })).totals.newly_allowed.requests).toBe(5);

    // New exclusions were not what the gateway judged with: the rules read the requests again (here
    // none kept values), and the count is a sampled lower bound.
    const excluded = await replay({ current: managed(1), proposed: managed(2, [{ rules: ['xss'], url_pattern: '/admin/*' }]), records });
    expect(excluded.totals.coverage.exact).toBe(false);

    // A request recorded while managed rules were off has no verdicts: the level change is no longer exact.
    const mixed = await replay({ current: managed(1), proposed: managed(2), records: [...records, record({ at: T0 + 50, managedByLevel: null })] });
    expect(mixed.totals.newly_blocked.requests).toBe(3);
    expect(mixed.objects[0]!.coverage.exact).toBe(false);
  });

  it('counts an api_key rate limit by key across addresses, from the recorded key digests', async () => {
    const rateLimits: SiteConfig['rateLimits'] = [{ id: 'new:per-key', identity: 'api_key', url_pattern: '/*', method: 'ANY', budget: 3, window_seconds: 60, action: 'challenge', escalate_to_deny_minutes: 0 }];
    // One key from six addresses: counted as one client, over budget from the fourth request; another key within budget.
    const keyed = Array.from({ length: 6 }, (_, i) => record({ clientIp: `192.0.2.${i + 1}`, at: T0 + i * 100, apiKeys: ['digest-of-key-A'], hasSession: true }));
    const otherKey = Array.from({ length: 3 }, (_, i) => record({ clientIp: '192.0.2.1', at: T0 + 1000 + i * 100, apiKeys: ['digest-of-key-B'], hasSession: true }));
    const report = await replay({ current: config('block'), proposed: config('block', { rateLimits }), records: [...keyed, ...otherKey] });
    const limit = objectOf(report, 'rate_limit', 'new:per-key');
    expect(limit.newly_challenged.requests).toBe(3);
    expect(limit.newly_challenged.clients).toBe(3);
    expect(limit.newly_challenged.with_session).toBe(3);
    expect(limit.newly_blocked.requests).toBe(0);
  });

  it('attributes to the mode the current log verdicts that block once the mode is block', async () => {
    const ipRules = [ipDeny('ipr_1', '198.51.100.0/24')];
    const records = [
      ...Array.from({ length: 4 }, (_, i) => record({ clientIp: `198.51.100.${i + 1}`, at: T0 + i, action: 'log', ruleKind: 'ip_access', ruleId: 'ipr_1', would: 'block' })),
      record({ clientIp: '192.0.2.99', at: T0 + 10 }),
    ];
    const report = await replay({ current: config('log', { ipRules }), proposed: config('block', { ipRules }), records });
    expect(report.mode).toEqual({ current: 'log', proposed: 'block' });
    const mode = objectOf(report, 'mode', null);
    expect(mode.newly_blocked.requests).toBe(4);
    expect(mode.coverage.exact).toBe(true);
    expect(report.objects).toHaveLength(1);
    expect(report.differs_from_recorded).toBe(0);

    // Back from block to log: the same requests are newly allowed, again because of the mode.
    const back = await replay({ current: config('block', { ipRules }), proposed: config('log', { ipRules }), records });
    expect(objectOf(back, 'mode', null).newly_allowed.requests).toBe(4);
    // Block to challenge softens: no change kind of its own, counted apart.
    const soft = await replay({ current: config('block', { ipRules }), proposed: config('challenge', { ipRules }), records });
    expect(soft.totals.softened).toBe(4);
    expect(soft.totals.unchanged).toBe(5);
    expect(soft.objects).toEqual([]);
    // Value-reading rules make a mode change a lower bound too.
    const withPatch = await replay({ current: config('log', { ipRules, patches: [sqliPatch] }), proposed: config('block', { ipRules, patches: [sqliPatch] }), records });
    expect(objectOf(withPatch, 'mode', null).coverage.exact).toBe(false);
  });

  it('gives newly_allowed for the requests a removed rule was blocking, attributed to that rule', async () => {
    const challengeRule = { id: 'ipr_chal', type: 'cidr', value: '203.0.113.0/24', action: 'challenge', expires_at: null };
    const current = config('block', { ipRules: [ipDeny('ipr_old', '198.51.100.7'), challengeRule] });
    const proposed = config('block', { ipRules: [challengeRule] });
    const records = [
      ...Array.from({ length: 3 }, (_, i) => record({ clientIp: '198.51.100.7', at: T0 + i, action: 'block', ruleKind: 'ip_access', ruleId: 'ipr_old', status: 403 })),
      record({ clientIp: '203.0.113.5', at: T0 + 5, action: 'challenge', ruleKind: 'ip_access', ruleId: 'ipr_chal', status: 403 }),
    ];
    const report = await replay({ current, proposed, records });
    const removed = objectOf(report, 'ip_access', 'ipr_old');
    expect(removed.newly_allowed.requests).toBe(3);
    expect(removed.newly_allowed.origin_statuses.exact).toEqual({ '403': 3 });
    expect(removed.newly_allowed.warning).toBeUndefined();
    expect(report.totals.newly_allowed.requests).toBe(3);
    expect(report.totals.unchanged).toBe(1);
  });

  it('ranks the top five by requests, ties by value ascending', async () => {
    const counts: [string, number][] = [['192.0.2.1', 3], ['192.0.2.2', 5], ['192.0.2.3', 5], ['192.0.2.4', 1], ['192.0.2.7', 2], ['192.0.2.6', 2], ['192.0.2.5', 2]];
    const records = counts.flatMap(([ip, n]) => Array.from({ length: n }, () => record({ clientIp: ip }))).map((r, i) => ({ ...r, at: T0 + i }));
    const report = await replay({ current: config('block'), proposed: config('block', { ipRules: [ipDeny('new:net', '192.0.2.0/24')] }), records });
    const stats = objectOf(report, 'ip_access', 'new:net').newly_blocked;
    expect(stats.top_clients).toEqual([
      { value: '192.0.2.2', requests: 5 },
      { value: '192.0.2.3', requests: 5 },
      { value: '192.0.2.1', requests: 3 },
      { value: '192.0.2.5', requests: 2 },
      { value: '192.0.2.6', requests: 2 },
    ]);
    expect(stats.clients).toBe(7);
    expect(stats.top_networks).toEqual([{ value: '192.0.2.0/24', requests: 20 }]);
    expect(topFive(new Map([['b', 1], ['a', 1], ['c', 2]]))).toEqual([{ value: 'c', requests: 2 }, { value: 'a', requests: 1 }, { value: 'b', requests: 1 }]);
  });

  it('groups requests by hour and skips records outside the window', async () => {
    const records = [record({ at: WINDOW.since - 1 }), record({ at: T0 + 60_000 }), record({ at: T0 + 3_500_000 }), record({ at: T0 + 3_600_000 - 1 }), record({ at: WINDOW.until })];
    const report = await replay({ current: config('block'), proposed: config('block', { ipRules: [ipDeny('new:one', '192.0.2.10')] }), records });
    expect(report.totals.coverage.records).toBe(3);
    expect(report.totals.newly_blocked.hourly).toEqual([{ hour: new Date(T0).toISOString(), requests: 3 }]);
  });

  it('reads records a page at a time from an async source', async () => {
    async function* source(): AsyncGenerator<RecordRun[]> {
      for (let p = 0; p < 5; p++) {
        const requests = new RecordList(Array.from({ length: 10 }, (_, j) => p * 10 + j).map((i) => record({ clientIp: i % 2 === 0 ? '198.51.100.7' : '192.0.2.1', at: T0 + i })));
        // Two runs a page, as the reader hands out the requests of two batches.
        yield [{ requests, from: 0, to: 4 }, { requests, from: 4, to: 10 }];
      }
    }
    const report = await replay({ current: config('block'), proposed: config('challenge', { ipRules: [ipDeny('new:bad', '198.51.100.7')] }), records: source() });
    expect(objectOf(report, 'ip_access', 'new:bad').newly_challenged.requests).toBe(25);
  });

  it('redacts every value of a query string', () => {
    expect(redactQuery('a=1&b=&c&d%3D=x%3Dy')).toBe('a=…&b=…&c&d%3D=…');
    expect(redactQuery('')).toBe('');
  });
});
