// Filling the rule templates with a finding's specifics, and keeping the answer within its limits.
import type { Family, VarName, Vars } from './rules.ts';
import { VAR_NAMES } from './rules.ts';
import { describeLocation, type FindingView } from './view.ts';

export const LABEL = 'Aegis rules (no AI model):';
export const MAX_EXPLANATION = 1200;
/** Values quoted into templates are cut: a long URL or expression would crowd out the advice. */
const MAX_VAR = 120;

const clip = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** Every template variable, with a neutral wording where the finding does not say. */
export function varsOf(v: FindingView): Vars {
  const l = v.location;
  const advisories = v.cveIds.length > 0 ? v.cveIds : [v.ruleId, ...v.aliases.filter((a) => a !== v.ruleId)];
  const vars: Vars = {
    where: describeLocation(l),
    input: v.taint?.source ?? (l.kind === 'url' && l.parameter ? `the ${l.parameter} parameter` : 'input that may come from outside'),
    sink: v.taint?.sink ?? 'the call',
    param: l.kind === 'url' && l.parameter ? l.parameter : subjectOf(v) ?? 'the reported one',
    package: l.kind === 'package' ? l.name : 'the package',
    version: l.kind === 'package' ? l.version : 'the installed version',
    fixed: v.fixedVersion ?? 'a release without the advisory',
    cve: advisories.slice(0, 3).join(', ') || v.ruleId,
    rule: v.ruleId,
  };
  for (const k of VAR_NAMES) vars[k] = clip(vars[k].replace(/\s+/g, ' '), MAX_VAR);
  return vars;
}

/** The header or cookie a passive DAST finding is about, read from its evidence. */
function subjectOf(v: FindingView): string | undefined {
  const header = /without ([A-Za-z-]+(?: or CSP frame-ancestors)?)/.exec(v.evidence);
  if (header) return header[1];
  const cookie = /^Set-Cookie: ([^=;\s]+)=/.exec(v.evidence);
  return cookie ? cookie[1] : undefined;
}

export function fill(template: string, vars: Vars): string {
  return template.replace(/\{([a-z]+)\}/g, (m, name: string) => ((VAR_NAMES as readonly string[]).includes(name) ? vars[name as VarName] : m));
}

/** Placeholders a template uses that VAR_NAMES does not define (tests check there are none). */
export function unknownPlaceholders(template: string): string[] {
  return [...template.matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]!).filter((n) => !(VAR_NAMES as readonly string[]).includes(n));
}

export function familyLabel(f: Family | undefined, cwe: number | null): string {
  if (!f) return cwe !== null ? `an unmapped weakness (CWE-${cwe})` : 'an unclassified finding';
  return cwe !== null ? `${f.name} (CWE-${cwe})` : f.name;
}

/**
 * The label, then the parts in order, cut at a sentence boundary to fit MAX_EXPLANATION (the
 * family's explanation comes first, so it survives).
 */
export function compose(parts: readonly string[]): string {
  let out = LABEL;
  for (const p of parts) {
    const next = `${out} ${p}`;
    if (next.length > MAX_EXPLANATION) {
      if (out === LABEL) out = clip(next, MAX_EXPLANATION);
      break;
    }
    out = next;
  }
  return out;
}
