// Version order per ecosystem: each list below is in ascending order, and every pair is checked
// both ways, so a comparator that is right on neighbours but wrong across the list fails too.
import { describe, expect, it } from 'vitest';
import { compareVersions, isPseudoVersion, rangeComparator } from '../../scanners/sca/versions/index.ts';

function expectAscending(ecosystem: string, versions: string[]): void {
  for (let i = 0; i < versions.length; i++) {
    for (let j = 0; j < versions.length; j++) {
      const want = Math.sign(i - j);
      expect(compareVersions(ecosystem, versions[i]!, versions[j]!), `${versions[i]} vs ${versions[j]}`).toBe(want);
    }
  }
}

describe('npm (SemVer precedence)', () => {
  it('orders pre-releases below their release and by identifier', () => {
    expectAscending('npm', ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1-0', '1.0.1', '1.2.0', '1.10.0', '2.0.0-rc.2', '2.0.0-rc.10', '2.0.0']);
  });

  it('ignores build metadata and treats invalid versions as not comparable', () => {
    expect(compareVersions('npm', '1.0.0+build.1', '1.0.0+build.2')).toBe(0);
    for (const bad of ['1.0', '01.0.0', 'latest', '', '1.0.0-', '^1.0.0', 'github:a/b']) {
      expect(compareVersions('npm', bad, '1.0.0'), bad).toBeNull();
      expect(compareVersions('npm', '1.0.0', bad), bad).toBeNull();
    }
  });
});

describe('crates.io', () => {
  it('uses SemVer precedence', () => {
    expectAscending('crates.io', ['0.1.43', '0.2.0-alpha.1', '0.2.0', '0.2.7', '0.2.23', '0.3.17', '1.0.0-beta.1', '1.0.0', '1.6.0', '1.6.1']);
  });
});

describe('PyPI (PEP 440)', () => {
  it('orders dev, pre, post releases and epochs', () => {
    expectAscending('PyPI', ['1.0.dev0', '1.0a1.dev1', '1.0a1', '1.0a2', '1.0b1', '1.0rc1', '1.0', '1.0.post1.dev1', '1.0.post1', '1.0.post2', '1.1.dev1', '1.1', '1.10', '2!0.1']);
  });

  it('treats 1.0 and 1.0.0 as equal, normalises spellings, and places local versions above the public one', () => {
    expect(compareVersions('PyPI', '1.0', '1.0.0')).toBe(0);
    expect(compareVersions('PyPI', '1.0-alpha1', '1.0a1')).toBe(0);
    expect(compareVersions('PyPI', '1.0.post1', '1.0-1')).toBe(0);
    expect(compareVersions('PyPI', '1.0+ubuntu1', '1.0')).toBe(1);
    expect(compareVersions('PyPI', '1.0+ubuntu1', '1.0.post1')).toBe(-1);
  });

  it('returns null for text that is not a version', () => {
    expect(compareVersions('PyPI', 'not a version', '1.0')).toBeNull();
    expect(compareVersions('PyPI', '1.0', '')).toBeNull();
  });
});

describe('Go', () => {
  it('orders releases, pre-releases and the three pseudo-version forms as Go does', () => {
    expectAscending('Go', [
      'v0.0.0-20190101000000-aaaaaaaaaaaa',
      'v0.0.0-20200124225646-8b5121be2f68',
      'v0.0.0-20200220183623-bac4c82f6975',
      'v0.1.0',
      'v1.2.3',
      // vX.Y.(Z+1)-0.timestamp-hash: after v1.2.3, before any v1.2.4 pre-release tag or release.
      'v1.2.4-0.20210101000000-cccccccccccc',
      'v1.2.4-0.20220101000000-bbbbbbbbbbbb',
      'v1.2.4-pre',
      // vX.Y.Z-pre.0.timestamp-hash: after the tag v1.2.4-pre it builds on.
      'v1.2.4-pre.0.20230101000000-dddddddddddd',
      'v1.2.4',
    ]);
  });

  it('accepts versions with or without v, ignores +incompatible and expands v1 / v1.2', () => {
    expect(compareVersions('Go', 'v20.10.7+incompatible', '20.10.9')).toBe(-1);
    expect(compareVersions('Go', 'v20.10.9+incompatible', '20.10.9')).toBe(0);
    expect(compareVersions('Go', 'v0.3.2', '0.3.3')).toBe(-1);
    expect(compareVersions('Go', 'v1', 'v1.0.0')).toBe(0);
    expect(compareVersions('Go', 'v1.2', 'v1.2.0')).toBe(0);
    for (const bad of ['v1.2-pre', 'vv1.0.0', 'v1.02.0', 'master', '', 'v']) expect(compareVersions('Go', bad, 'v1.0.0'), bad).toBeNull();
  });

  it('recognises pseudo-versions', () => {
    expect(isPseudoVersion('v0.0.0-20200124225646-8b5121be2f68')).toBe(true);
    expect(isPseudoVersion('v1.2.4-0.20210101000000-cccccccccccc')).toBe(true);
    expect(isPseudoVersion('v1.2.4-pre.0.20230101000000-dddddddddddd')).toBe(true);
    expect(isPseudoVersion('v2.0.1-0.20200101000000-abcdefabcdef+incompatible')).toBe(true);
    expect(isPseudoVersion('v1.2.4-pre')).toBe(false);
    expect(isPseudoVersion('v1.2.3')).toBe(false);
  });
});

describe('unknown ecosystems and range types', () => {
  it('never compares what it cannot order', () => {
    expect(compareVersions('Maven', '1.0', '2.0')).toBeNull();
    expect(rangeComparator('GIT', 'npm')).toBeNull();
    expect(rangeComparator('ECOSYSTEM', 'Maven')).toBeNull();
    // SEMVER ranges are SemVer whatever the ecosystem says.
    expect(rangeComparator('SEMVER', 'PyPI')!('1.0.0-rc.1', '1.0.0')).toBe(-1);
  });
});
