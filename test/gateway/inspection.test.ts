// What the gateway does with the requests it inspects, end to end: allowed bodies reach the origin
// byte for byte, requests it cannot inspect are refused in `block` mode and only recorded in
// `log` mode, a decompression bomb costs no memory, and `path_case` decides how paths compare.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, viaGateway } from '../support/gateway.ts';
import { openSse } from '../support/sse.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let origin: Origin;
let gateway: string;
let siteCount = 0;

beforeAll(async () => {
  origin = await startOrigin();
  t = await startTestServer({
    rateLimitPerMinute: 100_000,
    shieldEnabled: true,
    shieldPort: 0,
    trustedProxies: ['127.0.0.1', '::1'],
    shieldAllowSampleRate: 1,
    shieldMultipartBytes: 2 * 1024 * 1024,
  });
  gateway = t.server.gateway!.url;
});
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

async function createSite(body: Record<string, unknown>): Promise<{ id: string; host: string }> {
  const host = `site${++siteCount}.inspection.test`;
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain: host, origin_url: origin.url, mode: 'block', ...body } });
  expect(res.status, res.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return { id: res.body.id, host };
}

async function addPatch(siteId: string, patch: Record<string, unknown>): Promise<string> {
  const res = await t.call('POST', `/api/v1/shield/sites/${siteId}/virtual-patches`, { body: patch });
  expect(res.status, res.text).toBe(201);
  await t.server.gateway!.registry.refresh();
  return res.body.id;
}

