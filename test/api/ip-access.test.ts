import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let siteCount = 0;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 100_000 });
});
afterAll(() => t.close());

async function newSite(): Promise<string> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: `ip${++siteCount}.example.com`, origin_url: 'http://127.0.0.1:9', mode: 'block' } });
  return res.body.id;
}

const csv = (text: string) => ({ raw: text, headers: { 'content-type': 'text/csv' } });
const ruleCount = async (siteId: string) => {
  let n = 0;
  let cursor: string | null = null;
  do {
    const res: { body: { data: unknown[]; pagination: { next: string | null } } } = await t.call('GET', `/api/v1/shield/sites/${siteId}/ip-access?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    n += res.body.data.length;
    cursor = res.body.pagination.next;
  } while (cursor);
  return n;
};

describe('IP access rules', () => {
  it('round-trips create, get, list, update and delete', async () => {
    const site = await newSite();
    const base = `/api/v1/shield/sites/${site}/ip-access`;
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const created = await t.call('POST', base, { body: { type: 'ip', value: '203.0.113.7', action: 'deny', note: 'scanner', expires_at: expires, labels: { src: 'test' } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ site_id: site, type: 'ip', value: '203.0.113.7', action: 'deny', note: 'scanner', status: 'active', labels: { src: 'test' } });
    expect(Date.parse(created.body.expires_at)).toBe(Date.parse(expires));
    const id = created.body.id;
    expect((await t.call('GET', `${base}/${id}`)).body).toEqual(created.body);

    const updated = await t.call('PATCH', `${base}/${id}`, { body: { action: 'challenge', expires_at: null } });
    expect(updated.body).toMatchObject({ action: 'challenge', expires_at: null, note: 'scanner', labels: { src: 'test' } });
    expect((await t.call('PATCH', `${base}/${id}`, { body: { value: '1.1.1.1' } })).status).toBe(422);

    expect((await t.call('DELETE', `${base}/${id}`)).status).toBe(204);
    expect((await t.call('GET', `${base}/${id}`)).status).toBe(404);
  });

  it('accepts every type, IPv4 and IPv6, and refuses bad values naming the field', async () => {
    const base = `/api/v1/shield/sites/${await newSite()}/ip-access`;
    for (const [type, value] of [
      ['ip', '198.51.100.1'],
      ['ip', '2001:db8::1'],
      ['cidr', '198.51.100.0/24'],
      ['cidr', '2001:db8:1::/48'],
      ['asn', 'AS64500'],
      ['country', 'NL'],
    ]) {
      const res = await t.call('POST', base, { body: { type, value, action: 'deny' } });
      expect(res.status, `${type} ${value}`).toBe(201);
    }
    for (const [type, value] of [
      ['ip', '300.1.1.1'],
      ['ip', '0x7f.1'],
      ['ip', '198.51.100.0/24'],
      ['cidr', '198.51.100.1/24'],
      ['cidr', '10.0.0.0/33'],
      ['asn', '64500'],
      ['asn', 'AS0'],
      ['country', 'XX'],
      ['country', 'Netherlands'],
    ]) {
      const res = await t.call('POST', base, { body: { type, value, action: 'deny' } });
      expect(res.status, `${type} ${value}`).toBe(422);
      expect(res.body.error.details.fields[0].field).toBe('value');
    }
    const past = await t.call('POST', base, { body: { type: 'ip', value: '192.0.2.1', action: 'deny', expires_at: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(422);
    expect(past.body.error.details.fields[0].field).toBe('expires_at');
    expect((await t.call('POST', base, { body: { type: 'range', value: '1.2.3.4', action: 'deny' } })).status).toBe(422);
  });

  it('the same type and value twice on one site is 409, also when written differently', async () => {
    const site = await newSite();
    const base = `/api/v1/shield/sites/${site}/ip-access`;
    expect((await t.call('POST', base, { body: { type: 'ip', value: '2001:db8::1', action: 'deny' } })).status).toBe(201);
    const again = await t.call('POST', base, { body: { type: 'ip', value: '2001:DB8:0::1', action: 'allow' } });
    expect(again.status).toBe(409);
    // another site may have the same rule
    expect((await t.call('POST', `/api/v1/shield/sites/${await newSite()}/ip-access`, { body: { type: 'ip', value: '2001:db8::1', action: 'deny' } })).status).toBe(201);
  });

  it("is scoped to the caller's organisation and the site", async () => {
    const site = await newSite();
    const other = await keyInOrganization(t, 'ip-other', ['shield:write']);
    const reader = await keyInOrganization(t, 'ip-other', ['shield:read']);
    const res = await t.call('POST', `/api/v1/shield/sites/${site}/ip-access`, { key: other, body: { type: 'ip', value: '192.0.2.9', action: 'deny' } });
    expect(res.status).toBe(404);
    expect((await t.call('GET', `/api/v1/shield/sites/${site}/ip-access`, { key: reader })).status).toBe(404);
    const created = await t.call('POST', `/api/v1/shield/sites/${site}/ip-access`, { body: { type: 'ip', value: '192.0.2.9', action: 'deny' } });
    const elsewhere = await newSite();
    expect((await t.call('GET', `/api/v1/shield/sites/${elsewhere}/ip-access/${created.body.id}`)).status).toBe(404);
  });

  it('filters by type, action and label', async () => {
    const base = `/api/v1/shield/sites/${await newSite()}/ip-access`;
    await t.call('POST', base, { body: { type: 'ip', value: '192.0.2.1', action: 'deny', labels: { team: 'a' } } });
    await t.call('POST', base, { body: { type: 'asn', value: 'AS64501', action: 'allow' } });
    await t.call('POST', base, { body: { type: 'country', value: 'FR', action: 'challenge', labels: { team: 'a' } } });
    const values = async (q: string) => (await t.call('GET', `${base}?${q}`)).body.data.map((r: { value: string }) => r.value).sort();
    expect(await values('type=ip,asn')).toEqual(['192.0.2.1', 'AS64501']);
    expect(await values('action=challenge')).toEqual(['FR']);
    expect(await values('label=team:a')).toEqual(['192.0.2.1', 'FR']);
  });
});

describe('CSV import', () => {
  const goodRows = (n: number, offset = 0) =>
    Array.from({ length: n }, (_, i) => {
      const k = i + offset;
      return `ip,10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255},deny,row ${k}`;
    });

  it('one bad row among 1 000 good ones rejects the whole file and names the line; without it, 1 000 rules are imported', async () => {
    const site = await newSite();
    const url = `/api/v1/shield/sites/${site}/ip-access/import`;
    const rows = goodRows(1000);
    const withBad = ['type,value,action,note', ...rows.slice(0, 500), 'ip,not-an-ip,deny,oops', ...rows.slice(500)].join('\n');
    const rejected = await t.call('POST', url, csv(withBad));
    expect(rejected.status).toBe(422);
    expect(rejected.body.error.code).toBe('validation_failed');
    expect(rejected.body.error.details.rows).toEqual([{ line: 502, column: 'value', reason: expect.stringContaining('not-an-ip') }]);
    expect(await ruleCount(site)).toBe(0);

    const accepted = await t.call('POST', url, csv(['type,value,action,note', ...rows].join('\n')));
    expect(accepted.status).toBe(201);
    expect(accepted.body).toEqual({ created: 1000, skipped: 0, skipped_rows: [] });
    expect(await ruleCount(site)).toBe(1000);
  });

  it('reports every bad row with line, column and reason', async () => {
    const site = await newSite();
    const file = ['type,value,action,note,expires_at', 'ip,192.0.2.1,deny,ok,', 'planet,x,deny,,', 'asn,AS1,explode,,', 'cidr,10.0.0.1/8,deny,,', 'ip,192.0.2.2,deny,,yesterday', 'ip,192.0.2.3,deny'].join('\r\n');
    const res = await t.call('POST', `/api/v1/shield/sites/${site}/ip-access/import`, csv(file));
    expect(res.status).toBe(422);
    const rows = res.body.error.details.rows as { line: number; column: string | null }[];
    expect(rows.map((r) => [r.line, r.column])).toEqual([
      [3, 'type'],
      [4, 'action'],
      [5, 'value'],
      [6, 'expires_at'],
      [7, null],
    ]);
  });

  it('duplicates within the file or against existing rules are errors, or skipped with on_conflict=skip', async () => {
    const site = await newSite();
    const url = `/api/v1/shield/sites/${site}/ip-access/import`;
    await t.call('POST', `/api/v1/shield/sites/${site}/ip-access`, { body: { type: 'ip', value: '192.0.2.50', action: 'deny' } });
    const file = ['type,value,action,note', 'ip,192.0.2.50,deny,exists', 'ip,192.0.2.51,deny,new', 'ip,192.0.2.51,allow,again', 'asn,AS7,deny,'].join('\n');
    const refused = await t.call('POST', url, csv(file));
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.rows.map((r: { line: number }) => r.line)).toEqual([2, 4]);
    expect(await ruleCount(site)).toBe(1);

    const skipped = await t.call('POST', `${url}?on_conflict=skip`, csv(file));
    expect(skipped.status).toBe(201);
    expect(skipped.body).toMatchObject({ created: 2, skipped: 2 });
    expect(skipped.body.skipped_rows.map((r: { line: number }) => r.line)).toEqual([2, 4]);
    expect(await ruleCount(site)).toBe(3);
  });

  it('stores quoted notes exactly (tabs, backslashes, quotes, line breaks), whatever the line endings', async () => {
    const site = await newSite();
    const note = 'tab\there, back\\slash \\N, "quoted"\r\nsecond line';
    const file = ['type,value,action,note', `ip,192.0.2.60,deny,"${note.replace(/"/g, '""')}"`, 'cidr,2001:DB8:0::/48,allow,plain', 'country,NL,challenge,'].join('\r\n');
    const res = await t.call('POST', `/api/v1/shield/sites/${site}/ip-access/import`, csv(file));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ created: 3, skipped: 0, skipped_rows: [] });
    const rules = (await t.call('GET', `/api/v1/shield/sites/${site}/ip-access`)).body.data as { value: string; note: string; labels: object; expires_at: null }[];
    expect(rules.map(({ value, note, labels, expires_at }) => ({ value, note, labels, expires_at })).sort((a, b) => a.value.localeCompare(b.value))).toEqual([
      { value: '192.0.2.60', note, labels: {}, expires_at: null },
      { value: '2001:DB8:0::/48', note: 'plain', labels: {}, expires_at: null },
      { value: 'NL', note: '', labels: {}, expires_at: null },
    ]);
    // The canonical value decides uniqueness: 2001:db8::/48 is the network imported above.
    const again = await t.call('POST', `/api/v1/shield/sites/${site}/ip-access/import?on_conflict=skip`, csv('type,value,action,note\ncidr,2001:db8::/48,deny,\nip,192.0.2.61,deny,'));
    expect(again.body).toEqual({ created: 1, skipped: 1, skipped_rows: [{ line: 2, reason: 'the site already has an IP access rule for cidr 2001:db8::/48' }] });
  });

  it('names every repeat of an existing rule as such, and rolls back everything on error', async () => {
    const site = await newSite();
    const url = `/api/v1/shield/sites/${site}/ip-access/import`;
    await t.call('POST', `/api/v1/shield/sites/${site}/ip-access`, { body: { type: 'asn', value: 'AS64500', action: 'deny' } });
    const file = ['type,value,action,note', 'ip,192.0.2.70,deny,', 'asn,as64500,deny,first', 'asn,AS64500,allow,second', 'ip,192.0.2.70,allow,', 'ip,192.0.2.71,deny,'].join('\n');
    const refused = await t.call('POST', url, csv(file));
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.rows).toEqual([
      { line: 3, column: 'value', reason: 'the site already has an IP access rule for asn as64500' },
      { line: 4, column: 'value', reason: 'the site already has an IP access rule for asn AS64500' },
      { line: 5, column: 'value', reason: 'duplicates line 2' },
    ]);
    expect(await ruleCount(site)).toBe(1);
    const skipped = await t.call('POST', `${url}?on_conflict=skip`, csv(file));
    expect(skipped.body).toEqual({
      created: 2,
      skipped: 3,
      skipped_rows: [
        { line: 3, reason: 'the site already has an IP access rule for asn as64500' },
        { line: 4, reason: 'the site already has an IP access rule for asn AS64500' },
        { line: 5, reason: 'duplicates line 2' },
      ],
    });
    expect(await ruleCount(site)).toBe(3);
  });

  it('checks the header, content type and size', async () => {
    const url = `/api/v1/shield/sites/${await newSite()}/ip-access/import`;
    const badHeader = await t.call('POST', url, csv('type,value,verdict\nip,192.0.2.1,deny'));
    expect(badHeader.status).toBe(422);
    expect(badHeader.body.error.details.rows.map((r: { column: string }) => r.column).sort()).toEqual(['action', 'note', 'verdict']);
    expect((await t.call('POST', url, { raw: 'type,value,action,note', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    const tooMany = ['type,value,action,note', ...goodRows(100_001)].join('\n');
    const big = await t.call('POST', url, csv(tooMany));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    const huge = await t.call('POST', url, csv('type,value,action,note\n' + `ip,192.0.2.1,deny,${'x'.repeat(11 * 1024 * 1024)}\n`));
    expect(huge.status).toBe(413);
  });
});
