// client/api-types.ts must be what `npm run client:types` makes of the document the
// server serves today: a route schema change without regenerating fails here.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OpenAPI3 } from 'openapi-typescript';
import { API_TYPES_FILE, renderApiTypes } from '../../build/client-types.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

it('the committed client types are generated from the served OpenAPI document (run `npm run client:types` if this fails)', async () => {
  const res = await fetch(`${t.url}/api/v1/openapi.json`);
  const generated = await renderApiTypes((await res.json()) as OpenAPI3);
  const committed = await readFile(API_TYPES_FILE, 'utf8');
  // Not toBe on 9 000 lines: on failure, point at the first line that differs.
  const [a, b] = [committed.split('\n'), generated.split('\n')];
  const first = a.findIndex((line, i) => line !== b[i]);
  expect(first === -1 && a.length === b.length ? 'up to date' : `differs from line ${(first === -1 ? Math.min(a.length, b.length) : first) + 1}: ${JSON.stringify(a[first])} vs ${JSON.stringify(b[first])}`).toBe('up to date');
});
