// Walks every operation of the served OpenAPI document with malformed input: hostile path ids,
// broken and wrongly typed JSON, huge, NUL-laden and unpaired-surrogate strings, 10 000-deep
// nesting, prototype keys, hostile query values, and no key at all. No answer may be 5xx, every
// 4xx must be in the error envelope, and objects made before the walk must be unchanged after it.
// New routes are covered without touching this file: the walk reads the document.
//
// Nothing is excluded. Notes on what is not sent, and why:
// - GET and HEAD get no body (fetch cannot send one, and the API reads none).
// - Objects made before the walk are only used as path ids for reads, for requests the edge check
//   refuses (NUL, surrogates), and for malformed JSON bodies on operations that declare a JSON body
//   schema (so validation refuses them); everything else uses an unknown id, so
//   the walk cannot delete or change them by succeeding. The live stream needs
//   `Accept: text/event-stream`, which the walk never sends, so it answers 406 instead of streaming;
//   every request also has a timeout that counts as a failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 100_000_000, analyticsRateLimitPerMinute: 100_000_000 });
});
afterAll(() => t.close());

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; [k: string]: unknown };
interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string; schema?: Schema }[];
  bodyTypes: Record<string, Schema>;
  streams: boolean;
}

interface Probe {
  label: string;
  method: string;
  url: string;
  key: string | null;
  raw?: string | Buffer;
  contentType?: string;
}

const UNKNOWN_ID = 'zz_does_not_exist_0000';
const HOSTILE_IDS = ['%00', 'a%00b', 'x'.repeat(5000), '..%2F..', '..%2F..%2Fetc%2Fpasswd', encodeURIComponent("' OR 1=1--"), encodeURIComponent('ünïcødé-日本-🙂'), '%ED%A0%80', '%zz', '%'];
const HOSTILE_QUERY = ['%00', 'a%00b', 'x'.repeat(5000), encodeURIComponent("' OR 1=1--"), '%ED%A0%80', '%zz', '-1', '1e999', '99999999999999999999', '', encodeURIComponent('{"$gt":""}')];
const HUGE = 'x'.repeat(100 * 1024);
const DEPTH = 10_000;
const DEEP_ARRAY = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const DEEP_OBJECT = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);

function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'head', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = (op.requestBody?.content ?? {}) as Record<string, { schema?: Schema }>;
      const bodyTypes = Object.fromEntries(Object.entries(content).map(([type, c]) => [type, c.schema ?? {}]));
      const streams = Object.values(op.responses ?? {}).some((r: any) => r?.content && 'text/event-stream' in r.content);
      ops.push({ method: method.toUpperCase(), path, params: [...(item.parameters ?? []), ...(op.parameters ?? [])], bodyTypes, streams });
    }
  }
  return ops;
}

const typeOf = (schema: Schema | undefined): string | undefined => (Array.isArray(schema?.type) ? schema.type.find((x) => x !== 'null') : schema?.type);

/** A value of a different type than declared; undefined when the schema accepts any type. */
function wrongValue(schema: Schema): unknown {
  switch (typeOf(schema)) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return 'not-a-number';
    case 'boolean':
      return 'yes';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return ['not', 'an', 'object'];
    default:
      return undefined;
  }
}

