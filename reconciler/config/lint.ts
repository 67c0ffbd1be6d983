// The security lint of `aegis validate`: configurations that are valid but probably not what a
// security team wants. Warnings, never errors: each can be deliberate (a site in `log` mode while
// it is being tuned). Only clear cases are flagged, so that a warning is worth reading. What each
// kind flags is its registry entry's `lint` (reconciler/kinds); this places the findings in files.
import { kindEntry } from '../kinds/index.ts';
import type { ConfigProblem, DesiredObject } from '../model.ts';
import { fieldOrigin } from './origins.ts';
import { sortProblems, WARNING_PREFIX } from './problems.ts';

export { coversEveryAddress } from '../kinds/ip-access-rule.ts';
export { BLOCKING_SECONDS_PER_REQUEST, blocksEverything, matchesWholeSite } from '../kinds/rate-limit-rule.ts';

function lintObject(object: DesiredObject): ConfigProblem[] {
  return (kindEntry(object.kind).lint?.(object.spec) ?? []).map(({ path, message }) => {
    const [field = '', ...sub] = path;
    const origin = fieldOrigin(object, String(field), sub);
    return { location: origin.location, kind: object.kind, name: object.name, message: `${WARNING_PREFIX}${origin.path}: ${message}` };
  });
}

/** Warnings (messages prefixed `warning:`), sorted by file, line and column. */
export function lintConfig(objects: readonly DesiredObject[]): ConfigProblem[] {
  return sortProblems(objects.flatMap(lintObject));
}
