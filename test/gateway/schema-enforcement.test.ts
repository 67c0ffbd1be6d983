// OpenAPI schema enforcement on its own: real-world documents (Swagger Petstore 3.0, Redocly Museum
// 3.1) and a small document for what those two do not exercise (required query parameters,
// nullable, patterns, server variables), checked at each strictness level.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InspectedRequest } from '../../gateway/inspected-request.ts';
import { compileSchemaEnforcer, getSchemaEnforcer, type SchemaEnforcer } from '../../gateway/rules/schema/index.ts';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openapi/${name}`, import.meta.url), 'utf8');

/** The parts schema enforcement reads; the field-level ones (fields, anomalies…) stay empty. */
function request(method: string, target: string, extra: Partial<InspectedRequest> = {}): InspectedRequest {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  return {
    method,
    path,
    query: new URLSearchParams(q === -1 ? '' : target.slice(q + 1)),
    headers: {},
    contentType: '',
    bodyState: 'none',
    decodedPath: path,
    fields: [],
    bodyText: null,
    anomalies: new Set(),
    refusal: null,
    ...extra,
  };
}

const json = (method: string, target: string, body: unknown): InspectedRequest =>
  request(method, target, { contentType: 'application/json', bodyState: 'json', json: body });

const SMALL = `
openapi: 3.0.3
info: { title: small, version: '1' }
servers:
  - url: 'https://{region}.example.com/{version}'
    variables:
      region: { default: eu }
      version: { default: v2, enum: [v2, v3] }
paths:
  /items/{code}:
    get:
      operationId: getItem
      parameters:
        - { name: code, in: path, required: true, schema: { type: string, pattern: '^(a+)+$' } }
        - { name: limit, in: query, required: true, schema: { type: integer, exclusiveMinimum: true, minimum: 0 } }
        - { name: X-Trace, in: header, schema: { type: string, maxLength: 8 } }
    put:
      operationId: putItem
      parameters:
        - { name: code, in: path, required: true, schema: { type: string } }
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Item' }
  /files/{name}.json:
    get:
      operationId: getFile
      parameters:
        - { name: name, in: path, required: true, schema: { type: string, maxLength: 5 } }
  /checks:
    get:
      operationId: check
      parameters:
        - { name: word, in: query, schema: { type: string, pattern: '^(?!bad)' } }
components:
  schemas:
    Item:
      type: object
      required: [id, label]
      properties:
        id: { type: integer, readOnly: true }
        label: { type: string, nullable: true }
        metadata: { type: object }
