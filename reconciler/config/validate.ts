// Checks that need more than one document, or more than JSON Schema can say: references between
// documents, uniqueness (the API would refuse the second object), RE2 patterns, IP rule values,
// schedules, managed-rule exclusions and OpenAPI documents. Offline and pure: the same answers as the API's own checks,
// through the same code, but for the whole repository at once.
import { LineCounter, parseDocument } from 'yaml';
import { unknownRuleRefs } from '../../schemas/managed-rules/catalogue.ts';
import { checkIpRule } from '../../schemas/checks/ip-rule.ts';
import { checkRuleValue, type IpRuleType } from '../../schemas/checks/ip-values.ts';
import { compileUserRegex } from '../../schemas/checks/regex.ts';
import { openApiVersionOf } from '../../schemas/openapi/document.ts';
import { scheduleIssues, type ScanType } from '../../schemas/checks/schedule.ts';
import type { ConfigProblem, DesiredObject, LoadResult, SourceLocation } from '../model.ts';
import { isSiteKind } from './envelope-schema.ts';
import { loadConfigDirDetailed, type RejectedDocument } from './load.ts';
import { fieldOrigin, formatLocation } from './origins.ts';
import { compareLocations, sortProblems } from './problems.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export interface ValidateOptions {
  /** Documents that failed to load: their names count as defined, so one mistake is not reported again as dangling references. */
  rejected?: readonly RejectedDocument[];
  /** For `expires_at` in the past (default: now). */
  now?: number;
}

/** Label keys under this prefix carry the reconciler's ownership; a user value would be overwritten. */
export const RESERVED_LABEL_PREFIX = 'aegis.dev/';

const problemOf = (object: DesiredObject, location: SourceLocation, message: string): ConfigProblem => ({ location, kind: object.kind, name: object.name, message });

