// Code scans end to end: a real server with its in-process worker, a git repository on disk
// (AEGIS_ALLOW_LOCAL_SOURCES), scans started over HTTP, findings read back, rescans that
// deduplicate, a fix that shows up as fixed in the diff, and an uploaded archive.
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAegis } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { sarifValidator } from '../support/sarif.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let t: TestServer;
let repo: string;

const git = (...args: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { stdio: 'pipe' }).toString();

beforeAll(async () => {
  t = await startTestServer({ allowLocalSources: true, rateLimitPerMinute: 100_000 });
  repo = await mkdtemp(join(tmpdir(), 'aegis-scan-repo-'));
  await cp('test/fixtures/scanners/secrets/repo', join(repo, 'secrets'), { recursive: true });
  await cp('test/fixtures/scanners/sca/repo', join(repo, 'deps'), { recursive: true });
  await cp('test/fixtures/scanners/sast', join(repo, 'app'), { recursive: true });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  // Advisories arrive the way a user imports them: the CLI, through the API.
  const imported = await runAegis(['advisories', 'import', 'test/fixtures/scanners/sca/advisories'], { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey });
  expect(imported.code, imported.stderr).toBe(0);
  expect(imported.stdout).toMatch(/imported: 34 new, 0 updated, 0 unchanged/);
}, 60_000);
afterAll(async () => {
  await t?.close();
  if (repo) await rm(repo, { recursive: true, force: true });
});

interface Scan {
  id: string;
  status: string;
  summary: Record<string, number>;
  error: string | null;
}

async function runScan(type: 'secrets' | 'sca' | 'sast', body: unknown = { target: `file://${repo}` }): Promise<Scan> {
  const started = await t.call('POST', `/api/v1/${type}/scans`, { body });
  expect(started.status, started.text).toBe(202);
  expect(started.body.status).toBe('queued');
  let scan: Scan = started.body;
  await eventually(async () => {
    scan = (await t.call('GET', `/api/v1/scans/${started.body.id}`)).body;
    return ['completed', 'failed', 'canceled'].includes(scan.status);
  }, 60_000, 100);
  expect(scan.status, scan.error ?? '').toBe('completed');
  return scan;
}

