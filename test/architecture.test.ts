// The architecture, checked (docs/architecture.md draws it). Three rules, over every file of ours:
//
// 1. Layers. Each file belongs to an area (the longest prefix of its path in LAYERS) and may import,
//    besides its own area, only the areas its row names. Every value import counts: static imports
//    and re-exports, dynamic `import('…')`, and modules started by URL (`new URL('./x.ts',
//    import.meta.url)`, worker threads). Type-only imports are erased at build time and do not.
// 2. No cycles between folders, at any depth: a folder's files may import another folder's only if
//    nothing there imports back, so each folder can be read knowing only what is below it.
// 3. No hand-written file over MAX_LINES lines.
// The graph itself (what counts as an import, which files are generated) is build/import-graph.ts,
// which `npm run arch:graph` runs to print the counts.
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_CODE, cycles, ImportGraph, PRODUCT, type Import } from '../build/import-graph.ts';

/**
 * The layers, lowest first, and what each may import. The shared model (schemas/) imports nothing
 * of ours; the platform imports no feature (features register with it: job handlers, event
 * subscribers, the OpenAPI document's webhooks arrive as options); the gateway and the scanners run
 * without the API; accounts (sign-in, sessions, keys, people) sit below every other area of the
 * API; the reconciler and the provider reach the server only over HTTP, through client/.
 */
const LAYERS: Record<string, readonly string[]> = {
  schemas: [],
  client: ['schemas'],
  platform: ['schemas'],
  gateway: ['platform', 'schemas'],
  scanners: ['platform', 'schemas'],
  'api/accounts': ['platform', 'schemas'],
  api: ['api/accounts', 'gateway', 'scanners', 'platform', 'schemas'],
  reconciler: ['client', 'schemas'],
  // provider/cdktf/generate.ts packages the bindings it generates (sdks/cdktf/build.mjs).
  provider: ['reconciler', 'client', 'schemas', 'sdks/cdktf'],
  cli: ['api', 'api/accounts', 'gateway', 'scanners', 'platform', 'reconciler', 'provider', 'client', 'schemas'],
  web: ['client'],
  // Build tooling: starts a server to read its OpenAPI document, generates and bundles.
  build: ['api', 'api/accounts', 'platform', 'client', 'schemas', 'sdks/codegen', 'sdks/cdktf'],
  'sdks/codegen': ['schemas'],
  'sdks/cdktf': [],
  bin: ['cli', 'build', 'dist'],
};

const MAX_LINES = 1000;

const graph = new ImportGraph(resolve(import.meta.dirname, '..'));
const productFiles = PRODUCT.flatMap((dir) => graph.files(dir));
const imports = productFiles.flatMap((file) => graph.valueImports(file));

const AREAS = Object.keys(LAYERS).sort((a, b) => b.length - a.length);
/** The area of a path: the longest prefix in LAYERS (the dashboard's sources count as web/); dist/ is the bundle. */
const areaOf = (path: string): string | undefined => {
  const normal = path.startsWith('web/src/') ? `web/${path.slice('web/src/'.length)}` : path;
  return AREAS.find((area) => normal === area || normal.startsWith(`${area}/`)) ?? (normal.split('/')[0] === 'dist' ? 'dist' : undefined);
};

/** The imports that cross from one folder of a cycle to another: what to untangle. */
const crossing = (component: readonly string[]): string[] =>
  imports
    .filter((i: Import) => dirname(i.file) !== dirname(i.target) && component.includes(dirname(i.file)) && component.includes(dirname(i.target)))
    .map((i) => `${i.file} → ${i.specifier}`);

describe('architecture', () => {
  it('finds what it checks (the scan itself works)', () => {
    expect(graph.valueImports('cli/serve.ts').map((i) => i.target)).toEqual(expect.arrayContaining(['api/server.ts']));
    // Modules started by URL count (a worker thread's entry); type-only imports do not.
    expect(imports.some((i) => i.file.startsWith('api/integrations/') && i.target === 'api/scans/scan-thread.ts')).toBe(true);
    expect(imports.some((i) => i.file === 'web/src/api/types.ts')).toBe(false);
    expect(productFiles.length).toBeGreaterThan(500);
    expect(productFiles.filter((file) => areaOf(file) === undefined)).toEqual([]);
    const ring = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]]);
    expect(cycles(ring)).toEqual([['a', 'b', 'c']]);
  });

  it('each area imports only the layers below it', () => {
    const violations = imports.flatMap((i) => {
      const from = areaOf(i.file)!;
      const to = areaOf(i.target);
      if (to === from || (to !== undefined && LAYERS[from]!.includes(to))) return [];
      return [`${i.file} (${from}) imports ${i.specifier} (${to ?? 'outside the product'})`];
    });
    expect(violations).toEqual([]);
  });

  it('no two folders import each other, directly or around a cycle', () => {
    const found = cycles(graph.folders(productFiles, imports)).map((folders) => ({ folders, imports: crossing(folders) }));
    expect(found).toEqual([]);
  });

  it(`no hand-written file is over ${MAX_LINES} lines`, () => {
    expect(graph.lengths(ALL_CODE).filter(({ lines }) => lines > MAX_LINES)).toEqual([]);
  });
});
