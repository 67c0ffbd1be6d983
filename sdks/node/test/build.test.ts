// The package as published: `tsc -p tsconfig.build.json` into a temporary outDir, then the
// emitted ESM imported by Node with no TypeScript loader, through the package's exports map.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(packageDir, '../../node_modules/.bin/tsc');
const work = mkdtempSync(join(tmpdir(), 'aegis-sdk-node-build-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('built package', () => {
  it('compiles to ESM + .d.ts that Node imports through the exports map', () => {
    // node_modules/@aegis/sdk in a scratch project: package.json, README and the built dist/.
    const installed = join(work, 'node_modules/@aegis/sdk');
    mkdirSync(installed, { recursive: true });
    execFileSync(tsc, ['-p', join(packageDir, 'tsconfig.build.json'), '--outDir', join(installed, 'dist')], { stdio: 'pipe' });
    cpSync(join(packageDir, 'package.json'), join(installed, 'package.json'));
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }>; dependencies?: unknown };
    expect(pkg.dependencies).toBeUndefined();
    expect(existsSync(join(installed, pkg.exports['.']!.types))).toBe(true);
    expect(existsSync(join(installed, pkg.exports['.']!.default))).toBe(true);
    // No node: imports and no .ts specifiers in anything that ships.
    const shipped = (readdirSync(join(installed, 'dist'), { recursive: true }) as string[]).filter((f) => f.endsWith('.js'));
    expect(shipped).toContain('transport.js');
    for (const file of shipped) {
      const code = readFileSync(join(installed, 'dist', file), 'utf8');
      expect(code, file).not.toMatch(/from ['"][^'"]+\.ts['"]/);
      expect(code, file).not.toMatch(/from ['"]node:/);
    }

    const script = join(work, 'check.mjs');
    writeFileSync(
      script,
      [
        "import { Aegis, NotFoundError, verifyWebhookSignature, OPERATIONS } from '@aegis/sdk';",
        "const aegis = new Aegis({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9' });",
        "const ok = typeof aegis.shieldSites.list === 'function' && typeof aegis.webhooks.constructEvent === 'function' && typeof verifyWebhookSignature === 'function' && new NotFoundError('x') instanceof Error;",
        'console.log(JSON.stringify({ ok, operations: Object.keys(OPERATIONS).length }));',
      ].join('\n'),
    );
    const out = JSON.parse(execFileSync(process.execPath, [script], { cwd: work, encoding: 'utf8' })) as { ok: boolean; operations: number };
    expect(out.ok).toBe(true);
    expect(out.operations).toBeGreaterThan(100);
  }, 120_000);
});
