import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { analyseInWorker } from '../../schemas/openapi/document.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openapi/${name}`, import.meta.url), 'utf8');
const PETSTORE = fixture('petstore-3.0.yaml');
const MUSEUM = fixture('museum-3.1.yaml');
const sha256 = (text: string | Buffer) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const yaml = (text: string, type = 'application/yaml') => ({ raw: text, headers: { 'content-type': type } });
const json = (text: string) => ({ raw: text, headers: { 'content-type': 'application/json' } });

interface Operation {
  method: string;
  path: string;
  operation_id: string | null;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 10_000 });
});
afterAll(() => t.close());

async function newSite(domain: string, key?: string): Promise<string> {
  const res = await t.call('POST', '/api/v1/shield/sites', { body: { domain, origin_url: 'https://origin.example.net', mode: 'block' }, ...(key ? { key } : {}) });
  expect(res.status).toBe(201);
  return res.body.id;
}

const schemaUrl = (siteId: string) => `/api/v1/shield/sites/${siteId}/schema`;
const configUrl = (siteId: string) => `/api/v1/shield/sites/${siteId}/schema-config`;

async function auditEvents(action: string, siteId: string) {
  const res = await t.call('GET', `/api/v1/audit-log?action=${action}&limit=200`);
  return (res.body.data as { target: { id: string }; metadata: Record<string, unknown> }[]).filter((e) => e.target.id === siteId);
}

