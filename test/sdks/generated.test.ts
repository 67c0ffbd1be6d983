// The SDKs cannot go stale: the Node, Python and Go code generated from the OpenAPI document the
// server serves today must be exactly what is committed (npm run sdks:generate writes it).
import { beforeAll, describe, expect, it } from 'vitest';
import { fetchServedDocument } from '../../build/client-types.ts';
import { renderSdks, staleFiles } from '../../build/sdks.ts';
import type { OpenApiDocument } from '../../sdks/codegen/model.ts';

let served: OpenApiDocument;
beforeAll(async () => {
  served = (await fetchServedDocument()) as unknown as OpenApiDocument;
}, 120_000);

describe('generated SDKs', () => {
  it('match the served OpenAPI document (else: npm run sdks:generate)', () => {
    expect(staleFiles(renderSdks(served))).toEqual([]);
  });

  it('go stale when a route is added without regenerating', () => {
    const document = structuredClone(served);
    document.paths['/api/v1/widgets'] = {
      get: {
        operationId: 'widgets.list',
        summary: 'List widgets',
        parameters: [],
        responses: { '200': { content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } } } },
      },
    };
    const stale = staleFiles(renderSdks(document));
    expect(stale).toContain('sdks/openapi.json');
    // Each SDK gains the operation, so each has a generated file that no longer matches.
    for (const sdk of ['sdks/node/', 'sdks/python/', 'sdks/go/']) expect(stale.some((path) => path.startsWith(sdk)), sdk).toBe(true);
  });
});
