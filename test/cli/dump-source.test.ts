// `aegis dump --source NAME` then `aegis plan DIR` with no flag: the dump's aegis.yaml names the
// source, which plan resolves before the git remote and the directory name.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAegis } from '../support/cli.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/aegis-process.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let dir: string;
let env: Record<string, string>;
const SOURCE = 'git.example.com/acme/dumped';

beforeAll(async () => {
  t = await startTestServer({ rateLimitPerMinute: 1_000_000 });
  dir = mkdtempSync(join(tmpdir(), 'aegis-dump-source-'));
  cpSync('examples/gitops', join(dir, 'repo'), { recursive: true });
  env = { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey };
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

it('dump --source writes that source into aegis.yaml, and a plan of the dump needs no --source', async () => {
  const applied = await runAegis(['apply', join(dir, 'repo'), '--source', SOURCE, '--yes'], env);
  expect(applied.code, applied.stderr).toBe(0);
  const out = join(dir, 'dumped');
  const dumped = await runAegis(['dump', '--source', SOURCE, '--out', out], env);
  expect(dumped.code, dumped.stderr).toBe(0);
  expect(dumped.stdout).toMatch(/^wrote \d+ file\(s\) to /);
  expect(readFileSync(join(out, 'aegis.yaml'), 'utf8')).toContain(SOURCE);
  const planned = await runAegis(['plan', out], env);
  expect(planned.code, planned.stdout + planned.stderr).toBe(0);
  // AEGIS_SOURCE, when set, comes before the project file: that source owns none of these objects.
  const other = await runAegis(['plan', out, '--json'], { ...env, AEGIS_SOURCE: 'someone-else' });
  expect(other.code).not.toBe(0);
  expect((JSON.parse(other.stdout) as { source: string }).source).toBe('someone-else');
  // Four `aegis` processes, one after the other.
}, PROCESS_TEST_TIMEOUT_MS);
