// GET /api/v1/scans/:id/diff and /coverage as documented: their answers have response schemas in
// the OpenAPI document (the dashboard's typed client reads them), and what the schema serialises
// keeps every field a client needs — findings in full, coverage figures and skipped files by type.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/gateway.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let repo: string;

beforeAll(async () => {
  t = await startTestServer({ allowLocalSources: true, rateLimitPerMinute: 100_000 });
  repo = await mkdtemp(join(tmpdir(), 'aegis-diff-coverage-'));
  await writeFile(join(repo, '.env'), 'AWS_ACCESS_KEY_ID=AKIA4VISCG5BI2EIRQO7\n');
  await writeFile(join(repo, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  execFileSync('git', ['-C', repo, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'init', '-q', '-b', 'main'], { stdio: 'pipe' });
  execFileSync('git', ['-C', repo, 'add', '-A'], { stdio: 'pipe' });
  execFileSync('git', ['-C', repo, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'x'], { stdio: 'pipe' });
}, 60_000);
afterAll(async () => {
  await t?.close();
  if (repo) await rm(repo, { recursive: true, force: true });
});

describe('scan diff and coverage', () => {
  it('are documented with response schemas', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json')).body;
    const diff = doc.paths['/api/v1/scans/{id}/diff'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(diff.properties)).toEqual(expect.arrayContaining(['scan_id', 'baseline_id', 'counts', 'new', 'fixed', 'unchanged']));
    const coverage = doc.paths['/api/v1/scans/{id}/coverage'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(coverage.properties)).toEqual(expect.arrayContaining(['files_scanned', 'skipped', 'skipped_by_type', 'requests', 'items', 'notes', 'complete']));
  });

  it('answer with the findings and figures of a completed scan', async () => {
    const started = await t.call('POST', '/api/v1/secrets/scans', { body: { target: repo } });
    expect(started.status, started.text).toBe(202);
    const id = started.body.id as string;
    // Before it completes: coverage says so.
    const early = await t.call('GET', `/api/v1/scans/${id}/coverage`);
    expect(early.status).toBe(200);
    expect(early.body.scan_id).toBe(id);
    await eventually(async () => (await t.call('GET', `/api/v1/scans/${id}`)).body.status === 'completed', 60_000, 100);

    const diff = await t.call('GET', `/api/v1/scans/${id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ scan_id: id, baseline_id: null, fixed: [], unchanged: [] });
    expect(diff.body.counts.new).toBeGreaterThanOrEqual(1);
    expect(diff.body.new[0]).toMatchObject({ scan_type: 'secrets', severity: expect.any(String), location: { path: '.env' }, first_scan_id: id });

    const coverage = await t.call('GET', `/api/v1/scans/${id}/coverage`);
    expect(coverage.body).toMatchObject({ scan_id: id, status: 'completed', complete: true, notes: expect.any(Array) });
    expect(coverage.body.files_scanned).toBeGreaterThanOrEqual(1);
    expect(coverage.body.bytes_scanned).toBeGreaterThan(0);
    expect(coverage.body.requests).toBeUndefined();
    for (const skipped of coverage.body.skipped) expect(skipped).toEqual({ path: expect.any(String), reason: expect.any(String) });
  }, 90_000);
});