async function events(siteId: string) {
  await t.server.shieldEvents.recorder.flush();
  return t.server.database.db.selectFrom('shield_events').select(['action', 'rule_kind', 'rule_id', 'would', 'status']).where('site_id', '=', siteId).orderBy('id').execute();
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

function multipartBody(parts: { name: string; value: string | Buffer; filename?: string }[]): { body: Buffer; type: string } {
  const boundary = 'x-aegis-test-boundary';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.filename ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`));
    chunks.push(Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

describe('allowed requests', () => {
  it('reach the origin with the body byte for byte as the client sent it — decoded, when the gateway undid its coding', async () => {
    const site = await createSite({});
    await addPatch(site.id, { url_pattern: '/api/*', method: 'ANY', match_param: 'note', match_regex: '<script' });
    const json = Buffer.from('{"note" : "Deliver after 5pm, ring twice",\n "items":[{"sku":"b-1","qty":2}],"note":"thanks"}');
    const upload = multipartBody([
      { name: 'note', value: 'Photo of the damaged box' },
      { name: 'photo', value: Buffer.from(Array.from({ length: 512 * 1024 }, (_, i) => (i * 31) % 256)), filename: 'box.jpg' },
    ]);
    const bodies: { headers: Record<string, string>; body: Buffer }[] = [
      { headers: { 'content-type': 'application/json' }, body: json },
      { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(json) },
      { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: json },
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('note=Leave+at+the+door&qty=2&qty=3') },
      { headers: { 'content-type': upload.type }, body: upload.body },
      { headers: { 'content-type': 'application/json; charset=utf-16le' }, body: Buffer.from('{"note":"héllo"}', 'utf16le') },
    ];
    for (const [i, { headers, body }] of bodies.entries()) {
      const res = await viaGateway(gateway, `/api/orders?n=${i}`, { host: site.host, method: 'POST', headers, body });
      expect(res.status, `body ${i}: ${res.text.slice(0, 200)}`).toBe(200);
      const echo = origin.received.find((e) => e.url === `/api/orders?n=${i}` && e.headers.host !== undefined && e.headers['x-forwarded-host'] === site.host);
      // A compressed body goes on as the gateway inspected it: decoded, without its Content-Encoding
      // (an origin that does not undo codings would read the compressed bytes otherwise).
      const coded = headers['content-encoding'] !== undefined;
      expect(echo?.bodySha256, `body ${i}`).toBe(sha256(coded ? json : body));
      expect(echo?.headers['content-encoding']).toBe(undefined);
    }
  });
});

describe('requests the gateway cannot inspect', () => {
  it('are refused in block mode with a status that says why, and recorded with the reason', async () => {
    const site = await createSite({ managed_rules: { enabled: false } });
    await addPatch(site.id, { url_pattern: '/api/*', method: 'ANY', match_param: 'note', match_regex: '<script' });
    const cases: [Record<string, string>, Buffer | string, number, string][] = [
      [{ 'content-type': 'application/json' }, `{"pad":"${'x'.repeat(200 * 1024)}"}`, 413, 'body_too_large'],
      [{ 'content-type': 'application/json', 'content-encoding': 'compress' }, '{}', 415, 'unsupported_encoding'],
      [{ 'content-type': 'application/json; charset=ibm037' }, '{}', 415, 'unsupported_charset'],
      [{ 'content-type': 'application/json' }, "{'note': 1}", 400, 'unparsable_body'],
      [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(Buffer.alloc(50 * 1024 * 1024)), 413, 'decompression_limit'],
    ];
    for (const [headers, body, status, rule] of cases) {
      const res = await viaGateway(gateway, '/api/orders', { host: site.host, method: 'POST', headers, body });
      expect(res.status, rule).toBe(status);
      await eventually(async () => (await events(site.id)).some((e) => e.rule_id === rule));
      expect((await events(site.id)).find((e) => e.rule_id === rule)).toMatchObject({ action: 'block', rule_kind: 'inspection', status });
    }
    // Where no rule reads the body, it is not read, and nothing is refused.
    const elsewhere = await viaGateway(gateway, '/static/upload', { host: site.host, method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"pad":"${'x'.repeat(200 * 1024)}"}` });
    expect(elsewhere.status).toBe(200);
  });

  it('are recorded and forwarded in log mode', async () => {
    const site = await createSite({ mode: 'log', managed_rules: { enabled: false } });
    await addPatch(site.id, { url_pattern: '/api/*', method: 'ANY', match_param: 'note', match_regex: '<script' });
    const body = `{"pad":"${'x'.repeat(200 * 1024)}","note":"<script>"}`;
    const res = await viaGateway(gateway, '/api/orders?log=1', { host: site.host, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    const echo = origin.received.find((e) => e.url === '/api/orders?log=1');
    expect(echo?.bodySha256).toBe(sha256(body));
    await eventually(async () => (await events(site.id)).length > 0);
    expect(await events(site.id)).toEqual([expect.objectContaining({ action: 'log', rule_kind: 'inspection', rule_id: 'body_too_large', would: 'block' })]);
  });

  it('refuse a decompression bomb without holding it in memory', async () => {
    const site = await createSite({});
    // About 100 KB on the wire inflating to 100 MiB, and a few hundred bytes inflating to 256 MiB through two layers.
    const single = gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 });
    const layered = gzipSync(gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 }), { level: 9 });
    expect(single.length).toBeLessThan(128 * 1024);
    const before = process.memoryUsage();
    for (let i = 0; i < 5; i++) {
      for (const [coding, body] of [['gzip', single], ['gzip, gzip', layered]] as const) {
        const res = await viaGateway(gateway, '/api/orders', { host: site.host, method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': coding }, body });
        expect(res.status).toBe(413);
      }
    }
    const after = process.memoryUsage();
    // Each attempt inflates at most the inspection cap (128 KiB) before giving up.
    expect(after.rss - before.rss).toBeLessThan(64 * 1024 * 1024);
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(16 * 1024 * 1024);
  });

  it('lets multipart uploads carry files past the inspection cap, and refuses them past the multipart cap', async () => {
    const site = await createSite({});
    const file = Buffer.alloc(1024 * 1024, 0x41);
    const fits = multipartBody([
      { name: 'title', value: 'Quarterly report' },
      { name: 'file', value: file, filename: 'report.pdf' },
    ]);
    const ok = await viaGateway(gateway, '/upload?fits=1', { host: site.host, method: 'POST', headers: { 'content-type': fits.type }, body: fits.body });
    expect(ok.status).toBe(200);
    expect(origin.received.find((e) => e.url === '/upload?fits=1')?.bodySha256).toBe(sha256(fits.body));
    const tooBig = multipartBody([{ name: 'file', value: Buffer.alloc(3 * 1024 * 1024, 0x41), filename: 'big.bin' }]);
    const refused = await viaGateway(gateway, '/upload?big=1', { host: site.host, method: 'POST', headers: { 'content-type': tooBig.type }, body: tooBig.body });
    expect(refused.status).toBe(413);
    expect(origin.received.some((e) => e.url === '/upload?big=1')).toBe(false);
    const traversal = multipartBody([{ name: 'file', value: 'x', filename: '../../../../etc/cron.d/job' }]);
    const blocked = await viaGateway(gateway, '/upload?name=1', { host: site.host, method: 'POST', headers: { 'content-type': traversal.type }, body: traversal.body });
    expect(blocked.status).toBe(403);
  });
});

describe('path_case', () => {
  it('compares rule paths in lower case by default, and exactly when the site says sensitive', async () => {
    const patch = { url_pattern: '/Admin/*', method: 'GET', match_param: 'cmd', match_regex: '^rm' };
    const insensitive = await createSite({ managed_rules: { enabled: false } });
    await addPatch(insensitive.id, patch);
    const sensitive = await createSite({ managed_rules: { enabled: false }, path_case: 'sensitive' });
    await addPatch(sensitive.id, patch);
    const status = async (host: string, path: string) => (await viaGateway(gateway, path, { host })).status;
    expect(await status(insensitive.host, '/admin/run?cmd=rm')).toBe(403);
    expect(await status(insensitive.host, '/ADMIN/run?cmd=rm')).toBe(403);
    expect(await status(sensitive.host, '/Admin/run?cmd=rm')).toBe(403);
    expect(await status(sensitive.host, '/admin/run?cmd=rm')).toBe(200);
    const changed = await t.call('PATCH', `/api/v1/shield/sites/${sensitive.id}`, { body: { path_case: 'insensitive' } });
    expect(changed.body.path_case).toBe('insensitive');
    await t.server.gateway!.registry.refresh();
    expect(await status(sensitive.host, '/admin/run?cmd=rm')).toBe(403);
  });
});

