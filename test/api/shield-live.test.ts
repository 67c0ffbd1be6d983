// GET /api/v1/shield/sites/:id/live over real HTTP connections: delivery, filters, heartbeats,
// Last-Event-ID resume (from memory and from the database), a stalled reader, shutdown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionEvent } from '../../gateway/decision.ts';
import { newId } from '../../platform/ids.ts';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSse, type Opened, type SseClient, type SseOptions } from '../support/sse.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 100_000, shieldLiveHeartbeatMs: 100, shieldAllowSampleRate: 1 });
});
afterAll(() => t?.close());

const open = (path: string, options: SseOptions & { server?: TestServer } = {}): Promise<Opened> => openSse(options.server ?? t, path, options);

async function stream(siteId: string, options: Parameters<typeof open>[1] & { query?: string } = {}): Promise<SseClient> {
  const opened = await open(`/api/v1/shield/sites/${siteId}/live${options.query ?? ''}`, options);
  expect(opened.status, JSON.stringify(opened.body)).toBe(200);
  return opened.client!;
}

interface Site {
  id: string;
  orgId: string;
}

let siteCount = 0;
async function createSite(server: TestServer = t): Promise<Site> {
  const res = await server.call('POST', '/api/v1/shield/sites', { body: { domain: `live${++siteCount}.example.com`, origin_url: 'https://origin.example.net', mode: 'block' } });
  expect(res.status).toBe(201);
  const row = await server.server.database.db.selectFrom('shield_sites').select('org_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
  return { id: res.body.id, orgId: row.org_id };
}

function decision(site: Site, fields: Partial<DecisionEvent> = {}): DecisionEvent {
  return {
    id: newId('dec'),
    time: new Date().toISOString(),
    site_id: site.id,
    org_id: site.orgId,
    action: 'block',
    rule_kind: 'virtual_patch',
    rule_id: 'vp_1',
    would: null,
    client_ip: '203.0.113.9',
    asn: 64_500,
    country: 'NL',
    method: 'GET',
    host: 'live.example.com',
    path: '/search',
    status: 403,
    request_id: newId('req'),
    ...fields,
  };
}

/** Through the real path: the recorder stores the batch, then publishes it on the live bus. */
async function record(server: TestServer, events: DecisionEvent[]): Promise<void> {
  for (const event of events) server.server.shieldEvents.recorder.record(event);
  await server.server.shieldEvents.recorder.flush();
}

/**
 * Waits until the hub hears the bus: with PostgreSQL or Redis the subscription is established
 * asynchronously, and a decision published before it would be missed. Probes go on the bus only.
 */
async function primed(client: SseClient, site: Site, server: TestServer = t): Promise<void> {
  const probe = decision(site, { action: 'log', rule_kind: 'schema', path: '/probe' });
  await eventually(async () => {
    if (client.decisions.some((d) => d.id === probe.id)) return true;
    server.server.shieldEvents.bus.publish([probe]);
    return false;
  }, 10_000, 50);
}

const ids = (events: DecisionEvent[]) => events.map((e) => e.id);

/**
 * Publishes `total` large decisions in bursts no reading client has to drop (one burst is well under
 * a client's queue), waiting each time until `reader` has them all. Returns their ids in order.
 */
async function pump(server: TestServer, site: Site, reader: SseClient, total: number): Promise<string[]> {
  const path = `/${'x'.repeat(1000)}`;
  const seen = reader.decisions.length;
  const published: string[] = [];
  for (let sent = 0; sent < total; sent += 250) {
    const batch = Array.from({ length: 250 }, () => decision(site, { path }));
    published.push(...ids(batch));
    server.server.shieldEvents.bus.publish(batch);
    await reader.until((c) => c.decisions.length >= seen + sent + 250);
  }
  return published;
}

describe('Shield live stream', () => {
  it('refuses a request that does not accept text/event-stream with 406 in the error envelope', async () => {
    const site = await createSite();
    for (const accept of [undefined, 'application/json', '*/*', 'text/event-stream;q=0']) {
      const res = await t.call('GET', `/api/v1/shield/sites/${site.id}/live`, { headers: accept ? { accept } : {} });
      expect(res.status, String(accept)).toBe(406);
      expect(res.body.error.code).toBe('not_acceptable');
      expect(res.body.error.message).toContain('text/event-stream');
    }
    const listed = await open(`/api/v1/shield/sites/${site.id}/live`, { headers: { accept: 'text/html, text/event-stream;q=0.9' } });
    expect(listed.status).toBe(200);
    listed.client!.close();
  });

  it('needs shield:read, hides other organisations’ sites and validates its parameters', async () => {
    const site = await createSite();
    const path = `/api/v1/shield/sites/${site.id}/live`;
    expect((await open(path, { key: null })).status).toBe(401);
    const scans = await keyInOrganization(t, 'default', ['scans:read']);
    const denied = await open(path, { key: scans });
    expect(denied.status).toBe(403);
    expect(denied.body?.error.code).toBe('forbidden');
    const foreign = await open(path, { key: await keyInOrganization(t, 'live-other', ['shield:read']) });
    expect(foreign.status).toBe(404);
    expect(foreign.body?.error).toMatchObject({ code: 'not_found', message: 'Shield site not found' });
    const badFilter = await open(`${path}?action=block,deny`);
    expect(badFilter.status).toBe(400);
    expect(badFilter.body?.error.message).toContain('deny');
    expect((await open(`${path}?rule_kind=waf`)).status).toBe(400);
    const badId = await open(path, { headers: { 'last-event-id': 'not-an-id' } });
    expect(badId.status).toBe(400);
    expect(badId.body?.error.code).toBe('invalid_request');
  });

  it('delivers recorded decisions as `decision` events with the decision id, and sends heartbeats', async () => {
    const site = await createSite();
    const other = await createSite();
    const opened = await open(`/api/v1/shield/sites/${site.id}/live`);
    expect(opened.status).toBe(200);
    expect(opened.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(opened.headers['cache-control']).toContain('no-cache');
    expect(opened.headers['x-request-id']).toBeTruthy();
    const client = opened.client!;
    await primed(client, site);

    const events = [decision(site), decision(site, { action: 'challenge', rule_kind: 'rate_limit', rule_id: 'rl_1' }), decision(site, { action: 'allow', rule_kind: null, rule_id: null, status: 200 })];
    await record(t, [...events, decision(other)]);
    await client.until((c) => c.decisions.length >= events.length + 1);
    const received = client.messages.filter((m) => m.event === 'decision').slice(1);
    expect(received.map((m) => m.id)).toEqual(ids(events));
    expect(received.map((m) => JSON.parse(m.data))).toEqual(events);

    const heartbeats = client.comments.filter((c) => c === 'heartbeat').length;
    await client.until((c) => c.comments.filter((x) => x === 'heartbeat').length >= heartbeats + 2);
    client.close();
  });

  it('filters by action and rule kind', async () => {
    const site = await createSite();
    const client = await stream(site.id, { query: '?action=block,challenge&rule_kind=virtual_patch,schema' });
    const probe = decision(site, { action: 'block', rule_kind: 'schema', path: '/probe' });
    await eventually(async () => {
      if (client.decisions.some((d) => d.id === probe.id)) return true;
      t.server.shieldEvents.bus.publish([probe]);
      return false;
    }, 10_000, 50);
    const wanted = [decision(site), decision(site, { action: 'challenge', rule_kind: 'schema', rule_id: 'sch' })];
    const unwanted = [decision(site, { action: 'log', would: 'block' }), decision(site, { action: 'block', rule_kind: 'rate_limit' }), decision(site, { action: 'allow', rule_kind: null, rule_id: null })];
    await record(t, [unwanted[0]!, wanted[0]!, unwanted[1]!, unwanted[2]!, wanted[1]!]);
    await client.until((c) => c.decisions.some((d) => d.id === wanted[1]!.id));
    expect(ids(client.decisions.filter((d) => d.path !== '/probe'))).toEqual(ids(wanted));
    client.close();
  });

  it('resumes after Last-Event-ID from the in-memory buffer', async () => {
    const site = await createSite();
    const first = await stream(site.id);
    await primed(first, site);
    const before = [decision(site), decision(site)];
    await record(t, before);
    await first.until((c) => c.decisions.some((d) => d.id === before[1]!.id));
    first.close();

    // Published on the bus only, never stored: they can come from nowhere but the buffer. Large
    // ones, more than a client's queue holds: a replay is written whole all the same.
    const long = `/${'z'.repeat(1000)}`;
    const missed = [decision(site, { action: 'challenge' }), ...Array.from({ length: 900 }, () => decision(site, { action: 'log', would: 'challenge', path: long }))];
    t.server.shieldEvents.bus.publish(missed);
    const resumed = await stream(site.id, { headers: { 'last-event-id': before[1]!.id } });
    await resumed.until((c) => c.decisions.length >= missed.length);
    expect(ids(resumed.decisions)).toEqual(ids(missed));
    expect(resumed.dropped).toBe(0);
    // …and then it is live.
    const next = decision(site);
    await record(t, [next]);
    await resumed.until((c) => c.decisions.length >= missed.length + 1);
    expect(ids(resumed.decisions)).toEqual([...ids(missed), next.id]);
    resumed.close();
  });

  it('resumes after Last-Event-ID from the stored events when the buffer does not have it', async () => {
    // Nobody watches this site yet, so the hub has buffered none of it.
    const site = await createSite();
    const stored = [decision(site), decision(site, { action: 'challenge' }), decision(site, { action: 'allow', rule_kind: null, rule_id: null }), decision(site)];
    await record(t, stored);
    const resumed = await stream(site.id, { headers: { 'last-event-id': stored[0]!.id } });
    await resumed.until((c) => c.decisions.length >= 3);
    expect(resumed.decisions).toEqual(stored.slice(1));
    await primed(resumed, site);
    // A stored event's own bus message can arrive after the replay read it: it is not sent twice.
    t.server.shieldEvents.bus.publish([stored[3]!]);
    const live = decision(site);
    await record(t, [live]);
    await resumed.until((c) => c.decisions.some((d) => d.id === live.id));
    expect(ids(resumed.decisions.filter((d) => d.path !== '/probe'))).toEqual([...ids(stored.slice(1)), live.id]);
    resumed.close();

    // Filters apply to the replay too.
    const filtered = await stream(site.id, { headers: { 'last-event-id': stored[0]!.id }, query: '?action=challenge' });
    await filtered.until((c) => c.decisions.length >= 1);
    expect(ids(filtered.decisions)).toEqual([stored[1]!.id]);
    filtered.close();
  });

  it('replays at most 1000 stored events, the newest, and reports the older ones as dropped', async () => {
    const site = await createSite();
    // A watcher makes the hub buffer the site: the first event is then pushed out of the buffer.
    const watcher = await stream(site.id);
    await primed(watcher, site);
    const long = `/${'z'.repeat(1000)}`;
    const stored = Array.from({ length: 1006 }, () => decision(site, { path: long }));
    await record(t, stored);
    // (Two recorder batches in one burst may overflow the watcher's queue; it hears of them all the same.)
    await watcher.until((c) => c.decisions.filter((d) => d.path === long).length + c.dropped >= stored.length);
    watcher.close();
    const resumed = await stream(site.id, { headers: { 'last-event-id': stored[0]!.id } });
    await resumed.until((c) => c.decisions.length >= 1000);
    expect(resumed.messages[0]).toEqual({ id: undefined, event: 'dropped', data: '{"count":5}' });
    expect(ids(resumed.decisions)).toEqual(ids(stored.slice(6)));
    resumed.close();
  });

  // Thousands of 1 KB events through the streams: seconds on an idle machine, longer beside other suites.
  it('drops events for a client that does not read, tells it how many once it catches up, and slows nobody else', async () => {
    const site = await createSite();
    const fast = await stream(site.id);
    await primed(fast, site);
    const slow = await stream(site.id, { stalled: true });
    const seen = fast.decisions.length;

    // Enough to fill the stalled connection's socket buffers and its queue many times over; the
    // reading client keeps pace and misses nothing.
    const total = 12_000;
    const published = await pump(t, site, fast, total);
    expect(fast.dropped).toBe(0);
    expect(ids(fast.decisions.slice(seen))).toEqual(published);

    slow.resume();
    await slow.until((c) => c.decisions.length + c.dropped >= total, 20_000);
    const received = ids(slow.decisions);
    expect(slow.dropped).toBeGreaterThan(0);
    expect(received.length + slow.dropped).toBe(total);
    // What it got is in order, with a gap where the notice stands.
    const index = new Map(published.map((id, i) => [id, i]));
    const positions = received.map((id) => index.get(id) ?? -1);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    const notice = slow.messages.findIndex((m) => m.event === 'dropped');
    const beforeNotice = slow.messages.slice(0, notice).filter((m) => m.event === 'decision').length;
    expect(ids(slow.decisions.slice(0, beforeNotice))).toEqual(published.slice(0, beforeNotice));

    // Still live afterwards.
    const after = decision(site);
    t.server.shieldEvents.bus.publish([after]);
    await slow.until((c) => c.decisions.some((d) => d.id === after.id));
    fast.close();
    slow.close();
  }, 120_000);

  // Thousands of 1 KB events through the streams: seconds on an idle machine, longer beside other suites.
  it('ends every stream when the server closes, stalled ones included', async () => {
    const s = await startTestServer({ shieldLiveHeartbeatMs: 60_000 });
    const site = await createSite(s);
    const reading = await stream(site.id, { server: s });
    await primed(reading, site, s);
    const stalled = await stream(site.id, { server: s, stalled: true });
    // More than the stalled connection can buffer, so that the server has to cut it.
    await pump(s, site, reading, 3000);
    // Resolving at all is the point: the server waits for every open connection.
    await s.close();
    await reading.until((c) => c.ended);
    // A client that is not reading cannot see its end until it reads what is buffered.
    stalled.resume();
    await stalled.until((c) => c.ended);
  }, 120_000);
});