function fieldProblem(object: DesiredObject, field: string, message: string, sub: readonly (string | number)[] = []): ConfigProblem {
  const origin = fieldOrigin(object, field, sub);
  return problemOf(object, origin.location, `${origin.path}: ${message}`);
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

// --- One object at a time -----------------------------------------------------------------------

function regexProblems(object: DesiredObject): ConfigProblem[] {
  if (object.kind !== 'VirtualPatch') return [];
  const check = compileUserRegex(str(object.spec.match_regex));
  return check.ok ? [] : [fieldProblem(object, 'match_regex', check.reason)];
}

function ipRuleProblems(object: DesiredObject, now: number): ConfigProblem[] {
  if (object.kind !== 'IpAccessRule') return [];
  const { type, value, expires_at } = object.spec;
  const check = checkIpRule({ type: type as IpRuleType, value: str(value), expires_at: typeof expires_at === 'string' ? expires_at : null }, now);
  return check.ok ? [] : check.problems.map((p) => fieldProblem(object, p.field, p.message));
}

function scheduleProblems(object: DesiredObject): ConfigProblem[] {
  if (object.kind !== 'ScanSchedule') return [];
  const { cron, timezone, scan_type, target } = object.spec;
  return scheduleIssues({ cron: str(cron), timezone: str(timezone), scan_type: scan_type as ScanType, target: str(target) }).map((i) => fieldProblem(object, i.field, i.message));
}

/** The API refuses credentials in a webhook URL: they would travel with every delivery. */
function webhookProblems(object: DesiredObject): ConfigProblem[] {
  if (object.kind !== 'Webhook') return [];
  try {
    const url = new URL(str(object.spec.url));
    return url.username || url.password ? [fieldProblem(object, 'url', 'must not contain credentials (user:password@); authenticate deliveries with the signing secret')] : [];
  } catch {
    return [fieldProblem(object, 'url', 'is not a valid URL')];
  }
}

/** The API refuses exclusions naming no managed rule or category: a typo would exclude nothing. */
function managedRuleProblems(object: DesiredObject): ConfigProblem[] {
  if (object.kind !== 'ShieldSite') return [];
  const exclusions = (object.spec.managed_rules as { exclusions?: unknown } | undefined)?.exclusions;
  if (!Array.isArray(exclusions)) return [];
  return exclusions.flatMap((exclusion: unknown, i) => {
    const rules = (exclusion as { rules?: unknown } | null)?.rules;
    if (!Array.isArray(rules)) return [];
    return unknownRuleRefs(rules.filter((r): r is string => typeof r === 'string')).map((ref) =>
      fieldProblem(object, 'managed_rules', `${JSON.stringify(ref)} is not a managed rule id or category (GET /api/v1/shield/managed-rules)`, ['exclusions', i, 'rules', rules.indexOf(ref)]),
    );
  });
}

function labelProblems(object: DesiredObject): ConfigProblem[] {
  const labels = object.spec.labels;
  if (typeof labels !== 'object' || labels === null) return [];
  return Object.keys(labels)
    .filter((key) => key.startsWith(RESERVED_LABEL_PREFIX))
    .map((key) => fieldProblem(object, 'labels', `key ${JSON.stringify(key)} is reserved: labels under ${RESERVED_LABEL_PREFIX} record the reconciler's ownership`));
}

/**
 * The OpenAPI document must at least parse (YAML or JSON) and say it is OpenAPI 3.x; whether it is
 * a valid OpenAPI document is the server's judgement. A syntax error in a `document_file` points
 * into that file.
 */
function documentProblems(object: DesiredObject): ConfigProblem[] {
  if (object.kind !== 'ShieldSchema') return [];
  const origin = fieldOrigin(object, 'document');
  const text = str(object.spec.document);
  const lead = `${origin.path}: the OpenAPI document`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, resolveKnownTags: false });
    if (doc.errors.length > 0) {
      return doc.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        const location = origin.source ? { file: origin.source, line, column: col } : origin.location;
        const where = origin.source ? '' : ` (its line ${line}, column ${col})`;
        return problemOf(object, location, `${lead} is not valid YAML or JSON${where}: ${error.message}`);
      });
    }
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      return [problemOf(object, origin.location, `${lead} is not valid YAML: ${errorMessage(error)}`)];
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [problemOf(object, origin.location, `${lead} must be a mapping with an \`openapi\` field`)];
  const version = openApiVersionOf(value as Record<string, unknown>);
  return version.ok ? [] : version.reasons.map((reason) => problemOf(object, origin.location, `${lead}: ${reason}`));
}

// --- Across objects -----------------------------------------------------------------------------

function referenceProblems(objects: readonly DesiredObject[], rejected: readonly RejectedDocument[]): ConfigProblem[] {
  const sites = new Set([...objects, ...rejected].filter((o) => o.kind === 'ShieldSite').map((o) => o.name));
  return objects
    .filter((o) => isSiteKind(o.kind) && !sites.has(o.site ?? ''))
    .map((o) => problemOf(o, fieldOrigin(o, 'site').location, `site ${JSON.stringify(o.site)} is not defined by any ShieldSite`));
}

/**
 * An uploaded certificate is served only in `tls.mode: custom`, and uploading one switches the
 * site to it: a site config asking for another mode would undo that on the next apply.
 */
function certificateModeProblems(objects: readonly DesiredObject[]): ConfigProblem[] {
  const modes = new Map(objects.filter((o) => o.kind === 'ShieldSite').map((o) => [o.name, (o.spec.tls as { mode?: unknown } | undefined)?.mode]));
  return objects
    .filter((o) => o.kind === 'ShieldCertificate' && modes.get(o.site ?? '') !== undefined && modes.get(o.site ?? '') !== 'custom')
    .map((o) => problemOf(o, o.location, `site ${o.site} has tls.mode ${String(modes.get(o.site ?? ''))}: an uploaded certificate is served with tls.mode: custom (set it, or leave tls.mode out)`));
}

/**
 * The second (and later) objects sharing a key, each with the first one. `reported` holds objects
 * already found clashing, so one mistake (say, a site pasted twice) is reported once.
 */