describe('bad input on every operation', () => {
  it('never answers 5xx, answers 4xx in the envelope, and leaves existing data intact', async () => {
    // Objects that must survive the walk.
    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'fuzz-keep.example.com', origin_url: 'https://origin.example.net', mode: 'block' } });
    expect(site.status).toBe(201);
    const hook = await t.call('POST', '/api/v1/webhooks', { body: { url: 'https://hooks.example.com/keep', events: ['scan.completed'] } });
    expect(hook.status).toBe(201);
    const key = await t.call('POST', '/api/v1/api-keys', { body: { name: 'fuzz-keep', scopes: ['shield:read'] } });
    expect(key.status).toBe(201);
    const keep = [
      { path: `/api/v1/shield/sites/${site.body.id}`, prefix: '/api/v1/shield/sites/{' },
      { path: `/api/v1/webhooks/${hook.body.id}`, prefix: '/api/v1/webhooks/{' },
      { path: `/api/v1/api-keys/${key.body.id}`, prefix: '/api/v1/api-keys/{' },
    ];
    const realIds: [string, string][] = [
      ['/api/v1/shield/sites/{', site.body.id],
      ['/api/v1/webhooks/{', hook.body.id],
      ['/api/v1/api-keys/{', key.body.id],
    ];
    const before = await Promise.all(keep.map(async (k) => (await t.call('GET', k.path)).body));

    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(50);

    /** Fills path parameters: the first with `first`, the rest with an unknown id. */
    const fill = (op: Operation, first: string | 'real') => {
      let seen = false;
      return op.path.replace(/\{[^}]+\}/g, () => {
        if (seen) return UNKNOWN_ID;
        seen = true;
        if (first !== 'real') return first;
        return realIds.find(([prefix]) => op.path.startsWith(prefix))?.[1] ?? UNKNOWN_ID;
      });
    };
    const hasParams = (op: Operation) => op.path.includes('{');

    const probes: Probe[] = [];
    const admin = t.adminKey;
    for (const op of ops) {
      const idle = hasParams(op) ? fill(op, UNKNOWN_ID) : op.path;
      const real = hasParams(op) ? fill(op, 'real') : op.path;
      const add = (label: string, url: string, extra: Partial<Probe> = {}) => probes.push({ label, method: op.method, url, key: admin, ...extra });

      // No key at all.
      probes.push({ label: 'no key', method: op.method, url: idle, key: null });
      // Hostile path ids.
      if (hasParams(op)) for (const id of HOSTILE_IDS) add(`path id ${id.slice(0, 20)}`, fill(op, id));
      // Hostile query values for declared query parameters (reads on a real object, writes on an unknown one).
      for (const p of op.params.filter((p) => p.in === 'query')) {
        const base = op.method === 'GET' ? real : idle;
        for (const v of HOSTILE_QUERY) add(`query ${p.name}=${v.slice(0, 20)}`, `${base}?${encodeURIComponent(p.name)}=${v}`);
        add(`query ${p.name} repeated`, `${base}?${encodeURIComponent(p.name)}=a&${encodeURIComponent(p.name)}=b`);
      }
      // Hostile undeclared query keys.
      add('query key NUL', `${op.method === 'GET' ? real : idle}?a%00b=1`);
      add('query __proto__', `${op.method === 'GET' ? real : idle}?__proto__[x]=1&constructor[prototype][x]=1`);

      if (op.method === 'GET' || op.method === 'HEAD') continue;
      // A real object only where a declared JSON body schema refuses the request before the handler.
      const guarded = op.bodyTypes['application/json'] ? real : idle;
      const json = (label: string, raw: string, url = guarded) => add(label, url, { raw, contentType: 'application/json' });
      // Broken and wrongly typed JSON: refused before any handler, so safe on the real object.
      add('no body, no content type', idle);
      json('empty JSON body', '', idle);
      json('broken JSON', '{"a": ');
      json('broken JSON (trailing)', '{"a": 1}}');
      json('invalid UTF-8', '{"a": "\xff"}');
      for (const top of ['[]', '"text"', '42', 'null', 'true']) json(`top-level ${top}`, top);
      json('NUL string value', '{"description": "a\\u0000b", "name": "a\\u0000b"}');
      json('NUL key', '{"a\\u0000b": 1}');
      json('lone surrogate value', '{"description": "\\ud800", "name": "x\\udc00y"}');
      json('deep array', DEEP_ARRAY);
      json('deep object', DEEP_OBJECT);
      // Prototype keys: on an unknown object, in case a schema lets them through.
      json('__proto__', '{"__proto__": {"admin": true}}', idle);
      json('constructor.prototype', '{"constructor": {"prototype": {"admin": true}}}', idle);
      json('prototype', '{"prototype": {"admin": true}}', idle);
      // Each declared property: wrong type (real object), NUL and lone surrogate (real object), huge (unknown object).
      const jsonSchema = op.bodyTypes['application/json'];
      for (const [name, schema] of Object.entries(jsonSchema?.properties ?? {})) {
        const wrong = wrongValue(schema);
        if (wrong !== undefined) json(`${name}: wrong type`, JSON.stringify({ [name]: wrong }));
        json(`${name}: NUL`, JSON.stringify({ [name]: 'evil\u0000value' }));
        json(`${name}: nested NUL`, JSON.stringify({ [name]: { k: ['x\u0000'] } }));
        json(`${name}: lone surrogate`, `{${JSON.stringify(name)}: "\\udfff"}`);
        json(`${name}: huge`, JSON.stringify({ [name]: HUGE }), idle);
      }
      // Bodies of the other declared content types (YAML, CSV, archives): broken, NUL-laden, empty.
      for (const type of Object.keys(op.bodyTypes).filter((x) => x !== 'application/json')) {
        add(`${type}: NUL text`, idle, { raw: 'a\u0000b,\u0000\n', contentType: type });
        add(`${type}: NUL text`, real, { raw: 'openapi: "3.1.0\u0000"\n', contentType: type });
        add(`${type}: garbage`, idle, { raw: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]), contentType: type });
        add(`${type}: empty`, idle, { raw: '', contentType: type });
      }
      // A content type nobody takes, and a JSON body with a lying content type.
      add('unsupported content type', idle, { raw: 'a=1', contentType: 'application/x-unknown' });
      add('JSON as text/plain', idle, { raw: '{}', contentType: 'text/plain' });
    }

    // Send them, eight at a time.
    const failures: string[] = [];
    let next = 0;
    let sent = 0;
    async function worker() {
      while (next < probes.length) {
        const probe = probes[next++]!;
        const headers: Record<string, string> = {};
        if (probe.contentType) headers['content-type'] = probe.contentType;
        const what = `${probe.method} ${probe.url.slice(0, 120)} [${probe.label}]`;
        try {
          const res = await Promise.race([
            request<any>(t.url, probe.method, probe.url, { key: probe.key, headers, ...(probe.raw !== undefined ? { raw: probe.raw } : {}) }),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer in 20 s')), 20_000).unref()),
          ]);
          sent++;
          if (res.status >= 500) failures.push(`${what} → ${res.status} ${res.text.slice(0, 200)}`);
          else if (res.status >= 400 && probe.method !== 'HEAD') {
            const e = res.body?.error;
            if (typeof e?.code !== 'string' || typeof e?.message !== 'string' || typeof e?.details !== 'object' || e.details === null) {
              failures.push(`${what} → ${res.status} outside the envelope: ${res.text.slice(0, 200)}`);
            }
          }
        } catch (error) {
          sent++;
          failures.push(`${what} → ${(error as Error).message}`);
        }
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker));
    console.log(`bad-input walk: ${ops.length} operations, ${sent} requests, ${failures.length} failures`);
    expect(sent).toBe(probes.length);
    if (failures.length > 0) console.log(t.logs.filter((line) => line.includes('"level":50')).slice(0, 5).join('\n'));
    expect(failures).toEqual([]);

    // The server is still healthy and the objects made before are unchanged.
    expect((await t.call('GET', '/readyz', { key: null })).status).toBe(200);
    const after = await Promise.all(keep.map(async (k) => (await t.call('GET', k.path)).body));
    expect(after).toEqual(before);
    // The prototype of plain objects was not polluted.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  }, 600_000);
});

