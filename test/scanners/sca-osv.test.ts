// OSV record validation, the evaluation algorithm, fixed versions and severity.
import { describe, expect, it } from 'vitest';
import { cvss3BaseScore, severityFromScore } from '../../scanners/sca/cvss.ts';
import { fixedVersion, fixedVersions, isAffected, matchAffected, parseOsvRecord, recordCwe, recordSeverity, type OsvEvent, type OsvRecord } from '../../scanners/sca/osv.ts';

type EventSpec = [keyof OsvEvent, string];

function record(ecosystem: string, name: string, ranges: EventSpec[][], extra: Record<string, unknown> = {}, type = 'ECOSYSTEM'): OsvRecord {
  const parsed = parseOsvRecord({
    id: 'TEST-1',
    modified: '2024-01-01T00:00:00Z',
    affected: [{ package: { ecosystem, name }, ranges: ranges.map((events) => ({ type, events: events.map(([k, v]) => ({ [k]: v })) })) }],
    ...extra,
  });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.record;
}

function affectedSet(rec: OsvRecord, ecosystem: string, name: string, versions: string[]): string[] {
  return versions.filter((v) => isAffected(rec, ecosystem, name, v));
}

describe('OSV evaluation', () => {
  it('treats introduced 0 as the beginning and fixed as exclusive', () => {
    const rec = record('npm', 'lodash', [[['introduced', '0'], ['fixed', '4.17.21']]]);
    expect(affectedSet(rec, 'npm', 'lodash', ['0.0.1', '3.0.0', '4.17.20', '4.17.21-beta.1', '4.17.21', '4.17.22'])).toEqual(['0.0.1', '3.0.0', '4.17.20', '4.17.21-beta.1']);
  });

  it('keeps pre-releases of the fixed version affected and those after it unaffected', () => {
    const rec = record('npm', '@babel/traverse', [
      [['introduced', '0'], ['fixed', '7.23.2']],
      [['introduced', '8.0.0-alpha.0'], ['fixed', '8.0.0-alpha.4']],
    ], {}, 'SEMVER');
    expect(affectedSet(rec, 'npm', '@babel/traverse', ['7.23.1', '7.23.2', '8.0.0-alpha.0', '8.0.0-alpha.3', '8.0.0-alpha.4', '8.0.0-alpha.10', '8.0.0-beta.1', '8.0.0'])).toEqual(['7.23.1', '8.0.0-alpha.0', '8.0.0-alpha.3']);
  });

  it('treats last_affected as inclusive and respects an introduced later than 0', () => {
    const rec = record('npm', 'pkg', [[['introduced', '1.0.0'], ['last_affected', '1.4.2']]]);
    expect(affectedSet(rec, 'npm', 'pkg', ['0.9.9', '1.0.0-rc.1', '1.0.0', '1.4.2', '1.4.3-0', '1.4.3'])).toEqual(['1.0.0', '1.4.2']);
  });

  it('walks several introduced/fixed pairs in one range, sorted whatever order the record lists them in', () => {
    const rec = record('npm', 'minimist', [[['fixed', '1.2.3'], ['introduced', '1.0.0'], ['fixed', '0.2.1'], ['introduced', '0']]]);
    expect(affectedSet(rec, 'npm', 'minimist', ['0.0.8', '0.2.1', '0.9.0', '1.0.0', '1.2.2', '1.2.3'])).toEqual(['0.0.8', '1.0.0', '1.2.2']);
  });

  it('matches any of several ranges and reports the introduced event that applied', () => {
    const rec = record('PyPI', 'Django', [[['introduced', '2.2'], ['fixed', '2.2.28']], [['introduced', '3.2'], ['fixed', '3.2.13']]]);
    expect(affectedSet(rec, 'PyPI', 'django', ['2.1', '2.2.27', '2.2.28', '3.0', '3.2.12', '3.2.13'])).toEqual(['2.2.27', '3.2.12']);
    expect(matchAffected(rec, 'PyPI', 'django', '3.2.12')).toEqual({ via: 'range', introduced: '3.2' });
  });

  it('matches explicit versions exactly (and by ecosystem equality), with no range needed', () => {
    const parsed = parseOsvRecord({ id: 'TEST-2', modified: '2024-01-01T00:00:00Z', affected: [{ package: { ecosystem: 'PyPI', name: 'pkg' }, versions: ['1.0', '2.0.post1'] }] });
    if (!parsed.ok) throw new Error('invalid');
    expect(affectedSet(parsed.record, 'PyPI', 'pkg', ['1.0', '1.0.0', '1.1', '2.0', '2.0.post1', '2.0-1'])).toEqual(['1.0', '1.0.0', '2.0.post1', '2.0-1']);
    expect(matchAffected(parsed.record, 'PyPI', 'pkg', '1.0')).toEqual({ via: 'versions' });
  });

  it('orders PyPI events by PEP 440: dev < pre < release < post, epochs above all', () => {
    const rec = record('PyPI', 'pkg', [[['introduced', '1.0'], ['fixed', '1.2.post1']]]);
    expect(affectedSet(rec, 'PyPI', 'pkg', ['1.0.dev1', '1.0rc1', '1.0', '1.2', '1.2.post1.dev3', '1.2.post1', '1.2.post2', '1!1.1'])).toEqual(['1.0', '1.2', '1.2.post1.dev3']);
  });

  it('orders Go events with and without v, pseudo-versions and +incompatible', () => {
    const crypto = record('Go', 'golang.org/x/crypto', [[['introduced', '0'], ['fixed', '0.0.0-20200220183623-bac4c82f6975']]], {}, 'SEMVER');
    expect(affectedSet(crypto, 'Go', 'golang.org/x/crypto', ['v0.0.0-20190308221718-c2843e01d9a2', 'v0.0.0-20200220183623-bac4c82f6975', 'v0.0.0-20200302210943-78000ba7a073', 'v0.1.0'])).toEqual(['v0.0.0-20190308221718-c2843e01d9a2']);
    const docker = record('Go', 'github.com/docker/docker', [[['introduced', '0'], ['fixed', '20.10.9']]], {}, 'SEMVER');
    expect(affectedSet(docker, 'Go', 'github.com/docker/docker', ['v20.10.7+incompatible', 'v20.10.9+incompatible', 'v24.0.0+incompatible'])).toEqual(['v20.10.7+incompatible']);
  });

  it('compares Go module paths case-sensitively and PyPI names after PEP 503 normalisation', () => {
    const logrus = record('Go', 'github.com/sirupsen/logrus', [[['introduced', '0']]], {}, 'SEMVER');
    expect(isAffected(logrus, 'Go', 'github.com/sirupsen/logrus', 'v1.0.0')).toBe(true);
    expect(isAffected(logrus, 'Go', 'github.com/Sirupsen/logrus', 'v1.0.0')).toBe(false);
    const py = record('PyPI', 'Flask_Cors', [[['introduced', '0']]]);
    for (const n of ['flask-cors', 'FLASK.CORS', 'flask__cors', 'Flask-CORS']) expect(isAffected(py, 'PyPI', n, '1.0'), n).toBe(true);
    expect(isAffected(py, 'npm', 'flask-cors', '1.0.0')).toBe(false);
  });

  it('honours limit events', () => {
    const rec = record('npm', 'pkg', [[['introduced', '0'], ['limit', '2.0.0']]]);
    expect(affectedSet(rec, 'npm', 'pkg', ['1.0.0', '1.9.9', '2.0.0', '3.0.0'])).toEqual(['1.0.0', '1.9.9']);
    const star = record('npm', 'pkg', [[['introduced', '1.0.0'], ['limit', '*']]]);
    expect(affectedSet(star, 'npm', 'pkg', ['0.1.0', '1.0.0', '99.0.0'])).toEqual(['1.0.0', '99.0.0']);
  });

  it('ignores GIT ranges, withdrawn records and versions it cannot read', () => {
    const git = record('npm', 'pkg', [[['introduced', 'aaaa'], ['fixed', 'bbbb']]], {}, 'GIT');
    expect(isAffected(git, 'npm', 'pkg', '1.0.0')).toBe(false);
    const withdrawn = record('npm', 'pkg', [[['introduced', '0']]], { withdrawn: '2024-02-01T00:00:00Z' });
    expect(isAffected(withdrawn, 'npm', 'pkg', '1.0.0')).toBe(false);
    const rec = record('npm', 'pkg', [[['introduced', '0'], ['fixed', '2.0.0']]]);
    expect(isAffected(rec, 'npm', 'pkg', 'github:user/repo')).toBe(false);
    const broken = record('npm', 'pkg', [[['introduced', '0'], ['fixed', 'not-a-version']]]);
    expect(isAffected(broken, 'npm', 'pkg', '1.0.0')).toBe(false);
  });
});