describe('managed rules', () => {
  it('block attacks on a site with no rules of its own, name the rule in the live stream and analytics, and only record in log mode', async () => {
    const site = await createSite({});
    const live = await openSse(t, `/api/v1/shield/sites/${site.id}/live?rule_kind=managed`);
    expect(live.status).toBe(200);
    const client = live.client!;
    try {
      const attacks: [string, { method?: string; json?: unknown }][] = [
        [`/products?id=${encodeURIComponent("1' OR '1'='1' --")}`, {}],
        [`/comments`, { method: 'POST', json: { text: '<img src=x onerror=alert(document.cookie)>' } }],
        [`/download?file=${encodeURIComponent('../../../../etc/passwd')}`, {}],
        [`/fetch?url=${encodeURIComponent('http://169.254.169.254/latest/meta-data/iam/security-credentials/')}`, {}],
      ];
      for (const [path, options] of attacks) expect((await viaGateway(gateway, path, { host: site.host, ...options })).status, path).toBe(403);
      const benign = await viaGateway(gateway, `/search?q=${encodeURIComponent("O'Reilly's \"Learning SQL\" – select the best union of ideas")}`, { host: site.host });
      expect(benign.status).toBe(200);
      await client.until((c) => c.decisions.length >= attacks.length);
      const ruleIds = client.decisions.map((d) => d.rule_id as string);
      expect(client.decisions.every((d) => d.rule_kind === 'managed' && d.action === 'block')).toBe(true);
      expect(ruleIds.map((id) => id.split('.')[0])).toEqual(['sqli', 'xss', 'traversal', 'ssrf']);
      const today = new Date().toISOString().slice(0, 10);
      const analytics = await t.call('GET', `/api/v1/shield/sites/${site.id}/analytics?from=${today}&to=${today}`);
      expect(analytics.body.top.rules).toEqual(expect.arrayContaining(ruleIds.map((rule_id) => ({ rule_kind: 'managed', rule_id, count: 1 }))));
    } finally {
      client.close();
    }

    const logged = await createSite({ mode: 'log' });
    const res = await viaGateway(gateway, `/products?id=${encodeURIComponent("1' OR '1'='1' --")}`, { host: logged.host });
    expect(res.status).toBe(200);
    await eventually(async () => (await events(logged.id)).length > 0);
    expect((await events(logged.id))[0]).toMatchObject({ action: 'log', rule_kind: 'managed', would: 'block' });
  });

  it('record the anomaly score and the signals behind a managed-rule decision', async () => {
    const site = await createSite({});
    // Three broader rules' weak signals, one per parameter: none decides alone at level 1, together they block.
    const path = `/search?a=${encodeURIComponent('/tmp/report.txt')}&b=${encodeURIComponent('x.innerHTML=y')}&c=${encodeURIComponent('{{ user.getName() }}')}`;
    expect((await viaGateway(gateway, path, { host: site.host })).status).toBe(403);
    expect((await viaGateway(gateway, '/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E', { host: site.host })).status).toBe(403);
    await t.server.shieldEvents.recorder.flush();
    const rows = await t.server.database.db.selectFrom('shield_events').select(['rule_id', 'anomaly']).where('site_id', '=', site.id).orderBy('id').execute();
    expect(rows).toEqual([
      { rule_id: 'xss.dom_sink', anomaly: { score: 9, signals: ['xss.dom_sink', 'traversal.absolute_path', 'ssti.expression_call'] } },
      { rule_id: 'xss.script_tag', anomaly: { score: 9, signals: ['xss.script_tag'] } },
    ]);
    const other = await createSite({});
    await addPatch(other.id, { url_pattern: '/api/*', method: 'ANY', match_param: 'note', match_regex: 'forbidden' });
    expect((await viaGateway(gateway, '/api/notes?note=forbidden', { host: other.host })).status).toBe(403);
    await t.server.shieldEvents.recorder.flush();
    expect(await t.server.database.db.selectFrom('shield_events').select(['rule_kind', 'anomaly']).where('site_id', '=', other.id).execute()).toEqual([{ rule_kind: 'virtual_patch', anomaly: null }]);
  });

  it('honour exclusions by rule and path, and by parameter', async () => {
    const site = await createSite({ managed_rules: { exclusions: [{ rules: ['xss'], url_pattern: '/cms/*' }, { rules: ['sqli'], parameter: 'query' }] } });
    const xss = { text: '<script>alert(1)</script>' };
    expect((await viaGateway(gateway, '/cms/pages', { host: site.host, method: 'POST', json: xss })).status).toBe(200);
    expect((await viaGateway(gateway, '/CMS/pages', { host: site.host, method: 'POST', json: xss })).status).toBe(200);
    expect((await viaGateway(gateway, '/comments', { host: site.host, method: 'POST', json: xss })).status).toBe(403);
    const sql = encodeURIComponent('select * from users union select password from admins');
    expect((await viaGateway(gateway, `/reports?query=${sql}`, { host: site.host })).status).toBe(200);
    expect((await viaGateway(gateway, `/reports?filter=${sql}`, { host: site.host })).status).toBe(403);
  });
});
