import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000 });
});
afterAll(() => t.close());

const PATH = '/api/v1/scan-schedules';
const schedule = (name: string, extra: Record<string, unknown> = {}) => ({ name, scan_type: 'dast', target: 'https://app.example.com', cron: '0 3 * * 1', ...extra });

/** Names of the failing fields of a 422, sorted. */
const failingFields = (body: { error: { code: string; details: { fields?: { field: string }[] } } }) => {
  expect(body.error.code).toBe('validation_failed');
  return (body.error.details.fields ?? []).map((f) => f.field).sort();
};

/** Next 18:00 UTC strictly after `from`, worked out without a cron library: 03:00 in Tokyo (UTC+9, no DST). */
function next1800Utc(from: number): string {
  const d = new Date(from);
  d.setUTCHours(18, 0, 0, 0);
  if (d.getTime() <= from) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

const wallClock = (iso: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', weekday: 'short', hourCycle: 'h23' }).format(new Date(iso));

describe('scan schedules', () => {
  it('round-trips create, get, list, update and delete', async () => {
    const created = await t.call('POST', PATH, { body: schedule('weekly web scan', { labels: { env: 'prod' }, config: { depth: 3 } }) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^sched_/),
      name: 'weekly web scan',
      scan_type: 'dast',
      target: 'https://app.example.com',
      cron: '0 3 * * 1',
      timezone: 'UTC',
      enabled: true,
      config: { depth: 3 },
      labels: { env: 'prod' },
    });
    expect(created.body.created_at).toBe(created.body.updated_at);
    expect(wallClock(created.body.next_run_at, 'UTC')).toBe('Mon 03:00');
    const id = created.body.id;

    expect((await t.call('GET', `${PATH}/${id}`)).body).toEqual(created.body);
    const list = await t.call('GET', PATH);
    expect(list.status).toBe(200);
    expect(list.body.data.find((s: { id: string }) => s.id === id)).toEqual(created.body);

    // a partial update leaves every other field (and next_run_at) as it was
    const renamed = await t.call('PATCH', `${PATH}/${id}`, { body: { name: 'renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...created.body, name: 'renamed', updated_at: renamed.body.updated_at });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));

    const moved = await t.call('PATCH', `${PATH}/${id}`, { body: { cron: '30 14 * * 5', config: {}, labels: { env: 'staging' } } });
    expect(moved.body).toMatchObject({ name: 'renamed', cron: '30 14 * * 5', config: {}, labels: { env: 'staging' }, target: 'https://app.example.com' });
    expect(wallClock(moved.body.next_run_at, 'UTC')).toBe('Fri 14:30');

    expect((await t.call('DELETE', `${PATH}/${id}`)).status).toBe(204);
    expect((await t.call('GET', `${PATH}/${id}`)).status).toBe(404);
    expect((await t.call('DELETE', `${PATH}/${id}`)).status).toBe(404);
    expect((await t.call('PATCH', `${PATH}/${id}`, { body: { name: 'x' } })).status).toBe(404);
  });

  it('computes next_run_at in the schedule time zone, and null while disabled', async () => {
    const before = Date.now();
    const tokyo = await t.call('POST', PATH, { body: schedule('tokyo nightly', { cron: '0 3 * * *', timezone: 'Asia/Tokyo' }) });
    const after = Date.now();
    expect(tokyo.status).toBe(201);
    expect([next1800Utc(before), next1800Utc(after)]).toContain(tokyo.body.next_run_at);

    // A zone with daylight saving time: whatever the date, the run is at 09:30 on the wall clock there.
    const ny = await t.call('POST', PATH, { body: schedule('new york', { cron: '30 9 * * *', timezone: 'America/New_York' }) });
    expect(wallClock(ny.body.next_run_at, 'America/New_York')).toMatch(/ 09:30$/);
    const ahead = Date.parse(ny.body.next_run_at) - Date.now();
    expect(ahead).toBeGreaterThan(0);
    expect(ahead).toBeLessThanOrEqual(25 * 3600_000);

    const off = await t.call('POST', PATH, { body: schedule('disabled', { enabled: false }) });
    expect(off.body).toMatchObject({ enabled: false, next_run_at: null });

    // enabling computes it; disabling clears it; a time-zone change recomputes it
    const on = await t.call('PATCH', `${PATH}/${off.body.id}`, { body: { enabled: true } });
    expect(wallClock(on.body.next_run_at, 'UTC')).toBe('Mon 03:00');
    const rezoned = await t.call('PATCH', `${PATH}/${off.body.id}`, { body: { timezone: 'Asia/Tokyo' } });
    expect(wallClock(rezoned.body.next_run_at, 'Asia/Tokyo')).toBe('Mon 03:00');
    expect(rezoned.body.timezone).toBe('Asia/Tokyo');
    const disabled = await t.call('PATCH', `${PATH}/${off.body.id}`, { body: { enabled: false } });
    expect(disabled.body).toMatchObject({ enabled: false, next_run_at: null, timezone: 'Asia/Tokyo', cron: '0 3 * * 1' });
    // a disabled schedule stays without a next run when its cron changes
    const recron = await t.call('PATCH', `${PATH}/${off.body.id}`, { body: { cron: '0 4 * * *' } });
    expect(recron.body).toMatchObject({ enabled: false, next_run_at: null, cron: '0 4 * * *' });
  });

  it('rejects cron expressions that are not 5 valid fields, naming cron', async () => {
    for (const cron of ['0 0 3 * * *', '@annually', '61 * * * *', 'not a cron expression', '0 0 30 2 *', 'H 3 * * *', '*/0 * * * *', '0 3 * * 1 2025']) {
      const res = await t.call('POST', PATH, { body: schedule('bad cron', { cron }) });
      expect(res.status, cron).toBe(422);
      expect(failingFields(res.body), cron).toEqual(['cron']);
    }
    // names and ranges that 5-field cron allows are fine
    for (const cron of ['*/15 9-17 * * MON-FRI', '0 0 1,15 * *', '0 12 * JAN,JUL SUN']) {
      expect((await t.call('POST', PATH, { body: schedule('good cron', { cron }) })).status, cron).toBe(201);
    }
  });

  it('rejects unknown time zones, naming timezone', async () => {
    for (const timezone of ['Mars/Olympus', '+05:00', 'GMT+25', '']) {
      const res = await t.call('POST', PATH, { body: schedule('bad zone', { timezone }) });
      expect(res.status, timezone).toBe(422);
      expect(failingFields(res.body), timezone).toEqual(['timezone']);
    }
  });

  it('checks the target against the scan type', async () => {
    const bad: [string, string][] = [
      ['dast', 'git@github.com:acme/shop.git'],
      ['dast', 'ftp://app.example.com'],
      ['api', 'https:app.example.com'],
      ['cve', 'app.example.com'],
      ['dast', 'https://app.example.com/a b'],
      ['sast', 'http://github.com/acme/shop.git'],
      ['sca', 'ftp://github.com/acme/shop.git'],
      ['secrets', 'github.com/acme/shop'],
      ['sast', 'file://'],
    ];
    for (const [scan_type, target] of bad) {
      const res = await t.call('POST', PATH, { body: schedule('bad target', { scan_type, target }) });
      expect(res.status, `${scan_type} ${target}`).toBe(422);
      expect(failingFields(res.body), `${scan_type} ${target}`).toEqual(['target']);
    }
    const good: [string, string][] = [
      ['dast', 'http://10.0.0.5:8080/app'],
      ['api', 'https://api.example.com/openapi.json'],
      ['cve', 'https://app.example.com'],
      ['sast', 'https://github.com/acme/shop.git'],
      ['sca', 'git@github.com:acme/shop.git'],
      ['secrets', 'ssh://git@git.example.com:2222/acme/shop.git'],
      ['sast', 'file:///srv/git/shop.git'],
    ];
    for (const [scan_type, target] of good) {
      const res = await t.call('POST', PATH, { body: schedule('good target', { scan_type, target }) });
      expect(res.status, `${scan_type} ${target}`).toBe(201);
    }
  });

  it('reports every failing field at once, and schema failures as usual', async () => {
    const all = await t.call('POST', PATH, { body: schedule('all bad', { cron: '99 * * * *', timezone: 'Nowhere/Land', target: 'nope' }) });
    expect(all.status).toBe(422);
    expect(failingFields(all.body)).toEqual(['cron', 'target', 'timezone']);
    expect(all.body.error.message).toMatch(/^request body is invalid: cron /);

    const unknown = await t.call('POST', PATH, { body: schedule('unknown', { extra: 1 }) });
    expect(failingFields(unknown.body)).toEqual(['extra']);
    const badType = await t.call('POST', PATH, { body: schedule('bad type', { scan_type: 'pentest' }) });
    expect(failingFields(badType.body)).toEqual(['scan_type']);
    const missing = await t.call('POST', PATH, { body: { name: 'missing' } });
    expect(failingFields(missing.body)).toEqual(['cron', 'scan_type', 'target']);
    const coerced = await t.call('POST', PATH, { body: schedule('coerced', { enabled: 'false' }) });
    expect(failingFields(coerced.body)).toEqual(['enabled']);
  });

  it('validates updates against the stored values and changes nothing when they fail', async () => {
    const created = await t.call('POST', PATH, { body: schedule('patch checks') });
    const id = created.body.id;
    // switching to a git-based scan type checks the stored target against it: http:// is no git transport here
    const httpTarget = await t.call('POST', PATH, { body: schedule('http target', { target: 'http://app.example.com' }) });
    const wrongKind = await t.call('PATCH', `${PATH}/${httpTarget.body.id}`, { body: { scan_type: 'sast' } });
    expect(wrongKind.status).toBe(422);
    expect(failingFields(wrongKind.body)).toEqual(['target']);
    const both = await t.call('PATCH', `${PATH}/${httpTarget.body.id}`, { body: { scan_type: 'sast', target: 'git@github.com:acme/shop.git' } });
    expect(both.body).toMatchObject({ scan_type: 'sast', target: 'git@github.com:acme/shop.git' });

    for (const [body, fields] of [
      [{ cron: '0 0 0 * * *' }, ['cron']],
      [{ timezone: 'Mars/Olympus' }, ['timezone']],
      [{ target: 'ssh://example.com/repo' }, ['target']],
      [{ scan_type: 'pentest' }, ['scan_type']],
      [{ id: 'sched_x' }, ['id']],
      [{ next_run_at: null }, ['next_run_at']],
    ] as [Record<string, unknown>, string[]][]) {
      const res = await t.call('PATCH', `${PATH}/${id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(failingFields(res.body), JSON.stringify(body)).toEqual(fields);
    }
    expect((await t.call('PATCH', `${PATH}/${id}`, { body: {} })).status).toBe(422);
    expect((await t.call('GET', `${PATH}/${id}`)).body).toEqual(created.body);
  });

  it('filters by label, scan type and enabled', async () => {
    await t.call('POST', PATH, { body: schedule('f-a', { labels: { suite: 'filters', team: 'red' } }) });
    await t.call('POST', PATH, { body: schedule('f-b', { scan_type: 'sca', target: 'git@github.com:a/b.git', labels: { suite: 'filters', team: 'blue' }, enabled: false }) });
    await t.call('POST', PATH, { body: schedule('f-c', { scan_type: 'secrets', target: 'git@github.com:a/c.git', labels: { suite: 'filters', team: 'red' } }) });
    const names = async (query: string) => {
      const res = await t.call('GET', `${PATH}?${query.includes('label=') ? query : `label=suite:filters&${query}`}`);
      expect(res.status, query).toBe(200);
      return res.body.data.map((s: { name: string }) => s.name).sort();
    };
    expect(await names('')).toEqual(['f-a', 'f-b', 'f-c']);
    expect(await names('label=suite:filters,team:red')).toEqual(['f-a', 'f-c']);
    expect(await names('scan_type=sca')).toEqual(['f-b']);
    expect(await names('scan_type=sca,secrets')).toEqual(['f-b', 'f-c']);
    expect(await names('enabled=false')).toEqual(['f-b']);
    expect(await names('enabled=true&label=suite:filters,team:red')).toEqual(['f-a', 'f-c']);
    expect((await t.call('GET', `${PATH}?scan_type=pentest`)).status).toBe(400);
    expect((await t.call('GET', `${PATH}?enabled=maybe`)).status).toBe(400);
    expect((await t.call('GET', `${PATH}?label=nocolon`)).status).toBe(400);
  });

  it('pages newest first', async () => {
    for (const n of [1, 2, 3]) await t.call('POST', PATH, { body: schedule(`page-${n}`, { labels: { suite: 'paging' } }) });
    const first = await t.call('GET', `${PATH}?label=suite:paging&limit=2`);
    expect(first.body.data.map((s: { name: string }) => s.name)).toEqual(['page-3', 'page-2']);
    const second = await t.call('GET', `${PATH}?label=suite:paging&limit=2&cursor=${first.body.pagination.next}`);
    expect(second.body.data.map((s: { name: string }) => s.name)).toEqual(['page-1']);
    expect(second.body.pagination.next).toBeNull();
  });

  it('audits creation, updates and deletion', async () => {
    const created = await t.call('POST', PATH, { body: schedule('audited', { target: 'https://user:token@app.example.com' }) });
    const id = created.body.id;
    await t.call('PATCH', `${PATH}/${id}`, { body: { enabled: false, name: 'audited 2' } });
    await t.call('DELETE', `${PATH}/${id}`);
    const audit = await t.call('GET', '/api/v1/audit-log?action=scan_schedule.created,scan_schedule.updated,scan_schedule.deleted');
    const events = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === id);
    expect(events.map((e: { action: string }) => e.action)).toEqual(['scan_schedule.deleted', 'scan_schedule.updated', 'scan_schedule.created']);
    expect(events[2].metadata).toEqual({ name: 'audited', scan_type: 'dast', enabled: true });
    expect(events[1].metadata).toEqual({ fields: ['enabled', 'name'] });
    expect(events[0].metadata).toEqual({ name: 'audited 2' });
    expect(audit.text).not.toContain('token');
  });

  it('reads need scans:read, writes scans:write; other organisations see 404', async () => {
    const reader = await keyInOrganization(t, 'schedule-team', ['scans:read']);
    const writer = await keyInOrganization(t, 'schedule-team', ['scans:write']);
    const shield = await keyInOrganization(t, 'schedule-team', ['shield:write']);
    expect((await t.call('GET', PATH, { key: reader })).status).toBe(200);
    expect((await t.call('GET', PATH, { key: shield })).status).toBe(403);
    const denied = await t.call('POST', PATH, { key: reader, body: schedule('reader') });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'scans:write' } });
    const own = await t.call('POST', PATH, { key: writer, body: schedule('writer') });
    expect(own.status).toBe(201);
    expect((await t.call('PATCH', `${PATH}/${own.body.id}`, { key: reader, body: { name: 'x' } })).status).toBe(403);
    expect((await t.call('DELETE', `${PATH}/${own.body.id}`, { key: reader })).status).toBe(403);
    expect((await t.call('GET', `${PATH}/${own.body.id}`, { key: reader })).status).toBe(200);

    const foreign = await t.call('POST', PATH, { body: schedule('foreign') });
    for (const [method, body] of [['GET'], ['PATCH', { name: 'stolen' }], ['DELETE']] as const) {
      const res = await t.call(method, `${PATH}/${foreign.body.id}`, { key: writer, body });
      expect(res.status, method).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    const theirs = (await t.call('GET', `${PATH}?limit=200`, { key: reader })).body.data.map((s: { id: string }) => s.id);
    expect(theirs).toEqual([own.body.id]);
    expect((await t.call('GET', `${PATH}/${foreign.body.id}`)).body.name).toBe('foreign');
  });
});
