// A site's exclusions, compiled. An exclusion names rules (ids or whole categories) and optionally
// where they do not apply:
//   - neither `url_pattern` nor `parameter`: the rules are off for the whole site;
//   - `url_pattern`: not on paths the pattern matches (url-pattern.ts, with the site's case folding);
//   - `parameter`: not on that parameter (compared in lower case with each of a field's names, so
//     `q` covers `q[]` and `Q`, `user.email` a JSON path; `user-agent` and `referer` name those headers);
//   - both: not on that parameter on those paths.
// A rule matched on the request path, the body or a request-level check (anomaly, method) has no
// parameter, so parameter-scoped exclusions never switch those off.
import type { ManagedRulesSettings } from '../../../platform/db/schema.ts';
import { compileUrlPattern } from '../url-pattern.ts';
import { expandRuleRef, RULE_DEFINITIONS } from '../../../schemas/managed-rules/catalogue.ts';

export interface ScopedExclusion {
  matchesPath: ((path: string) => boolean) | null;
  parameter: string | null;
}

export interface CompiledExclusions {
  /** 1 at the index of every rule that is off site-wide. */
  disabled: Uint8Array;
  /** Per rule index, the scoped exclusions naming it (undefined for most rules). */
  scoped: readonly (readonly ScopedExclusion[] | undefined)[];
  /** Whether any rule has a scoped exclusion: the common case checks nothing per hit. */
  hasScoped: boolean;
}

const INDEX_BY_ID: ReadonlyMap<string, number> = new Map(RULE_DEFINITIONS.map((rule, i) => [rule.id, i]));

export function compileExclusions(exclusions: ManagedRulesSettings['exclusions'] | undefined, foldCase: boolean): CompiledExclusions {
  const disabled = new Uint8Array(RULE_DEFINITIONS.length);
  const scoped: ScopedExclusion[][] = [];
  let hasScoped = false;
  for (const exclusion of exclusions ?? []) {
    const indexes = exclusion.rules.flatMap(expandRuleRef).map((id) => INDEX_BY_ID.get(id)!);
    const urlPattern = exclusion.url_pattern;
    const parameter = exclusion.parameter;
    if (urlPattern === undefined && parameter === undefined) {
      for (const i of indexes) disabled[i] = 1;
      continue;
    }
    const entry: ScopedExclusion = {
      matchesPath: urlPattern === undefined ? null : compileUrlPattern(urlPattern, foldCase),
      parameter: parameter === undefined ? null : parameter.toLowerCase(),
    };
    for (const i of indexes) (scoped[i] ??= []).push(entry);
    hasScoped ||= indexes.length > 0;
  }
  return { disabled, scoped, hasScoped };
}

/** Whether a scoped exclusion switches rule `index` off for this path and (when known) these parameter names. */
export function isExcluded(exclusions: CompiledExclusions, index: number, path: string, names: readonly string[] | null): boolean {
  const list = exclusions.scoped[index];
  if (!list) return false;
  for (const exclusion of list) {
    if (exclusion.parameter !== null && (names === null || !names.includes(exclusion.parameter))) continue;
    if (exclusion.matchesPath !== null && !exclusion.matchesPath(path)) continue;
    return true;
  }
  return false;
}