describe('fixed versions', () => {
  it('returns the smallest fix above the installed version that is not itself affected', () => {
    const rec = record('npm', 'ws', [[['introduced', '5.0.0'], ['fixed', '5.2.3']], [['introduced', '7.0.0'], ['fixed', '7.4.6']]]);
    expect(fixedVersion(rec, 'npm', 'ws', '5.1.0')).toBe('5.2.3');
    expect(fixedVersion(rec, 'npm', 'ws', '7.4.5')).toBe('7.4.6');
    expect(fixedVersions(rec, 'npm', 'ws', '5.1.0')).toEqual(['5.2.3', '7.4.6']);
    // A fix of one range that another range still covers is no fix.
    const overlapping = record('npm', 'pkg', [[['introduced', '0'], ['fixed', '1.5.0']], [['introduced', '1.0.0'], ['fixed', '2.0.0']]]);
    expect(fixedVersion(overlapping, 'npm', 'pkg', '1.2.0')).toBe('2.0.0');
    const unfixed = record('npm', 'node-serialize', [[['introduced', '0'], ['last_affected', '0.0.4']]]);
    expect(fixedVersion(unfixed, 'npm', 'node-serialize', '0.0.4')).toBeNull();
  });
});

describe('OSV validation', () => {
  it('rejects records without id/modified and malformed events', () => {
    expect(parseOsvRecord(null).ok).toBe(false);
    expect(parseOsvRecord({ modified: '2024-01-01T00:00:00Z' }).ok).toBe(false);
    expect(parseOsvRecord({ id: 'X-1', modified: 'yesterday' }).ok).toBe(false);
    expect(parseOsvRecord({ id: '../etc/passwd', modified: '2024-01-01T00:00:00Z' }).ok).toBe(false);
    const twoKeys = parseOsvRecord({ id: 'X-1', modified: '2024-01-01T00:00:00Z', affected: [{ package: { ecosystem: 'npm', name: 'a' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0', fixed: '1.0.0' }] }] }] });
    expect(twoKeys.ok).toBe(false);
    const badType = parseOsvRecord({ id: 'X-1', modified: '2024-01-01T00:00:00Z', affected: [{ package: { ecosystem: 'npm', name: 'a' }, ranges: [{ type: 'RANGE', events: [{ introduced: '0' }] }] }] });
    expect(badType.ok).toBe(false);
    expect(parseOsvRecord({ id: 'X-1', modified: '2024-01-01T00:00:00Z', aliases: 'CVE-1' }).ok).toBe(false);
  });

  it('accepts a minimal record and warns about ranges it cannot evaluate', () => {
    const ok = parseOsvRecord({ id: 'X-1', modified: '2024-01-01T00:00:00.123Z' });
    expect(ok.ok && ok.record.affected).toEqual([]);
    const warned = parseOsvRecord({
      id: 'X-2',
      modified: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem: 'npm', name: 'a' }, ranges: [{ type: 'SEMVER', events: [{ fixed: '1.0.0' }] }, { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: 'one' }] }] }],
    });
    expect(warned.ok).toBe(true);
    if (warned.ok) {
      expect(warned.warnings.some((w) => w.includes('no introduced'))).toBe(true);
      expect(warned.warnings.some((w) => w.includes('cannot be evaluated'))).toBe(true);
    }
  });
});