async function findingsOf(scanId: string): Promise<{ id: string; fingerprint?: string; rule_id: string; location: { path: string }; status: string; evidence: string; details: Record<string, unknown> }[]> {
  const res = await t.call('GET', `/api/v1/vulnerabilities?scan_id=${scanId}&limit=200`);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('secrets scans', () => {
  it('find the planted secrets, deduplicate on a rescan and mark a removed one fixed', async () => {
    const first = await runScan('secrets');
    const found = await findingsOf(first.id);
    expect(found.length).toBeGreaterThan(50);
    expect(first.summary.total).toBe(found.length);
    // Stored without the secrets themselves.
    const planted = (await readFile(join(repo, 'secrets/src/github.js'), 'utf8')).match(/gh[pousr]_[A-Za-z0-9]{36}/g) ?? [];
    expect(planted.length).toBeGreaterThan(0);
    const stored = JSON.stringify(found);
    for (const secret of planted) expect(stored).not.toContain(secret);

    const second = await runScan('secrets');
    const again = await findingsOf(second.id);
    expect(again.map((f) => f.id).sort()).toEqual(found.map((f) => f.id).sort());
    const unchangedDiff = (await t.call('GET', `/api/v1/scans/${second.id}/diff`)).body;
    expect(unchangedDiff).toMatchObject({ baseline_id: first.id, counts: { new: 0, fixed: 0, unchanged: found.length } });

    const removed = found.filter((f) => f.location.path === 'secrets/src/github.js');
    expect(removed.length).toBeGreaterThan(0);
    await rm(join(repo, 'secrets/src/github.js'));
    git('commit', '-q', '-am', 'remove the leaked tokens');
    const third = await runScan('secrets');
    const diff = (await t.call('GET', `/api/v1/scans/${third.id}/diff`)).body;
    expect(diff.baseline_id).toBe(second.id);
    expect(diff.fixed.map((f: { id: string }) => f.id).sort()).toEqual(removed.map((f) => f.id).sort());
    expect(diff.counts.new).toBe(0);
    const fixed = (await t.call('GET', `/api/v1/vulnerabilities/${removed[0]!.id}`)).body;
    expect(fixed).toMatchObject({ status: 'resolved', resolution: 'fixed' });
    expect(fixed.fixed_at).not.toBeNull();

    const coverage = (await t.call('GET', `/api/v1/scans/${third.id}/coverage`)).body;
    expect(coverage.files_scanned).toBeGreaterThan(10);
    expect(coverage.complete).toBe(true);
  }, 120_000);
});

describe('advisories', () => {
  it('refuse an invalid record with 422, and a re-import changes nothing', async () => {
    const bad = await t.call('POST', '/api/v1/advisories', { body: { advisories: [{ id: 'X-1' }] } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.records[0]).toMatchObject({ index: 0, id: 'X-1' });
    const reimport = await runAegis(['advisories', 'import', 'test/fixtures/scanners/sca/advisories'], { AEGIS_API_URL: t.url, AEGIS_API_KEY: t.adminKey });
    expect(reimport.stdout).toMatch(/imported: 0 new, 0 updated, 34 unchanged/);
  }, 60_000);
});

describe('SCA scans', () => {
  it('name the vulnerable packages with their advisories and fixed versions', async () => {
    const scan = await runScan('sca');
    const found = await findingsOf(scan.id);
    expect(found.length).toBeGreaterThan(10);
    const expected = (JSON.parse(await readFile('test/fixtures/scanners/sca/expected.json', 'utf8')) as { findings: unknown[] }).findings;
    expect(found.length).toBe(expected.length);
    for (const f of found) {
      expect(f.location).toMatchObject({ kind: 'package' });
      expect(f.details).toHaveProperty('advisory_ids');
    }
  }, 60_000);
});

describe('SAST scans', () => {
  it('find the injection flows of the fixture apps, in a worker thread', async () => {
    const scan = await runScan('sast');
    // The secrets fixture's hard-coded credentials are found too; the apps are what this checks.
    const found = ((await findingsOf(scan.id)) as unknown as { cwe: string | null; location: { path: string; line: number } }[]).filter((f) => f.location.path.startsWith('app/'));
    expect(found.length).toBeGreaterThan(20);
    const cwes = new Set(found.map((f) => f.cwe));
    for (const cwe of ['CWE-89', 'CWE-78', 'CWE-22', 'CWE-601', 'CWE-79', 'CWE-918']) expect(cwes, cwe).toContain(cwe);
  }, 60_000);
});

describe('triage', () => {
  it('allows the documented transitions and refuses others with 409', async () => {
    const scan = await runScan('sca');
    const [finding] = await findingsOf(scan.id);
    const ack = await t.call('PATCH', `/api/v1/vulnerabilities/${finding!.id}`, { body: { status: 'acknowledged', notes: 'tracked in JIRA-1' } });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ status: 'acknowledged', notes: 'tracked in JIRA-1' });
    const resolved = await t.call('PATCH', `/api/v1/vulnerabilities/${finding!.id}`, { body: { status: 'resolved' } });
    expect(resolved.body).toMatchObject({ status: 'resolved', resolution: 'manual' });
    const refused = await t.call('PATCH', `/api/v1/vulnerabilities/${finding!.id}`, { body: { status: 'accepted_risk' } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details.allowed).toEqual(['open']);
    // Triage survives a rescan; a manual resolution is not reopened by seeing the finding again.
    await runScan('sca');
    expect((await t.call('GET', `/api/v1/vulnerabilities/${finding!.id}`)).body).toMatchObject({ status: 'resolved', resolution: 'manual', notes: 'tracked in JIRA-1' });
  }, 60_000);
});

describe('sources', () => {
  it('scans an uploaded tar.gz archive', async () => {
    const archive = join(tmpdir(), `aegis-upload-${process.pid}.tar.gz`);
    execFileSync('tar', ['-czf', archive, '-C', repo, 'secrets']);
    try {
      const res = await t.call('POST', '/api/v1/secrets/scans', { raw: await readFile(archive), headers: { 'content-type': 'application/gzip' } });
      expect(res.status, res.text).toBe(202);
      expect(res.body.target).toMatch(/^archive:[0-9a-f]{64}$/);
      await eventually(async () => (await t.call('GET', `/api/v1/scans/${res.body.id}`)).body.status === 'completed', 60_000, 100);
      expect((await findingsOf(res.body.id)).length).toBeGreaterThan(10);
    } finally {
      await rm(archive, { force: true });
    }
  }, 60_000);

  it('refuses local paths unless allowed, transport helpers and option-like URLs, in the error envelope', async () => {
    for (const target of ['ext::sh -c touch% /tmp/pwned', '--upload-pack=touch /tmp/x', 'not a url']) {
      const res = await t.call('POST', '/api/v1/sast/scans', { body: { target } });
      expect(res.status, target).toBe(422);
      expect(res.body.error.details.fields[0].field).toBe('target');
    }
    const other = await startTestServer({ allowLocalSources: false });
    try {
      const res = await other.call('POST', '/api/v1/secrets/scans', { body: { target: `file://${repo}` } });
      expect(res.status).toBe(422);
    } finally {
      await other.close();
    }
    const notArchive = await t.call('POST', '/api/v1/secrets/scans', { raw: Buffer.from('plain text'), headers: { 'content-type': 'application/zip' } });
    expect(notArchive.status).toBe(422);
  }, 60_000);

  it('keeps a token in the repository URL sealed: never shown, never stored in clear', async () => {
    // A host that never resolves (.invalid): a loopback literal is refused before any of this (AEGIS_ALLOW_PRIVATE_TARGETS).
    const started = await t.call('POST', '/api/v1/sast/scans', { body: { target: 'https://ci:s3cr3t-t0ken@git.invalid:9/o/r.git', config: { ref: 'main' } } });
    expect(started.status, started.text).toBe(202);
    expect(started.text).not.toContain('s3cr3t-t0ken');
    expect(started.body.source).toMatchObject({ kind: 'git', url: 'https://git.invalid:9/o/r.git', ref: 'main' });
    const row = await t.server.database.db.selectFrom('scans').select(['source', 'target']).where('id', '=', started.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('s3cr3t-t0ken');
    expect(row.source).toHaveProperty('sealed_url');
    const audit = await t.call('GET', '/api/v1/audit-log?action=scan.created');
    expect(audit.text).not.toContain('s3cr3t-t0ken');
    await t.call('DELETE', `/api/v1/scans/${started.body.id}`);
  });

  it('cancels a queued scan at once and answers 409 for one that has ended', async () => {
    const started = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `file://${repo}` } });
    const canceled = await t.call('DELETE', `/api/v1/scans/${started.body.id}`);
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    const again = await t.call('DELETE', `/api/v1/scans/${started.body.id}`);
    expect(again.status).toBe(409);
  });
});