describe('Shield schema upload', () => {
  it('accepts the Swagger Petstore (OpenAPI 3.0) as YAML and lists its operations', async () => {
    const siteId = await newSite('petstore.example.com');
    const res = await t.call('PUT', schemaUrl(siteId), yaml(PETSTORE));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ site_id: siteId, openapi_version: '3.0.2', hash: sha256(PETSTORE), strictness: 'standard', labels: {}, document: PETSTORE });
    const operations = res.body.operations as Operation[];
    expect(operations).toHaveLength(19);
    expect(operations).toContainEqual({ method: 'GET', path: '/pet/{petId}', operation_id: 'getPetById' });
    expect(operations).toContainEqual({ method: 'POST', path: '/pet/{petId}/uploadImage', operation_id: 'uploadFile' });
    expect(operations).toContainEqual({ method: 'DELETE', path: '/user/{username}', operation_id: 'deleteUser' });
    expect(operations.filter((op) => op.path === '/pet').map((op) => op.method)).toEqual(['POST', 'PUT']);
    expect(new Set(operations.map((op) => op.method))).toEqual(new Set(['GET', 'POST', 'PUT', 'DELETE']));

    const got = await t.call('GET', schemaUrl(siteId));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    const events = await auditEvents('shield_schema.uploaded', siteId);
    expect(events).toHaveLength(1);
    expect(events[0]!.metadata).toEqual({ hash: sha256(PETSTORE), previous_hash: null, openapi_version: '3.0.2', operations: 19 });
  });

  it('accepts the Redocly Museum API (OpenAPI 3.1), replacing the previous document', async () => {
    const siteId = await newSite('museum.example.com');
    const first = await t.call('PUT', schemaUrl(siteId), yaml(PETSTORE, 'text/yaml'));
    expect(first.status).toBe(200);
    const res = await t.call('PUT', schemaUrl(siteId), yaml(MUSEUM, 'application/x-yaml; charset=utf-8'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi_version: '3.1.0', hash: sha256(MUSEUM), document: MUSEUM, created_at: first.body.created_at });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.body.updated_at));
    expect(res.body.operations).toEqual([
      { method: 'GET', path: '/museum-hours', operation_id: 'getMuseumHours' },
      { method: 'POST', path: '/special-events', operation_id: 'createSpecialEvent' },
      { method: 'GET', path: '/special-events', operation_id: 'listSpecialEvents' },
      { method: 'GET', path: '/special-events/{eventId}', operation_id: 'getSpecialEvent' },
      { method: 'PATCH', path: '/special-events/{eventId}', operation_id: 'updateSpecialEvent' },
      { method: 'DELETE', path: '/special-events/{eventId}', operation_id: 'deleteSpecialEvent' },
      { method: 'POST', path: '/tickets', operation_id: 'buyMuseumTickets' },
      { method: 'GET', path: '/tickets/{ticketId}/qr', operation_id: 'getTicketCode' },
    ]);
    const events = await auditEvents('shield_schema.uploaded', siteId);
    expect(events.map((e) => e.metadata.previous_hash)).toEqual([sha256(PETSTORE), null]);
  });

  it('accepts JSON and stores the exact text it was sent', async () => {
    const siteId = await newSite('json.example.com');
    // Unusual but valid formatting (tabs, a BOM-free trailing newline) must survive byte for byte.
    const text = `${JSON.stringify(parseYaml(MUSEUM), null, '\t')}\n`;
    const res = await t.call('PUT', schemaUrl(siteId), json(text));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi_version: '3.1.0', hash: sha256(text), document: text });
    expect(res.body.operations).toHaveLength(8);
    // Path items and operations without operationId, and non-method keys of a path item.
    const minimal = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'Minimal', version: '1' },
      paths: {
        '/things/{id}': {
          summary: 'A thing',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          get: { responses: { '200': { description: 'ok' } } },
          'x-internal': true,
          head: { operationId: 'headThing', responses: { '200': { description: 'ok' } } },
        },
      },
    });
    const res2 = await t.call('PUT', schemaUrl(siteId), { raw: minimal, headers: { 'content-type': 'application/vnd.oai.openapi+json' } });
    expect(res2.status).toBe(200);
    expect(res2.body.operations).toEqual([
      { method: 'GET', path: '/things/{id}', operation_id: null },
      { method: 'HEAD', path: '/things/{id}', operation_id: 'headThing' },
    ]);
  });

  it('lists the operations of a path item that is an internal $ref (OpenAPI 3.1)', async () => {
    const siteId = await newSite('pathitems.example.com');
    const doc = [
      'openapi: 3.1.0',
      'info: {title: Refs, version: "1"}',
      'paths:',
      '  /orders:',
      '    $ref: "#/components/pathItems/Orders"',
      'components:',
      '  pathItems:',
      '    Orders:',
      '      get: {operationId: listOrders, responses: {"200": {description: ok}}}',
      '      post: {operationId: createOrder, responses: {"201": {description: created}}}',
    ].join('\n');
    const res = await t.call('PUT', schemaUrl(siteId), yaml(doc));
    expect(res.status).toBe(200);
    expect(res.body.operations).toEqual([
      { method: 'GET', path: '/orders', operation_id: 'listOrders' },
      { method: 'POST', path: '/orders', operation_id: 'createOrder' },
    ]);
  });

  it('refuses a document that fails validation with 422 and the reasons, located by JSON pointer', async () => {
    const siteId = await newSite('broken.example.com');
    const doc = [
      'openapi: 3.0.3',
      'info:',
      '  title: Broken',
      '  version: "1"',
      'paths:',
      '  /pets/{petId}:',
      '    get:',
      '      parameters:',
      '        - name: petId',
      '          in: path',
      '          schema: {type: string}',
      '      responses:',
      '        "200":',
      '          content: {}',
    ].join('\n');
    const res = await t.call('PUT', schemaUrl(siteId), yaml(doc));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    const reasons = res.body.error.details.reasons as string[];
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/must have required property 'required' at #\/paths\/~1pets~1\{petId\}\/get\/parameters\/0/),
        expect.stringMatching(/must have required property 'description' at #\/paths\/~1pets~1\{petId\}\/get\/responses\/200/),
      ]),
    );
    expect(res.body.error.message).toContain('the OpenAPI document is not valid');
    // nothing was stored
    expect((await t.call('GET', schemaUrl(siteId))).status).toBe(404);

    const duplicateIds = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'Dup', version: '1' },
      paths: { '/a': { get: { operationId: 'same', responses: { '200': { description: 'ok' } } } }, '/b': { get: { operationId: 'same', responses: { '200': { description: 'ok' } } } } },
    });
    const dup = await t.call('PUT', schemaUrl(siteId), json(duplicateIds));
    expect(dup.status).toBe(422);
    expect(dup.body.error.details.reasons).toEqual([expect.stringContaining('The operationId `same` is duplicated')]);
  });

  it('refuses invalid YAML or JSON, non-objects, Swagger 2.0 and other versions with 422', async () => {
    const siteId = await newSite('unparsable.example.com');
    const cases: [string, { raw: string; headers: Record<string, string> }, RegExp][] = [
      ['bad YAML', yaml('openapi: 3.0.3\ninfo: {title: x\npaths: {}'), /not valid YAML: .*line \d+, column \d+/],
      ['duplicate YAML keys', yaml('openapi: 3.0.3\nopenapi: 3.1.0\n'), /not valid YAML: Map keys must be unique/],
      ['bad JSON', json('{"openapi": "3.0.3",'), /not valid JSON/],
      ['a list', yaml('- openapi: 3.0.3'), /must be an object/],
      ['a scalar', json('"openapi"'), /must be an object/],
      ['Swagger 2.0', yaml('swagger: "2.0"\ninfo: {title: x, version: "1"}\npaths: {}'), /Swagger 2\.0 documents are not supported/],
      ['unquoted version', yaml('openapi: 3.0\ninfo: {title: x, version: "1"}\npaths: {}'), /`openapi` must be a string/],
      ['OpenAPI 3.2', yaml('openapi: 3.2.0\ninfo: {title: x, version: "1"}\npaths: {}'), /OpenAPI 3\.2\.0 is not supported/],
      ['no openapi field', yaml('info: {title: x, version: "1"}'), /no `openapi` field/],
      ['missing internal $ref', json(JSON.stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' }, components: { schemas: { A: { $ref: '#/components/schemas/Nope' } } } })), /Missing \$ref pointer "#\/components\/schemas\/Nope"/],
    ];
    for (const [name, request, reason] of cases) {
      const res = await t.call('PUT', schemaUrl(siteId), request);
      expect(res.status, name).toBe(422);
      expect(res.body.error.code, name).toBe('validation_failed');
      expect(res.body.error.details.reasons, name).toEqual([expect.stringMatching(reason)]);
    }
    const notUtf8 = await t.call('PUT', schemaUrl(siteId), { raw: Buffer.from([0x6f, 0x70, 0x65, 0x6e, 0xff, 0xfe]), headers: { 'content-type': 'application/yaml' } });
    expect(notUtf8.status).toBe(422);
    expect(notUtf8.body.error.details.reasons).toEqual(['the document is not valid UTF-8']);
    const empty = await t.call('PUT', schemaUrl(siteId), yaml(''));
    expect(empty.status).toBe(422);
    const plain = await t.call('PUT', schemaUrl(siteId), yaml(PETSTORE, 'text/plain'));
    expect(plain.status).toBe(415);
    expect(plain.body.error.code).toBe('unsupported_media_type');
  });

  it('refuses external $refs without reading the file or fetching the URL', async () => {
    const siteId = await newSite('external.example.com');
    const dir = mkdtempSync(join(tmpdir(), 'aegis-ref-'));
    const file = join(dir, 'pet.yaml');
    writeFileSync(file, 'type: object\n');
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits += 1;
      res.end('type: object\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const refs = [file, `file://${file}`, './pet.yaml#/Pet', `http://127.0.0.1:${port}/pet.yaml`, 'https://example.com/schemas/pet.yaml'];
      for (const ref of refs) {
        const doc = JSON.stringify({
          openapi: '3.0.3',
          info: { title: 'External', version: '1' },
          paths: { '/pets': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: ref } } } } } } } },
        });
        const res = await t.call('PUT', schemaUrl(siteId), json(doc));
        expect(res.status, ref).toBe(422);
        expect(res.body.error.details.reasons, ref).toEqual([
          `external $ref ${JSON.stringify(ref)} at #/paths/~1pets/get/responses/200/content/application~1json/schema/$ref: only references inside the document (starting with #) are allowed`,
        ]);
      }
      expect(hits).toBe(0);
      expect((await t.call('GET', schemaUrl(siteId))).status).toBe(404);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts documents over the general 1 MiB limit and refuses more than 5 MiB with 413', async () => {
    const siteId = await newSite('large.example.com');
    // YAML comments keep the document valid while making it large.
    const padding = (bytes: number) => `\n# ${'x'.repeat(bytes)}\n`;
    const big = PETSTORE + padding(2 * 1024 * 1024);
    const ok = await t.call('PUT', schemaUrl(siteId), yaml(big));
    expect(ok.status).toBe(200);
    expect(ok.body.hash).toBe(sha256(big));
    const tooBig = PETSTORE + padding(5 * 1024 * 1024);
    const res = await t.call('PUT', schemaUrl(siteId), yaml(tooBig));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect((await t.call('GET', schemaUrl(siteId))).body.hash).toBe(sha256(big));
  });

  it('replays a PUT with the same Idempotency-Key', async () => {
    const siteId = await newSite('idempotent.example.com');
    const headers = { 'content-type': 'application/yaml', 'idempotency-key': `schema-${siteId}` };
    const first = await t.call('PUT', schemaUrl(siteId), { raw: PETSTORE, headers });
    expect(first.status).toBe(200);
    const again = await t.call('PUT', schemaUrl(siteId), { raw: PETSTORE, headers });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await auditEvents('shield_schema.uploaded', siteId)).toHaveLength(1);
    const other = await t.call('PUT', schemaUrl(siteId), { raw: MUSEUM, headers });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it('deletes the schema with 204, then answers 404', async () => {
    const siteId = await newSite('delete.example.com');
    expect((await t.call('GET', schemaUrl(siteId))).status).toBe(404);
    expect((await t.call('DELETE', schemaUrl(siteId))).status).toBe(404);
    await t.call('PUT', schemaUrl(siteId), yaml(MUSEUM));
    const deleted = await t.call('DELETE', schemaUrl(siteId));
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = await t.call('GET', schemaUrl(siteId));
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('not_found');
    expect((await t.call('DELETE', schemaUrl(siteId))).status).toBe(404);
    const events = await auditEvents('shield_schema.deleted', siteId);
    expect(events.map((e) => e.metadata)).toEqual([{ hash: sha256(MUSEUM) }]);
  });
});