`;

describe('schema enforcement (Swagger Petstore, OpenAPI 3.0)', () => {
  let petstore: SchemaEnforcer;
  beforeAll(async () => {
    petstore = await compileSchemaEnforcer(fixture('petstore-3.0.yaml'));
  });

  it('lenient: only the path (with or without the server base path) and the method must be declared', () => {
    expect(petstore.check(request('GET', '/v3/pet/12'), 'lenient')).toBeNull();
    expect(petstore.check(request('GET', '/pet/12'), 'lenient')).toBeNull();
    // Parameters are not looked at.
    expect(petstore.check(request('GET', '/v3/pet/not-a-number?anything=1'), 'lenient')).toBeNull();
    expect(petstore.check(request('GET', '/v2/pet/12'), 'lenient')).toEqual({ reason: 'the path is not declared in the schema', operation: null });
    expect(petstore.check(request('GET', '/v3/pets'), 'lenient')?.reason).toBe('the path is not declared in the schema');
    expect(petstore.check(request('PATCH', '/v3/pet/12'), 'lenient')).toEqual({ reason: 'method PATCH is not declared for this path', operation: null });
    // HEAD is a GET without a body; a CORS preflight asks about a declared method.
    expect(petstore.check(request('HEAD', '/v3/store/inventory'), 'strict')).toBeNull();
    expect(petstore.check(request('OPTIONS', '/v3/store/inventory', { headers: { 'access-control-request-method': 'GET' } }), 'strict')).toBeNull();
    expect(petstore.check(request('OPTIONS', '/v3/store/inventory', { headers: { 'access-control-request-method': 'DELETE' } }), 'lenient')).not.toBeNull();
  });

  it('matches path templates, preferring literal segments over parameters', () => {
    // `/pet/findByStatus` rather than `/pet/{petId}` (whose integer petId it would fail).
    expect(petstore.check(request('GET', '/v3/pet/findByStatus?status=sold'), 'standard')).toBeNull();
    expect(petstore.check(request('GET', '/v3/user/login?x=1'), 'strict')?.operation).toBe('loginUser');
    expect(petstore.check(request('GET', '/v3/user/someone?x=1'), 'strict')?.operation).toBe('getUserByName');
    expect(petstore.check(request('GET', '/user/login?x=1'), 'strict')?.operation).toBe('loginUser');
    expect(petstore.check(request('POST', '/v3/pet/12/uploadImage'), 'standard')).toBeNull();
    // Percent-encoding is decoded; one trailing slash is not significant; dot segments never match.
    expect(petstore.check(request('GET', '/v3/pet/findBy%53tatus'), 'standard')).toBeNull();
    expect(petstore.check(request('GET', '/v3/pet/findByStatus/'), 'standard')).toBeNull();
    expect(petstore.check(request('GET', '/v3/pet/..'), 'lenient')?.reason).toBe('the path is not declared in the schema');
    expect(petstore.check(request('GET', '/v3/pet/%zz'), 'lenient')?.reason).toBe('the path is not declared in the schema');
  });

  it('routes paths as lenient origins do: case folded when the site says so, `;` parameters and empty segments ignored', () => {
    // A case-insensitive origin runs findByStatus for /PET/FINDBYSTATUS: that is the operation to validate.
    expect(petstore.check(request('GET', '/v3/PET/FINDBYSTATUS?status=lost'), 'standard', true)?.operation).toBe('findPetsByStatus');
    expect(petstore.check(request('GET', '/v3/PET/FINDBYSTATUS?status=sold'), 'standard', true)).toBeNull();
    expect(petstore.check(request('GET', '/v3/PET/12'), 'lenient', false)?.reason).toBe('the path is not declared in the schema');
    expect(petstore.check(request('GET', '/v3/pet;jsessionid=1/findByStatus?status=lost'), 'standard')?.operation).toBe('findPetsByStatus');
    expect(petstore.check(request('GET', '/v3//pet//12'), 'standard')).toBeNull();
    expect(petstore.needsBody('POST', '/V3/PET', true)).toBe(true);
    expect(petstore.needsBody('POST', '/V3/PET', false)).toBe(false);
  });

  it('standard: validates parameters with types coerced from text', () => {
    expect(petstore.check(request('GET', '/v3/pet/12'), 'standard')).toBeNull();
    expect(petstore.check(request('GET', '/v3/pet/rex'), 'standard')).toEqual({ reason: 'path parameter "petId" must be integer', operation: 'getPetById' });
    expect(petstore.check(request('GET', '/v3/pet/findByStatus?status=lost'), 'standard')).toEqual({
      reason: 'query parameter "status" must be equal to one of the allowed values',
      operation: 'findPetsByStatus',
    });
    expect(petstore.check(request('GET', '/v3/pet/findByTags?tags=a&tags=b'), 'standard')).toBeNull();
    // Undeclared query parameters pass below strict.
    expect(petstore.check(request('GET', '/v3/pet/findByStatus?status=sold&debug=1'), 'standard')).toBeNull();
  });

  it('standard: validates JSON bodies and their content type', () => {
    const pet = { name: 'rex', photoUrls: ['https://example.com/rex.jpg'], category: { id: 1, name: 'Dogs' }, tags: [{ id: 2, name: 'good' }] };
    expect(petstore.check(json('POST', '/v3/pet', pet), 'standard')).toBeNull();
    expect(petstore.check(json('POST', '/v3/pet', { ...pet, name: 42 }), 'standard')).toEqual({ reason: 'request body at /name must be string', operation: 'addPet' });
    expect(petstore.check(json('POST', '/v3/pet', { photoUrls: [] }), 'standard')?.reason).toBe('request body at /name is required');
    expect(petstore.check(json('POST', '/v3/pet', { ...pet, tags: [{ id: 'two' }] }), 'standard')?.reason).toBe('request body at /tags/0/id must be integer');
    expect(petstore.check(json('PUT', '/v3/pet', []), 'standard')?.reason).toBe('request body must be object');
    expect(petstore.check(json('POST', '/v3/user/createWithList', [{ username: 'a' }, { username: 7 }]), 'standard')?.reason).toBe(
      'request body at /1/username must be string',
    );
    // Extra properties pass below strict.
    expect(petstore.check(json('POST', '/v3/pet', { ...pet, colour: 'brown' }), 'standard')).toBeNull();

    expect(petstore.check(request('POST', '/v3/pet', { contentType: 'text/plain', bodyState: 'other' }), 'standard')?.reason).toBe(
      'content type text/plain is not declared for this operation',
    );
    expect(petstore.check(request('POST', '/v3/pet', { contentType: 'application/json', bodyState: 'unparsable' }), 'standard')?.reason).toBe(
      'the request body is not valid JSON',
    );
    expect(petstore.check(request('POST', '/v3/pet'), 'standard')?.reason).toBe('the request body is required');
    // Declared non-JSON types are accepted unvalidated; an uninspected body cannot be judged.
    expect(petstore.check(request('POST', '/v3/pet', { contentType: 'application/xml', bodyState: 'other' }), 'standard')).toBeNull();
    expect(petstore.check(request('POST', '/v3/pet', { contentType: 'application/json', bodyState: 'too_large' }), 'standard')).toBeNull();
    // No body content is checked at lenient.
    expect(petstore.check(json('POST', '/v3/pet', { name: 42 }), 'lenient')).toBeNull();
  });

  it('strict: refuses unknown query parameters, undeclared body properties and unverifiable bodies', () => {
    expect(petstore.check(request('GET', '/v3/pet/findByStatus?status=sold'), 'strict')).toBeNull();
    expect(petstore.check(request('GET', '/v3/pet/findByStatus?status=sold&debug=1'), 'strict')).toEqual({
      reason: 'query parameter "debug" is not declared',
      operation: 'findPetsByStatus',
    });
    const pet = { name: 'rex', photoUrls: [], category: { id: 1, name: 'Dogs' } };
    expect(petstore.check(json('POST', '/v3/pet', pet), 'strict')).toBeNull();
    expect(petstore.check(json('POST', '/v3/pet', { ...pet, colour: 'brown' }), 'strict')?.reason).toBe('request body at /colour is not declared');
    expect(petstore.check(json('POST', '/v3/pet', { ...pet, category: { id: 1, owner: 'me' } }), 'strict')?.reason).toBe('request body at /category/owner is not declared');
    expect(petstore.check(request('POST', '/v3/pet', { contentType: 'application/json', bodyState: 'too_large' }), 'strict')?.reason).toBe(
      'the request body is too large to validate',
    );
    expect(petstore.check(request('POST', '/v3/pet', { bodyState: 'other' }), 'strict')?.reason).toBe('the request body has no content type');
    expect(petstore.check(request('POST', '/v3/pet', { bodyState: 'other' }), 'standard')).toBeNull();
    expect(petstore.check(request('DELETE', '/v3/pet/1', { contentType: 'application/json', bodyState: 'not_inspected' }), 'strict')?.reason).toBe(
      'the operation declares no request body',
    );
  });

  it('asks for the body only for operations that declare one', () => {
    expect(petstore.needsBody('POST', '/v3/pet')).toBe(true);
    expect(petstore.needsBody('PUT', '/v3/user/someone')).toBe(true);
    expect(petstore.needsBody('GET', '/v3/pet/1')).toBe(false);
    expect(petstore.needsBody('DELETE', '/v3/pet/1')).toBe(false);
    expect(petstore.needsBody('POST', '/elsewhere')).toBe(false);
  });
});

describe('schema enforcement (Redocly Museum, OpenAPI 3.1)', () => {
  let museum: SchemaEnforcer;
  beforeAll(async () => {
    museum = await compileSchemaEnforcer(fixture('museum-3.1.yaml'));
  });

  it('takes the base path from an absolute server URL', () => {
    expect(museum.check(request('GET', '/v1.1/museum-hours'), 'lenient')).toBeNull();
    expect(museum.check(request('GET', '/museum-hours'), 'lenient')).toBeNull();
    expect(museum.check(request('GET', '/v1.1/v1.1/museum-hours'), 'lenient')?.reason).toBe('the path is not declared in the schema');
  });

  it('validates referenced parameters, formats and bounds', () => {
    expect(museum.check(request('GET', '/v1.1/museum-hours?startDate=2024-01-31&limit=30&page=2'), 'strict')).toBeNull();
    expect(museum.check(request('GET', '/v1.1/museum-hours?limit=31'), 'standard')?.reason).toBe('query parameter "limit" must be <= 30');
    expect(museum.check(request('GET', '/v1.1/museum-hours?startDate=tomorrow'), 'standard')?.reason).toBe('query parameter "startDate" must match format "date"');
    expect(museum.check(request('GET', '/v1.1/museum-hours?limit=1&limit=2'), 'standard')?.reason).toBe('query parameter "limit" must be integer');
    expect(museum.check(request('DELETE', '/v1.1/special-events/not-a-uuid'), 'standard')).toEqual({
      reason: 'path parameter "eventId" must match format "uuid"',
      operation: 'deleteSpecialEvent',
    });
  });

  it('validates JSON bodies, closing objects at strict', () => {
    const ticket = { ticketType: 'general', ticketDate: '2023-09-07', email: 'todd@example.com' };
    expect(museum.check(json('POST', '/v1.1/tickets', ticket), 'strict')).toBeNull();
    expect(museum.check(json('POST', '/v1.1/tickets', { ...ticket, ticketType: 'vip' }), 'standard')?.reason).toBe(
      'request body at /ticketType must be equal to one of the allowed values',
    );
    expect(museum.check(json('POST', '/v1.1/tickets', { ...ticket, email: 'nobody' }), 'standard')?.reason).toBe('request body at /email must match format "email"');
    expect(museum.check(json('POST', '/v1.1/tickets', { ...ticket, seat: 'A1' }), 'standard')).toBeNull();
    expect(museum.check(json('POST', '/v1.1/tickets', { ...ticket, seat: 'A1' }), 'strict')).toEqual({
      reason: 'request body at /seat is not declared',
      operation: 'buyMuseumTickets',
    });
    expect(museum.check(json('PATCH', '/v1.1/special-events/3be6453c-03eb-4357-ae5a-984a0e574a54', { price: 'free' }), 'standard')?.reason).toBe(
      'request body at /price must be number',
    );
  });
});

describe('schema enforcement details', () => {
  let small: SchemaEnforcer;
  beforeAll(async () => {
    small = await compileSchemaEnforcer(SMALL);
  });

  it('expands server variables into base paths', () => {
    expect(small.check(request('GET', '/v2/files/a.json'), 'lenient')).toBeNull();
    expect(small.check(request('GET', '/v3/files/a.json'), 'lenient')).toBeNull();
    expect(small.check(request('GET', '/files/a.json'), 'lenient')).toBeNull();
    expect(small.check(request('GET', '/v4/files/a.json'), 'lenient')).not.toBeNull();
  });

  it('matches segments that mix text and parameters', () => {
    expect(small.check(request('GET', '/v2/files/notes.json'), 'standard')).toBeNull();
    expect(small.check(request('GET', '/v2/files/notes.xml'), 'lenient')?.reason).toBe('the path is not declared in the schema');
    expect(small.check(request('GET', '/v2/files/toolong.json'), 'standard')?.reason).toBe('path parameter "name" must NOT have more than 5 characters');
  });

  it('reports missing required parameters and checks headers', () => {
    expect(small.check(request('GET', '/v2/items/aaa?limit=1'), 'standard')).toBeNull();
    expect(small.check(request('GET', '/v2/items/aaa'), 'standard')).toEqual({ reason: 'query parameter "limit" is required', operation: 'getItem' });
    // OpenAPI 3.0 boolean exclusiveMinimum.
    expect(small.check(request('GET', '/v2/items/aaa?limit=0'), 'standard')?.reason).toBe('query parameter "limit" must be > 0');
    expect(small.check(request('GET', '/v2/items/aaa?limit=1', { headers: { 'x-trace': 'far-too-long' } }), 'standard')?.reason).toBe(
      'header parameter "X-Trace" must NOT have more than 8 characters',
    );
  });

  it('applies OpenAPI request semantics: nullable, readOnly, free-form objects', () => {
    // `id` is readOnly, so not required in a request; `label` is nullable.
    expect(small.check(json('PUT', '/v2/items/a', { label: null }), 'strict')).toBeNull();
    expect(small.check(json('PUT', '/v2/items/a', { label: 3 }), 'standard')?.reason).toBe('request body at /label must be string,null');
    // A free-form object stays open at strict; declared objects are closed.
    expect(small.check(json('PUT', '/v2/items/a', { label: 'x', metadata: { anything: true } }), 'strict')).toBeNull();
    expect(small.check(json('PUT', '/v2/items/a', { label: 'x', other: 1 }), 'strict')?.reason).toBe('request body at /other is not declared');
  });

  it('evaluates `pattern` with RE2, in linear time', () => {
    // `^(a+)+$` backtracks exponentially in V8 on this input; RE2 answers at once.
    const hostile = `${'a'.repeat(50_000)}!`;
    expect(small.check(request('GET', `/v2/items/${hostile}?limit=1`), 'standard')).toEqual({
      reason: 'path parameter "code" must match pattern "^(a+)+$"',
      operation: 'getItem',
    });
    expect(small.check(request('GET', `/v2/items/${'a'.repeat(50_000)}?limit=1`), 'standard')).toBeNull();
  });

  it('reports patterns RE2 cannot run instead of enforcing them with a backtracking engine', () => {
    expect(small.warnings?.some((w) => w.includes('^(?!bad)'))).toBe(true);
    expect(small.check(request('GET', '/v2/checks?word=badword'), 'standard')).toBeNull();
  });

  it('compiles once per document version (LRU by hash), sharing concurrent compilations', async () => {
    const text = fixture('petstore-3.0.yaml');
    const [a, b] = await Promise.all([getSchemaEnforcer('sha256:test-a', text), getSchemaEnforcer('sha256:test-a', text)]);
    expect(a).toBe(b);
    expect(await getSchemaEnforcer('sha256:test-a', text)).toBe(a);
    const other = await getSchemaEnforcer('sha256:test-b', text);
    expect(other).not.toBe(a);
    // A failed compilation is not cached.
    await expect(getSchemaEnforcer('sha256:test-bad', 'swagger: "2.0"')).rejects.toThrow(/Swagger 2.0/);
    await expect(getSchemaEnforcer('sha256:test-bad', 'swagger: "2.0"')).rejects.toThrow(/Swagger 2.0/);
  });
});