function clashes(objects: readonly DesiredObject[], keyOf: (o: DesiredObject) => string | null, reported: Set<DesiredObject>): [DesiredObject, DesiredObject][] {
  const first = new Map<string, DesiredObject>();
  const found: [DesiredObject, DesiredObject][] = [];
  for (const object of objects) {
    if (reported.has(object)) continue;
    const key = keyOf(object);
    if (key === null) continue;
    const earlier = first.get(key);
    if (earlier) {
      found.push([object, earlier]);
      reported.add(object);
    } else first.set(key, object);
  }
  return found;
}

const siteOf = (o: DesiredObject): string => (o.site === undefined ? '' : ` of site ${o.site}`);

function uniquenessProblems(objects: readonly DesiredObject[]): ConfigProblem[] {
  const reported = new Set<DesiredObject>();
  const problems: ConfigProblem[] = [];
  for (const [object, first] of clashes(objects, (o) => JSON.stringify([o.kind, o.site ?? null, o.name]), reported)) {
    problems.push(problemOf(object, object.location, `${object.kind} "${object.name}"${siteOf(object)} is already defined at ${formatLocation(first.location)}`));
  }
  const domainKey = (o: DesiredObject) => (o.kind === 'ShieldSite' ? str(o.spec.domain) : null);
  for (const [object, first] of clashes(objects, domainKey, reported)) {
    problems.push(fieldProblem(object, 'domain', `${JSON.stringify(object.spec.domain)} is already the domain of ShieldSite/${first.name} at ${formatLocation(first.location)}`));
  }
  // The API keeps one rule per site, type and canonical value (2001:DB8::1 and 2001:db8::1 are one).
  const canonical = (o: DesiredObject): string | null => {
    const value = checkRuleValue(o.spec.type as IpRuleType, str(o.spec.value));
    return value.ok ? value.key : null;
  };
  const ipKey = (o: DesiredObject): string | null => {
    const key = o.kind === 'IpAccessRule' ? canonical(o) : null;
    return key === null ? null : JSON.stringify([o.site, o.spec.type, key]);
  };
  for (const [object, first] of clashes(objects, ipKey, reported)) {
    const rule = `${str(object.spec.type)} ${canonical(object) ?? ''}`;
    problems.push(fieldProblem(object, 'value', `site ${object.site} already has a rule for ${rule} (IpAccessRule/${first.name} at ${formatLocation(first.location)})`));
  }
  const schemaKey = (o: DesiredObject) => (o.kind === 'ShieldSchema' ? str(o.site) : null);
  for (const [object, first] of clashes(objects, schemaKey, reported)) {
    problems.push(problemOf(object, object.location, `site ${object.site} already has a ShieldSchema (ShieldSchema/${first.name} at ${formatLocation(first.location)}); a site has at most one`));
  }
  return problems;
}

/** Every problem across the loaded objects, sorted by file, line and column. */
export function validateConfig(objects: readonly DesiredObject[], options: ValidateOptions = {}): ConfigProblem[] {
  const now = options.now ?? Date.now();
  // "The second occurrence" is the later one in file order, whatever order the objects came in.
  const ordered = [...objects].sort((a, b) => compareLocations(a.location, b.location));
  const problems: ConfigProblem[] = [];
  for (const object of ordered) {
    problems.push(...regexProblems(object), ...ipRuleProblems(object, now), ...scheduleProblems(object), ...webhookProblems(object), ...managedRuleProblems(object), ...labelProblems(object), ...documentProblems(object));
  }
  problems.push(...referenceProblems(ordered, options.rejected ?? []), ...uniquenessProblems(ordered), ...certificateModeProblems(ordered));
  return sortProblems(problems);
}

/** Loads `dir` and checks it: load problems and validation problems together, sorted by file, line and column. */
export async function loadAndValidate(dir: string, options: Omit<ValidateOptions, 'rejected'> = {}): Promise<LoadResult> {
  const loaded = await loadConfigDirDetailed(dir);
  const problems = validateConfig(loaded.objects, { ...options, rejected: loaded.rejected });
  return { objects: loaded.objects, problems: sortProblems([...loaded.problems, ...problems]) };
}
