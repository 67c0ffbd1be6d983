import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_NAMES } from '../../api/operation-ids.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document that a validator accepts', async () => {
    const res = await t.call('GET', '/api/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every API route with its responses, errors and security', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const expected = [
      ['get', '/api/v1/me'],
      ['get', '/api/v1/orgs/current'],
      ['post', '/api/v1/api-keys'],
      ['get', '/api/v1/api-keys'],
      ['get', '/api/v1/api-keys/{id}'],
      ['post', '/api/v1/api-keys/{id}/rotate'],
      ['delete', '/api/v1/api-keys/{id}'],
      ['get', '/api/v1/audit-log'],
      ['get', '/healthz'],
      ['get', '/readyz'],
      // managed resources
      ...['/api/v1/shield/sites', '/api/v1/scan-schedules', '/api/v1/webhooks'].flatMap((c) => [
        ['get', c],
        ['post', c],
        ['get', `${c}/{id}`],
        ['patch', `${c}/{id}`],
        ['delete', `${c}/{id}`],
      ]),
      ...[
        ['virtual-patches', 'patch_id'],
        ['ip-access', 'rule_id'],
        ['rate-limits', 'rule_id'],
      ].flatMap(([collection, param]) => {
        const c = `/api/v1/shield/sites/{id}/${collection}`;
        return [
          ['get', c],
          ['post', c],
          ['get', `${c}/{${param}}`],
          ['patch', `${c}/{${param}}`],
          ['delete', `${c}/{${param}}`],
        ];
      }),
      ['post', '/api/v1/shield/sites/{id}/ip-access/import'],
      ['put', '/api/v1/shield/sites/{id}/schema'],
      ['get', '/api/v1/shield/sites/{id}/schema'],
      ['delete', '/api/v1/shield/sites/{id}/schema'],
      ['get', '/api/v1/shield/sites/{id}/schema-config'],
      ['patch', '/api/v1/shield/sites/{id}/schema-config'],
      ['get', '/api/v1/shield/sites/{id}/analytics'],
      ['get', '/api/v1/shield/sites/{id}/live'],
      ['put', '/api/v1/shield/sites/{id}/certificate'],
      ['get', '/api/v1/shield/sites/{id}/certificate'],
      ['delete', '/api/v1/shield/sites/{id}/certificate'],
      ['post', '/api/v1/shield/sites/{id}/verify-domain'],
    ];
    for (const [method, path] of expected) {
      const op = doc.paths[path!]?.[method!];
      expect(op, `${method} ${path}`).toBeDefined();
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      expect(success.length, `${method} ${path} success response`).toBeGreaterThan(0);
      if (path!.startsWith('/api/')) {
        expect(op.security).toEqual([{ apiKey: [] }]);
        expect(op.responses['401']).toBeDefined();
        expect(op.responses['429']).toBeDefined();
      }
    }
    expect(doc.paths['/api/v1/api-keys'].post['x-required-scope']).toBe('admin');
    expect(doc.paths['/api/v1/api-keys'].post.requestBody.content['application/json'].schema.required).toEqual(['name', 'scopes']);
    // The server's own route table agrees with the document.
    expect(t.server.app.hasRoute({ method: 'POST', url: '/api/v1/api-keys' })).toBe(true);
    // request bodies are the shared schemas of schemas/
    const siteBody = doc.paths['/api/v1/shield/sites'].post.requestBody.content['application/json'].schema;
    expect(siteBody.properties.mode.enum).toEqual(['log', 'block', 'challenge']);
    expect(siteBody.properties.domain.description).toMatch(/Domain the site protects/);
    expect(Object.keys(doc.paths['/api/v1/shield/sites/{id}/ip-access/import'].post.requestBody.content)).toContain('text/csv');
    // Analytics and the live stream are Shield reads (spec 5.1); the stream is documented as SSE.
    for (const path of ['/api/v1/shield/sites/{id}/analytics', '/api/v1/shield/sites/{id}/live']) expect(doc.paths[path].get['x-required-scope']).toBe('shield:read');
    expect(Object.keys(doc.paths['/api/v1/shield/sites/{id}/live'].get.responses['200'].content)).toEqual(['text/event-stream']);
    expect(doc.paths['/api/v1/shield/sites/{id}/live'].get.responses['406']).toBeDefined();
    // Certificates and domain proof: Shield writes and reads like the site's other routes; the key goes in, never out.
    const certificate = doc.paths['/api/v1/shield/sites/{id}/certificate'];
    expect([certificate.put['x-required-scope'], certificate.get['x-required-scope'], certificate.delete['x-required-scope']]).toEqual(['shield:write', 'shield:read', 'shield:write']);
    expect(certificate.put.requestBody.content['application/json'].schema.required).toEqual(['certificate', 'private_key']);
    expect(Object.keys(certificate.get.responses['200'].content['application/json'].schema.properties)).not.toContain('private_key');
    expect(doc.paths['/api/v1/shield/sites/{id}/verify-domain'].post['x-required-scope']).toBe('shield:write');
  });

  it('names every operation once (the SDK method names), or marks it as not for API clients', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { key: null })).body as { paths: Record<string, Record<string, { operationId?: string; 'x-aegis-sdk'?: boolean }>> };
    const seen = new Map<string, string>();
    const routes = new Set<string>();
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
        routes.add(route);
        if (operation['x-aegis-sdk'] === false) continue;
        expect(operation.operationId, `${route} has no entry in api/operation-ids.ts`).toMatch(/^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/);
        expect(seen.get(operation.operationId!), `${operation.operationId} names two operations`).toBeUndefined();
        seen.set(operation.operationId!, route);
      }
    }
    // The table names no route that is gone.
    expect(Object.keys(OPERATION_NAMES).filter((route) => !routes.has(route))).toEqual([]);
  });

  it('serves a browsable reference at /docs', async () => {
    const res = await fetch(`${t.url}/docs`, { redirect: 'follow' });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('swagger');
  });
});
