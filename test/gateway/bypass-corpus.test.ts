// Parser differentials, tried as an attacker would: each request below carries an attack that a
// virtual patch names — `(?i)union\s+select` on `GET /search` parameter `q`, `<script` on
// `POST /api/orders` field `note` — written the way some origin framework would still read it.
// Every one goes through the real gateway (raw bytes on a socket, so nothing is tidied by a client
// library) to an origin that records what it received. Each must be blocked, or provably harmless:
// then the test says why and checks what the origin received.
//
// The site runs in `block` mode with managed rules at paranoia 1 (the default for new sites); the
// issue's seven requests are also checked on a site with managed rules off, where the virtual patch
// alone must catch them (so the normalisation, not a generic rule, is what blocks).
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrigin, type Echo, type Origin } from '../support/origin.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { SHAPES, XSS, enc, json, jsonHeaders, multipart, raw, type Shape } from './bypass-shapes.ts';

let t: TestServer;
let origin: Origin;
let port: number;
let shapeCount = 0;

beforeAll(async () => {
  origin = await startOrigin();
  t = await startTestServer({ rateLimitPerMinute: 100_000, shieldEnabled: true, shieldPort: 0, trustedProxies: ['127.0.0.1', '::1'], shieldAllowSampleRate: 1 });
  port = t.server.gateway!.port;
});
afterAll(async () => {
  await t?.close();
  await origin?.close();
});

async function createSite(domain: string, managed: boolean): Promise<string> {
  const res = await t.call('POST', '/api/v1/shield/sites', {
    body: { domain, origin_url: origin.url, mode: 'block', managed_rules: { enabled: managed } },
  });
  expect(res.status, res.text).toBe(201);
  const id = res.body.id as string;
  for (const patch of [
    { url_pattern: '/search', method: 'GET', match_param: 'q', match_regex: '(?i)union\\s+select' },
    { url_pattern: '/api/orders', method: 'POST', match_param: 'note', match_regex: '<script' },
  ]) {
    const created = await t.call('POST', `/api/v1/shield/sites/${id}/virtual-patches`, { body: patch });
    expect(created.status, created.text).toBe(201);
  }
  await t.server.gateway!.registry.refresh();
  return id;
}

const received = (tag: string): Echo | undefined => origin.received.find((echo) => echo.headers['x-shape'] === tag);

async function events(siteId: string) {
  await t.server.shieldEvents.recorder.flush();
  return t.server.database.db.selectFrom('shield_events').select(['action', 'rule_kind', 'rule_id', 'status']).where('site_id', '=', siteId).orderBy('id').execute();
}

describe('the bypass corpus through a site with virtual patches and managed rules', () => {
  let host: string;
  beforeAll(async () => {
    host = 'corpus.bypass.test';
    await createSite(host, true);
  });

  it(`has at least 60 evasion shapes`, () => {
    expect(SHAPES.length).toBeGreaterThanOrEqual(60);
    expect(new Set(SHAPES.map((s) => s.name)).size).toBe(SHAPES.length);
  });

  it.each(SHAPES.map((shape) => [shape.name, shape] as const))('%s', async (_name, shape) => {
    const tag = `shape-${++shapeCount}`;
    const res = await rawRequest(port, shape.request(host, tag));
    const echo = received(tag);
    if (!shape.harmless) {
      expect(echo, `the origin received it (gateway answered ${res.status})`).toBeUndefined();
      expect([400, 403, 413, 415]).toContain(res.status);
      return;
    }
    if (echo) expect(shape.harmless.check(echo), shape.harmless.why).toBe(true);
    else expect([400, 403, 413, 415]).toContain(res.status);
  });
});

describe('the seven requests of the issue, with the virtual patches alone (managed rules off)', () => {
  let siteId: string;
  const host = 'patches-only.bypass.test';
  beforeAll(async () => {
    siteId = await createSite(host, false);
  });

  const seven: [string, Shape['request']][] = [
    ['GET /Search?q=…', (h, tag) => raw(h, tag, 'GET', `/Search?q=${enc('1 union select 1')}`)],
    ['GET /search;x?q=…', (h, tag) => raw(h, tag, 'GET', `/search;x?q=${enc('1 union select 1')}`)],
    ['GET /search?q[]=…', (h, tag) => raw(h, tag, 'GET', `/search?q[]=${enc('1 union select 1')}`)],
    ['GET /search?Q=…', (h, tag) => raw(h, tag, 'GET', `/search?Q=${enc('1 union select 1')}`)],
    ['POST gzip-compressed JSON', (h, tag) => raw(h, tag, 'POST', '/api/orders', { headers: [...jsonHeaders(), ['Content-Encoding', 'gzip']], body: gzipSync(json({ note: XSS })) })],
    ['POST multipart/form-data with a note field', (h, tag) => {
      const m = multipart([{ name: 'note', value: XSS }]);
      return raw(h, tag, 'POST', '/api/orders', { headers: [['Content-Type', m.type]], body: m.body });
    }],
    ['POST JSON as text/plain', (h, tag) => raw(h, tag, 'POST', '/api/orders', { headers: jsonHeaders('text/plain'), body: json({ note: XSS }) })],
  ];

  it.each(seven)('%s is blocked by the virtual patch', async (_name, request) => {
    const tag = `seven-${++shapeCount}`;
    const before = (await events(siteId)).length;
    const res = await rawRequest(port, request(host, tag));
    expect(res.status).toBe(403);
    expect(received(tag)).toBeUndefined();
    const recorded = (await events(siteId)).slice(before);
    expect(recorded).toEqual([expect.objectContaining({ action: 'block', rule_kind: 'virtual_patch' })]);
  });
});