describe('Shield schema settings', () => {
  it('defaults to standard with no labels, and PATCH changes only what it is sent', async () => {
    const siteId = await newSite('config.example.com');
    const initial = await t.call('GET', configUrl(siteId));
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ livemode: true, site_id: siteId, strictness: 'standard', labels: {}, updated_at: expect.any(String) });

    const strict = await t.call('PATCH', configUrl(siteId), { body: { strictness: 'strict', labels: { team: 'api' } } });
    expect(strict.status).toBe(200);
    expect(strict.body).toMatchObject({ site_id: siteId, strictness: 'strict', labels: { team: 'api' } });
    const labelsOnly = await t.call('PATCH', configUrl(siteId), { body: { labels: { team: 'payments' } } });
    expect(labelsOnly.body).toMatchObject({ strictness: 'strict', labels: { team: 'payments' } });
    const lenient = await t.call('PATCH', configUrl(siteId), { body: { strictness: 'lenient' } });
    expect(lenient.body).toMatchObject({ strictness: 'lenient', labels: { team: 'payments' } });
    expect((await t.call('GET', configUrl(siteId))).body).toEqual(lenient.body);

    // the schema resource carries the settings
    const uploaded = await t.call('PUT', schemaUrl(siteId), yaml(MUSEUM));
    expect(uploaded.body).toMatchObject({ strictness: 'lenient', labels: { team: 'payments' } });

    const events = await auditEvents('shield_schema.strictness_changed', siteId);
    expect(events.map((e) => e.metadata).reverse()).toEqual([
      { from: 'standard', to: 'strict', lowered: false },
      { from: 'strict', to: 'lenient', lowered: true },
    ]);
  });

  it('validates the settings', async () => {
    const siteId = await newSite('config-validation.example.com');
    const bad = await t.call('PATCH', configUrl(siteId), { body: { strictness: 'paranoid' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields).toEqual([expect.objectContaining({ field: 'strictness' })]);
    for (const body of [{}, { mode: 'strict' }, { labels: { 'Bad Key': 'x' } }, { strictness: 1 }]) {
      const res = await t.call('PATCH', configUrl(siteId), { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
    }
    expect((await t.call('GET', configUrl(siteId))).body.strictness).toBe('standard');
  });
});

describe('Shield schema access', () => {
  it('needs shield:write to change, shield:read to read', async () => {
    const reader = await keyInOrganization(t, 'schema-readers', ['shield:read']);
    const writer = await keyInOrganization(t, 'schema-readers', ['shield:write']);
    const siteId = await newSite('access.example.com', writer);
    expect((await t.call('PUT', schemaUrl(siteId), { key: writer, ...yaml(MUSEUM) })).status).toBe(200);

    const denied = await t.call('PUT', schemaUrl(siteId), { key: reader, ...yaml(PETSTORE) });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'shield:write' } });
    expect((await t.call('DELETE', schemaUrl(siteId), { key: reader })).status).toBe(403);
    expect((await t.call('PATCH', configUrl(siteId), { key: reader, body: { strictness: 'lenient' } })).status).toBe(403);

    expect((await t.call('GET', schemaUrl(siteId), { key: reader })).body.hash).toBe(sha256(MUSEUM));
    expect((await t.call('GET', configUrl(siteId), { key: reader })).status).toBe(200);
    expect((await t.call('GET', schemaUrl(siteId), { key: null })).status).toBe(401);
  });

  it("answers 404 for another organisation's site and for unknown sites", async () => {
    const outsider = await keyInOrganization(t, 'schema-outsiders', ['shield:write']);
    const siteId = await newSite('private.example.com');
    await t.call('PUT', schemaUrl(siteId), yaml(MUSEUM));
    const requests: [string, string, Record<string, unknown>][] = [
      ['PUT', schemaUrl(siteId), yaml(PETSTORE)],
      ['GET', schemaUrl(siteId), {}],
      ['DELETE', schemaUrl(siteId), {}],
      ['GET', configUrl(siteId), {}],
      ['PATCH', configUrl(siteId), { body: { strictness: 'lenient' } }],
    ];
    for (const [method, url, options] of requests) {
      const res = await t.call(method, url, { key: outsider, ...options });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      const unknown = await t.call(method, url.replace(siteId, 'site_01aaaaaaaaaaaaaaaaaaaaaaaa'), options);
      expect(unknown.status, `${method} unknown site`).toBe(404);
    }
    // untouched
    expect((await t.call('GET', schemaUrl(siteId))).body.hash).toBe(sha256(MUSEUM));
    expect((await t.call('GET', configUrl(siteId))).body.strictness).toBe('standard');
  });

  it('documents the routes in the served OpenAPI document', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const path = doc.paths['/api/v1/shield/sites/{id}/schema'];
    expect(Object.keys(path.put.requestBody.content)).toEqual(expect.arrayContaining(['application/yaml', 'application/json']));
    expect(path.put['x-required-scope']).toBe('shield:write');
    expect(path.get.responses['200']).toBeDefined();
    expect(doc.paths['/api/v1/shield/sites/{id}/schema-config'].patch['x-required-scope']).toBe('shield:write');
  });
});

