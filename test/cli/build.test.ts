// The built command (dist/, build/bundle.mjs) runs on its own: built here when missing or stale, so this
// never passes by skipping. And the staleness rule bin/aegis.mjs applies to it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { stampOf, staleInput } from '../../build/bundle.mjs';
import { precompiledSchemas } from '../../reconciler/config/precompile-validators.ts';
import { createAjv, validatorFileName } from '../../reconciler/config/validators.ts';
import { runAegis, runBuiltAegis } from '../support/cli.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/aegis-process.ts';

beforeAll(async () => {
  const built = await new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(process.execPath, ['build/bundle.mjs', '--if-stale'], { timeout: 120_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr }),
    ),
  );
  expect(built.code, built.stderr).toBe(0);
  expect(existsSync('dist/aegis.js')).toBe(true);
}, 120_000);

describe('the built aegis command (dist/)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--help lists every command', async () => {
    const result = await runBuiltAegis(['--help']);
    expect(result.code, result.stderr).toBe(0);
    for (const command of ['serve', 'keys create', 'advisories import', 'provider install', 'validate', 'plan', 'apply', 'dump', 'watch', 'completion']) {
      expect(result.stdout).toContain(`  ${command}`);
    }
  });

  it('validate examples/gitops, as the sources do', async () => {
    const [built, sources] = await Promise.all([runBuiltAegis(['validate', 'examples/gitops']), runAegis(['validate', 'examples/gitops'])]);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toMatch(/^\d+ objects, 0 errors, \d+ warnings?\n$/m);
    expect(built).toEqual(sources);
  });

  it('holds every config validator precompiled, and its errors read as the compiled ones do', async () => {
    for (const { flavour, schema } of precompiledSchemas()) expect(existsSync(join('dist/validators', validatorFileName(flavour, schema)))).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), 'aegis-bad-config-'));
    try {
      await writeFile(
        join(dir, 'site.yaml'),
        'apiVersion: aegis/v1\nkind: ShieldSite\nmetadata: { name: shop }\nspec:\n  domain: shop.example.com\n  origin_url: http://127.0.0.1:9\n  mode: blocc\n  bogus: 1\n' +
          '  virtual_patches:\n    - { name: p, url_pattern: /x, method: GET, match_param: q, match_regex: a, action: block, extra: 2 }\n---\n' +
          'apiVersion: aegis/v1\nkind: ShieldSchema\nmetadata: { name: s }\nspec: { site: shop, document: x, document_file: y.yaml }\n',
      );
      const [built, sources] = await Promise.all([runBuiltAegis(['validate', dir]), runAegis(['validate', dir])]);
      expect(built.code).toBe(1);
      expect(built.stdout + built.stderr).toMatch(/spec\.mode: must be one of/);
      expect(built.stdout + built.stderr).toMatch(/give only one of document or document_file/);
      expect(built).toEqual(sources);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a precompiled validator answers as a fresh compile of its schema does', async () => {
    const require = createRequire(import.meta.url);
    const bad = { apiVersion: 'aegis/v1', kind: 'ShieldSite', metadata: { name: 'Shop' }, spec: { domain: 'shop.example.com', mode: 'blocc', bogus: 1, labels: { 'Bad Key': 'x' } } };
    for (const { flavour, schema } of precompiledSchemas()) {
      const precompiled = require(resolve('dist/validators', validatorFileName(flavour, schema))) as ValidateFunction;
      const fresh = createAjv(flavour).compile(schema);
      for (const input of [bad, bad.spec, {}]) {
        const [a, b] = [structuredClone(input), structuredClone(input)];
        expect(precompiled(a)).toBe(fresh(b));
        expect(precompiled.errors ?? null).toEqual(fresh.errors ?? null);
        expect(a).toEqual(b); // defaults filled in alike
      }
    }
  });

  it('exit codes: a usage error is 1', async () => {
    const result = await runBuiltAegis(['plan', '--nope']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("aegis plan: unknown option '--nope'");
  });
});

describe('staleness (bin/aegis.mjs runs dist/ only when no input changed since the build)', () => {
  async function infoDir(inputs: Record<string, string | undefined>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'aegis-dist-'));
    await writeFile(join(dir, 'build-info.json'), JSON.stringify({ entry: 'aegis.js', inputs }));
    return dir;
  }

  it('fresh when every stamp matches; else names the first changed or missing input', async () => {
    const dirs = [await infoDir({ 'package.json': stampOf('package.json') }), await infoDir({ 'package.json': '1:2' }), await infoDir({ 'cli/gone.ts': '1:2' })];
    try {
      expect(staleInput(dirs[0])).toBeUndefined();
      expect(staleInput(dirs[1])).toBe('package.json');
      expect(staleInput(dirs[2])).toBe('cli/gone.ts');
      expect(staleInput(join(tmpdir(), 'no-such-aegis-dist'))).toBe('(no build)');
    } finally {
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  });
});