describe('scheduled scans', () => {
  it('a due schedule starts one scan, which runs to completion, and next_run_at moves on', async () => {
    const created = await t.call('POST', '/api/v1/scan-schedules', { body: { name: 'nightly secrets', scan_type: 'secrets', target: `file://${repo}`, cron: '0 3 * * *' } });
    expect(created.status, created.text).toBe(201);
    // Due an hour ago, as after downtime: it runs once, not once per missed time.
    await t.server.database.db.updateTable('scan_schedules').set({ next_run_at: new Date(Date.now() - 3_600_000) }).where('id', '=', created.body.id).execute();
    let scans: { id: string; status: string }[] = [];
    await eventually(async () => {
      scans = (await t.call('GET', `/api/v1/scans?schedule_id=${created.body.id}`)).body.data;
      return scans.length === 1 && scans[0]!.status === 'completed';
    }, 60_000, 200);
    const schedule = (await t.call('GET', `/api/v1/scan-schedules/${created.body.id}`)).body;
    expect(Date.parse(schedule.next_run_at)).toBeGreaterThan(Date.now());
    expect((await t.call('GET', `/api/v1/scans?schedule_id=${created.body.id}`)).body.data).toHaveLength(1);
  }, 90_000);
});

describe('cancellation', () => {
  it('stops a running scan within 2 s: its job ends canceled and the worker takes the next scan', async () => {
    const big = await mkdtemp(join(tmpdir(), 'aegis-scan-big-'));
    try {
      // Enough code that a SAST scan runs for seconds on this machine.
      const body = Array.from({ length: 400 }, (_, i) => `app.get('/r${i}', (req, res) => { const q = 'select * from t where a = ' + req.query.a${i}; db.query(q); res.send(String(${i})); });`).join('\n');
      await Promise.all(Array.from({ length: 600 }, (_, i) => writeFile(join(big, `m${i}.js`), `${body}\n`)));
      execFileSync('git', ['-C', big, 'init', '-q']);
      execFileSync('git', ['-C', big, 'add', '-A']);
      execFileSync('git', ['-C', big, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'big']);
      const started = await t.call('POST', '/api/v1/sast/scans', { body: { target: `file://${big}` } });
      await eventually(async () => (await t.call('GET', `/api/v1/scans/${started.body.id}`)).body.status === 'running', 30_000, 20);
      const canceled = await t.call('DELETE', `/api/v1/scans/${started.body.id}`);
      expect(canceled.body.status).toBe('canceled');
      const row = await t.server.database.db.selectFrom('scans').select('job_id').where('id', '=', started.body.id).executeTakeFirstOrThrow();
      await eventually(async () => {
        const job = await t.server.database.db.selectFrom('jobs').select('state').where('id', '=', row.job_id!).executeTakeFirstOrThrow();
        return job.state === 'canceled';
      }, 2_000, 20);
      expect((await t.call('GET', `/api/v1/scans/${started.body.id}`)).body).toMatchObject({ status: 'canceled' });
      // The worker is free again.
      await runScan('sca');
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('SARIF', () => {
  it('GET /scans/:id/sarif is a valid SARIF 2.1.0 log of the findings, scoped to the organisation', async () => {
    const scan = await runScan('secrets');
    const sarif = await t.call('GET', `/api/v1/scans/${scan.id}/sarif`);
    expect(sarif.status, sarif.text).toBe(200);
    const validate = sarifValidator();
    expect(validate(sarif.body), JSON.stringify(validate.errors)).toBe(true);
    const results = sarif.body.runs[0].results as { partialFingerprints: Record<string, string> }[];
    expect(results.length).toBe((await findingsOf(scan.id)).length);
    expect(results.every((r) => typeof r.partialFingerprints.primaryLocationLineHash === 'string')).toBe(true);
    const stranger = await keyInOrganization(t, 'sarif-stranger', ['scans:read']);
    expect((await t.call('GET', `/api/v1/scans/${scan.id}/sarif`, { key: stranger })).status).toBe(404);
  });
});
