// The SCA scanner end to end: a fixture repository with one lockfile per format and planted
// vulnerable versions, scanned against fixture OSV records; precision and recall are measured
// against expected.json. Then the tree-walking rules (symlinks, skipped directories, includes that
// leave the root) and cancellation.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding, ScanOutput } from '../../scanners/types.ts';
import { loadOsvDirectory, MemoryAdvisorySource, type AdvisorySource } from '../../scanners/sca/advisory-source.ts';
import { findingFingerprint, scanSca, type ScaScanOutput } from '../../scanners/sca/scan.ts';
import { parseOsvRecord, type OsvRecord } from '../../scanners/sca/osv.ts';

const FIXTURES = resolve('test/fixtures/scanners/sca');
const signal = (): AbortSignal => new AbortController().signal;

interface Expected {
  advisory: string;
  ecosystem: string;
  package: string;
  version: string;
  lockfile: string;
}

function key(f: Finding): string {
  const loc = f.location;
  if (loc.kind !== 'package') throw new Error('not a package finding');
  return `${f.rule_id} ${loc.ecosystem} ${loc.name}@${loc.version} ${loc.path}`;
}

let source: MemoryAdvisorySource;
beforeAll(async () => {
  const loaded = await loadOsvDirectory(join(FIXTURES, 'advisories'));
  expect(loaded.errors).toEqual([]);
  source = new MemoryAdvisorySource(loaded.records);
});

describe('scan of the fixture repository', () => {
  let out: ScaScanOutput;
  beforeAll(async () => {
    out = await scanSca({ root: join(FIXTURES, 'repo'), signal: signal() }, source);
  });

  it('finds the planted vulnerable packages: precision and recall against expected.json', () => {
    const expected = (JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as { findings: Expected[] }).findings;
    const want = new Set(expected.map((e) => `${e.advisory} ${e.ecosystem} ${e.package}@${e.version} ${e.lockfile}`));
    const got = new Set(out.findings.map(key));
    const truePositives = [...got].filter((k) => want.has(k)).length;
    const precision = got.size === 0 ? 0 : truePositives / got.size;
    const recall = truePositives / want.size;
    console.log(`SCA fixture: ${got.size} findings, ${want.size} expected, ${truePositives} true positives; precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`);
    expect({ falsePositives: [...got].filter((k) => !want.has(k)), falseNegatives: [...want].filter((k) => !got.has(k)) }).toEqual({ falsePositives: [], falseNegatives: [] });
    expect(precision).toBe(1);
    expect(recall).toBe(1);
    expect(out.findings).toHaveLength(got.size);
  });

  it('scans every lockfile format and nothing under vendor/', () => {
    expect(out.lockfiles.map((l) => `${l.kind} ${l.path}`)).toEqual([
      'go.mod go-service/go.mod',
      'go.sum go-service/go.sum',
      'package-lock legacy/package-lock.json',
      'pnpm pnpm-app/pnpm-lock.yaml',
      'poetry python/poetry.lock',
      'requirements python/requirements-base.txt',
      'requirements python/requirements.txt',
      'cargo rust/Cargo.lock',
      'package-lock web/package-lock.json',
      'yarn yarn-berry/yarn.lock',
      'yarn yarn-classic/yarn.lock',
    ]);
    expect(out.coverage.files_scanned).toBe(11);
    expect(out.coverage.bytes_scanned).toBeGreaterThan(10_000);
  });

  it('lists what it could not use in coverage', () => {
    expect(out.coverage.skipped).toEqual(
      expect.arrayContaining([
        { path: 'python/requirements.txt:3', reason: 'excluded' },
        { path: 'python/requirements.txt:13', reason: 'unsupported' },
        { path: 'python/requirements.txt:14', reason: 'unsupported' },
        { path: 'go-service/go.mod:12', reason: 'excluded' },
        { path: 'web/package-lock.json', reason: 'unsupported' },
        { path: 'rust/Cargo.lock', reason: 'unsupported' },
      ]),
    );
    expect(out.issues.find((i) => i.path === 'python/requirements.txt' && i.line === 13)?.message).toMatch(/flask: not pinned/);
  });

  it('builds findings with the contract fields', () => {
    const f = out.findings.find((x) => x.rule_id === 'GHSA-35jh-r3h4-6jhm' && x.evidence === 'lodash@4.17.20 in web/package-lock.json')!;
    expect(f).toEqual({
      rule_id: 'GHSA-35jh-r3h4-6jhm',
      title: 'Command Injection in lodash',
      severity: 'high',
      cwe: 'CWE-77',
      location: { kind: 'package', path: 'web/package-lock.json', ecosystem: 'npm', name: 'lodash', version: '4.17.20' },
      evidence: 'lodash@4.17.20 in web/package-lock.json',
      fingerprint: findingFingerprint('GHSA-35jh-r3h4-6jhm', { ecosystem: 'npm', name: 'lodash', version: '4.17.20', path: 'web/package-lock.json' }),
      details: { aliases: ['CVE-2021-23337'], fixed_version: '4.17.21', advisory_ids: ['GHSA-35jh-r3h4-6jhm', 'CVE-2021-23337'], severity_source: 'cvss_v3', cvss_score: 7.2, introduced: '0', direct: true, dev: false },
    });
    expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const byKey = new Map(out.findings.map((x) => [key(x), x]));
    // Go fixes are shown as go.mod writes versions; records without a fix have none.
    expect(byKey.get('GO-2020-0012 Go golang.org/x/crypto@v0.0.0-20200124225646-8b5121be2f68 go-service/go.mod')?.details.fixed_version).toBe('v0.0.0-20200220183623-bac4c82f6975');
    expect(byKey.get('GHSA-q4v7-4rhw-9hqm npm node-serialize@0.0.4 legacy/package-lock.json')?.details.fixed_version).toBeNull();
    expect(byKey.get('GHSA-6fc8-4gx4-v693 npm ws@7.4.5 yarn-classic/yarn.lock')?.details.introduced).toBe('7.0.0');
    // Severity from a CVSS v4 vector is not computed: GitHub's rating applies. The Go database rates nothing.
    expect(byKey.get('GHSA-pjwm-rvh2-c87w npm ua-parser-js@0.7.29 web/package-lock.json')?.severity).toBe('critical');
    expect(byKey.get('GO-2020-0015 Go golang.org/x/text@v0.3.2 go-service/go.mod')?.details.severity_source).toBe('default');
    // Sorted most severe first.
    const ranks = out.findings.map((x) => ['info', 'low', 'medium', 'high', 'critical'].indexOf(x.severity));
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
  });

  it('is deterministic and its output is a ScanOutput', async () => {
    const again: ScanOutput = await scanSca({ root: join(FIXTURES, 'repo'), signal: signal() }, source);
    expect(again.findings.map((f) => f.fingerprint)).toEqual(out.findings.map((f) => f.fingerprint));
    expect(new Set(out.findings.map((f) => f.fingerprint)).size).toBe(out.findings.length);
  });
});