describe('OpenAPI analysis limits', () => {
  it('gives up on a $ref bomb after the time limit instead of blocking the server', async () => {
    // Nine levels of ten references each: a few hundred bytes that dereference to 10^9 nodes.
    const schemas: Record<string, unknown> = {};
    for (let level = 0; level < 9; level++) {
      const properties: Record<string, unknown> = {};
      for (let i = 0; i < 10; i++) properties[`p${i}`] = level === 8 ? { type: 'string' } : { $ref: `#/components/schemas/S${level + 1}` };
      schemas[`S${level}`] = { type: 'object', properties };
    }
    const bomb = JSON.stringify({ openapi: '3.0.3', info: { title: 'Bomb', version: '1' }, paths: {}, components: { schemas } });
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 50);
    try {
      const analysis = await analyseInWorker(bomb, 'json', { timeoutMs: 1500, maxHeapMb: 256 });
      // out of time, or out of its heap first: either way it gives up and says why
      expect(analysis).toEqual({ ok: false, reasons: [expect.stringMatching(/(took longer than 1\.5 s|needed more than 256 MiB).* too large or too complex/)] });
    } finally {
      clearInterval(timer);
    }
    // the event loop kept running while the worker churned
    expect(ticks).toBeGreaterThan(10);
  });
});