describe('severity', () => {
  it('computes CVSS v3.1 and v3.0 base scores', () => {
    const cases: [string, number][] = [
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10.0],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', 7.5],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:H/A:H', 9.1],
      ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N', 5.9],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1],
      ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:L/I:L/A:N', 6.4],
      ['CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.8],
      ['CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:C/C:H/I:N/A:N', 6.1],
      ['CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 1.6],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0],
      ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:P/RL:O/RC:C', 9.8],
    ];
    for (const [vector, score] of cases) expect(cvss3BaseScore(vector), vector).toBe(score);
    for (const bad of ['CVSS:2.0/AV:N', 'AV:N/AC:L/Au:N/C:P/I:P/A:P', 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H', 'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:N/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N']) {
      expect(cvss3BaseScore(bad), bad).toBeNull();
    }
  });

  it('maps scores to ratings at the CVSS thresholds', () => {
    expect([10, 9.0, 8.9, 7.0, 6.9, 4.0, 3.9, 0.1, 0].map(severityFromScore)).toEqual(['critical', 'critical', 'high', 'high', 'medium', 'medium', 'low', 'low', 'info']);
  });

  it('prefers a CVSS v3 vector, then database_specific.severity, then medium', () => {
    const base = { id: 'X-1', modified: '2024-01-01T00:00:00Z' };
    const parse = (extra: Record<string, unknown>): OsvRecord => {
      const r = parseOsvRecord({ ...base, ...extra });
      if (!r.ok) throw new Error('invalid');
      return r.record;
    };
    expect(recordSeverity(parse({ severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L' }], database_specific: { severity: 'CRITICAL' } }))).toEqual({ severity: 'medium', score: 5.3, source: 'cvss_v3' });
    expect(recordSeverity(parse({ severity: [{ type: 'CVSS_V4', score: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N' }], database_specific: { severity: 'MODERATE' } }))).toEqual({ severity: 'medium', score: null, source: 'database_specific' });
    expect(recordSeverity(parse({ database_specific: { severity: 'HIGH' } })).severity).toBe('high');
    expect(recordSeverity(parse({ database_specific: { severity: 'low' } })).severity).toBe('low');
    expect(recordSeverity(parse({}))).toEqual({ severity: 'medium', score: null, source: 'default' });
    expect(recordCwe(parse({ database_specific: { cwe_ids: ['CWE-1321', 'CWE-20'] } }))).toBe('CWE-1321');
    expect(recordCwe(parse({ database_specific: { cwe_ids: [] } }))).toBeNull();
  });
});