describe('tree walking', () => {
  const root = mkdtempSync(join(tmpdir(), 'aegis-sca-scan-'));
  const outside = mkdtempSync(join(tmpdir(), 'aegis-sca-outside-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const lock = (name: string, version: string): string => JSON.stringify({ lockfileVersion: 3, packages: { '': {}, [`node_modules/${name}`]: { version } } });

  beforeAll(() => {
    writeFileSync(join(outside, 'package-lock.json'), lock('lodash', '4.17.1'));
    writeFileSync(join(outside, 'secret.txt'), 'django==3.2.11\n');
    mkdirSync(join(outside, 'dir'));
    writeFileSync(join(outside, 'dir', 'requirements.txt'), 'django==3.2.11\n');
    mkdirSync(join(root, 'app', 'node_modules', 'dep'), { recursive: true });
    mkdirSync(join(root, '.git'), { recursive: true });
    writeFileSync(join(root, 'app', 'package-lock.json'), lock('lodash', '4.17.20'));
    writeFileSync(join(root, 'app', 'node_modules', 'dep', 'package-lock.json'), lock('lodash', '4.17.2'));
    writeFileSync(join(root, '.git', 'package-lock.json'), lock('lodash', '4.17.3'));
    symlinkSync(outside, join(root, 'linked-dir'));
    symlinkSync(join(outside, 'package-lock.json'), join(root, 'package-lock.json'));
    symlinkSync(join(outside, 'dir'), join(root, 'app', 'via-link'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'app', 'linked.txt'));
    writeFileSync(join(root, 'app', 'requirements.txt'), ['-r linked.txt', '-r via-link/requirements.txt', '-r missing.txt', '-r ../../etc/passwd', 'requests==2.25.1'].join('\n'));
    writeFileSync(join(root, 'app', 'yarn.lock'), 'x'.repeat(2000));
  });

  it('follows no symlink, skips node_modules and .git, and never reads outside the root', async () => {
    const out = await scanSca({ root, signal: signal() }, source, { maxLockfileBytes: 1500 });
    expect(out.lockfiles.map((l) => l.path).sort()).toEqual(['app/package-lock.json', 'app/requirements.txt']);
    expect(out.findings.map(key).sort()).toEqual(['GHSA-35jh-r3h4-6jhm npm lodash@4.17.20 app/package-lock.json', 'GHSA-j8r2-6x86-q33q PyPI requests@2.25.1 app/requirements.txt']);
    expect(out.coverage.skipped).toEqual(
      expect.arrayContaining([
        { path: 'app/linked.txt', reason: 'excluded' },
        { path: 'app/via-link/requirements.txt', reason: 'excluded' },
        { path: 'app/missing.txt', reason: 'unreadable' },
        { path: 'app/requirements.txt:4', reason: 'excluded' },
        { path: 'app/yarn.lock', reason: 'too_large' },
      ]),
    );
  });
});

describe('cancellation', () => {
  const root = join(FIXTURES, 'repo');

  it('rejects at once when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(scanSca({ root, signal: ac.signal }, source)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('stops between stages when canceled mid-scan, without evaluating further', async () => {
    const ac = new AbortController();
    let queried = 0;
    const aborting: AdvisorySource = {
      async forPackages(keys) {
        queried++;
        ac.abort();
        return source.forPackages(keys);
      },
    };
    await expect(scanSca({ root, signal: ac.signal }, aborting, { batchSize: 5 })).rejects.toMatchObject({ name: 'AbortError' });
    expect(queried).toBe(1);
  });

  it('stops during parsing when canceled from a progress callback', async () => {
    const ac = new AbortController();
    const seen: number[] = [];
    const run = scanSca({ root, signal: ac.signal, onProgress: (f) => (seen.push(f), ac.abort()) }, source);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual([0.1]);
  });

  it('reports progress ending at 1', async () => {
    const seen: number[] = [];
    await scanSca({ root, signal: signal(), onProgress: (f) => seen.push(f) }, source);
    expect(seen.at(-1)).toBe(1);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });
});

describe('advisory records that need care', () => {
  it("takes a Go advisory's missing severity from the GHSA record naming the same vulnerability", async () => {
    const root = mkdtempSync(join(tmpdir(), 'aegis-sca-go-'));
    try {
      writeFileSync(join(root, 'go.mod'), 'module example.com/app\n\ngo 1.21\n\nrequire golang.org/x/net v0.10.0\n');
      writeFileSync(join(root, 'go.sum'), 'golang.org/x/net v0.10.0 h1:abc=\ngolang.org/x/net v0.10.0/go.mod h1:def=\n');
      const affected = [{ package: { ecosystem: 'Go', name: 'golang.org/x/net' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '0.17.0' }] }] }];
      const parse = (input: Record<string, unknown>): OsvRecord => {
        const r = parseOsvRecord({ modified: '2024-01-01T00:00:00Z', summary: 'HTTP/2 rapid reset', affected, ...input });
        if (!r.ok) throw new Error('invalid record');
        return r.record;
      };
      const go = parse({ id: 'GO-2023-2102', aliases: ['CVE-2023-39325', 'GHSA-4374-p667-p6c8'] });
      const ghsa = parse({ id: 'GHSA-4374-p667-p6c8', aliases: ['CVE-2023-39325'], severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H' }] });
      const unrelated = parse({ id: 'GO-2099-0001', aliases: ['CVE-2099-0001'] });
      const out = await scanSca({ root, signal: signal() }, new MemoryAdvisorySource([go, ghsa, unrelated]));
      const byId = new Map(out.findings.map((f) => [f.rule_id, f]));
      expect(byId.get('GO-2023-2102')).toMatchObject({ severity: 'high', details: { severity_source: 'alias', severity_from: 'GHSA-4374-p667-p6c8', cvss_score: 7.5 } });
      expect(byId.get('GHSA-4374-p667-p6c8')).toMatchObject({ severity: 'high', details: { severity_source: 'cvss_v3' } });
      // Nothing names the same vulnerability: the default stays, and says so.
      expect(byId.get('GO-2099-0001')).toMatchObject({ severity: 'medium', details: { severity_source: 'default' } });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('matches records by the PyPI-normalised name but reports the lockfile spelling', async () => {
    const root = mkdtempSync(join(tmpdir(), 'aegis-sca-py-'));
    try {
      writeFileSync(join(root, 'requirements.txt'), 'Flask_Cors==3.0.8\n');
      const r = parseOsvRecord({ id: 'X-1', modified: '2024-01-01T00:00:00Z', summary: 'demo', affected: [{ package: { ecosystem: 'PyPI', name: 'flask-cors' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '3.0.9' }] }] }] });
      if (!r.ok) throw new Error('invalid');
      const records: OsvRecord[] = [r.record];
      const out = await scanSca({ root, signal: signal() }, new MemoryAdvisorySource(records));
      expect(out.findings.map(key)).toEqual(['X-1 PyPI Flask_Cors@3.0.8 requirements.txt']);
      expect(out.findings[0]?.details.fixed_version).toBe('3.0.9');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