describe('the edge check names the field', () => {
  it('refuses NUL and unpaired surrogates in path, query and body (deep, keys too) with 400', async () => {
    const cases: [string, string, string | undefined, string][] = [
      ['GET', '/api/v1/scans/%00', undefined, 'id'],
      ['GET', '/api/v1/scans?target=a%00b', undefined, 'target'],
      ['PATCH', '/api/v1/webhooks/whk_x', '{"description": "a\\u0000b"}', 'description'],
      ['PATCH', '/api/v1/webhooks/whk_x', '{"labels": {"team": "\\ud800"}}', 'labels.team'],
      ['PATCH', '/api/v1/webhooks/whk_x', '{"labels": {"a\\u0000": "x"}}', 'labels["a\\u0000"]'],
      ['POST', '/api/v1/api-keys', '{"name": "k", "scopes": ["admin", "x\\udc00"]}', 'scopes[1]'],
    ];
    for (const [method, path, raw, field] of cases) {
      const res = await t.call(method, path, raw === undefined ? {} : { raw, headers: { 'content-type': 'application/json' } });
      expect(res.status, `${method} ${path} ${raw}`).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details.fields[0].field).toBe(field);
    }
  });

  it('answers framework errors before routing in the envelope', async () => {
    const long = await t.call('GET', `/api/v1/scans/${'x'.repeat(5000)}`);
    expect(long.status).toBe(414);
    expect(long.body.error.code).toBe('uri_too_long');
    // Requests Node's HTTP parser refuses (NUL in a header, a body with two lengths, oversize headers).
    const port = Number(new URL(t.url).port);
    for (const [raw, status] of [
      [`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\u0000b\r\n\r\n`, 400],
      [`POST /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, 400],
      [`POST /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}`, 400],
      [`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ] as const) {
      const res = await rawRequest(port, raw);
      expect(res.status, raw.slice(0, 60)).toBe(status);
      expect(JSON.parse(res.body).error).toMatchObject({ code: expect.any(String), message: expect.any(String), details: {} });
    }
    for (const path of ['/api/v1/scans/%zz', '/api/v1/scans/%ED%A0%80']) {
      const bad = await t.call('GET', path);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_request');
    }
  });
});
