// Go module version order, as golang.org/x/mod/semver defines it. Go versions are SemVer with a
// leading `v`; OSV writes them without it, so both spellings are accepted. Pseudo-versions
// (`v0.0.0-20200101120000-abcdef123456`, `v1.2.4-0.20200101120000-abcdef123456`,
// `v1.2.4-pre.0.20200101120000-abcdef123456`) are SemVer pre-releases whose fixed-width timestamp
// sorts correctly as text, so plain SemVer precedence orders them the way Go does: after the tag
// they build on and before the next release. Build metadata such as `+incompatible` is ignored, as
// in Go. Go also accepts the shorthands `v1` and `v1.2` (meaning `v1.0.0`, `v1.2.0`) but only
// without a pre-release or build suffix.
import type semver from 'semver';
import { parseSemver } from './semver.ts';

export function parseGoVersion(version: string): semver.SemVer | null {
  let v = version.startsWith('v') ? version.slice(1) : version;
  if (v === '' || v.length > 256) return null;
  if (/^(0|[1-9]\d*)$/.test(v)) v += '.0.0';
  else if (/^(0|[1-9]\d*)\.(0|[1-9]\d*)$/.test(v)) v += '.0';
  const plus = v.indexOf('+');
  // Go ignores build metadata entirely; strip it before parsing so `+incompatible` never matters.
  if (plus >= 0) {
    if (!/^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/.test(v.slice(plus + 1))) return null;
    v = v.slice(0, plus);
  }
  // semver.parse would accept another leading `v`; Go would not.
  if (v.startsWith('v')) return null;
  return parseSemver(v);
}

export function compareGo(a: string, b: string): number | null {
  const pa = parseGoVersion(a);
  const pb = parseGoVersion(b);
  if (!pa || !pb) return null;
  return pa.compare(pb);
}

/** True for the three pseudo-version forms Go generates for untagged commits. */
export function isPseudoVersion(version: string): boolean {
  return /^v?\d+\.(?:0\.0-|\d+\.\d+-(?:[^+]*\.)?0\.)\d{14}-[0-9a-f]{12}(?:\+incompatible)?$/.test(version);
}
