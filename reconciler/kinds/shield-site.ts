// ShieldSite: the protected domain, and the parent of every Shield rule kind. Config files and
// `dump` give each site a file of its own with its rules nested in it.
import { unknownRuleRefs } from '../../schemas/managed-rules/catalogue.ts';
import { shieldSiteMeta } from '../../schemas/index.ts';
import { canonicalJson } from './canonical-json.ts';
import { asFields, collectionEndpoints, defineKind, identityFields, type Body, type FieldChange, type FieldNote } from './kind.ts';
import { slug } from './names.ts';
import { lowered, reasons } from './weakening.ts';

const MODE_RANK = { log: 0, challenge: 1, block: 2 };
// Rules written for /admin stop matching /Admin.
const PATH_CASE_RANK = { sensitive: 0, insensitive: 1 };

/** `managed_rules` as the diff carries it (the API's whole object, or what config gives with defaults filled in). */
interface ManagedRules {
  enabled?: boolean;
  paranoia_level?: number;
  exclusions?: unknown[];
}

const asManagedRules = (value: unknown): ManagedRules | null => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as ManagedRules) : null);

/**
 * Managed rules weaken when they are turned off, their paranoia level goes down, or exclusions are
 * added (an exclusion that was not there before switches rules off for some requests).
 */
function managedRulesWeakened(diff: readonly FieldChange[]): string[] {
  const change = diff.find((d) => d.field === 'managed_rules');
  const before = asManagedRules(change?.before);
  const after = asManagedRules(change?.after);
  if (!before || !after) return [];
  if (before.enabled !== false && after.enabled === false) return ['managed_rules turned off'];
  const found: string[] = [];
  if (typeof before.paranoia_level === 'number' && typeof after.paranoia_level === 'number' && after.paranoia_level < before.paranoia_level) {
    found.push(`managed_rules.paranoia_level ${before.paranoia_level} → ${after.paranoia_level}`);
  }
  const existing = new Set((before.exclusions ?? []).map((e) => canonicalJson(e)));
  const added = (after.exclusions ?? []).filter((e) => !existing.has(canonicalJson(e))).length;
  if (added > 0) found.push(`${added} managed_rules exclusion(s) added`);
  return found;
}

/** `tls` as the diff carries it. */
interface Tls {
  mode?: string;
  redirect_http?: boolean;
  hsts?: { max_age?: number } | null;
  min_version?: string;
}

const asTls = (value: unknown): Tls | null => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Tls) : null);

/** TLS weakens when it is turned off, the HTTP redirect or HSTS goes (or HSTS shortens), or older TLS versions are let in. */
function tlsWeakened(diff: readonly FieldChange[]): string[] {
  const change = diff.find((d) => d.field === 'tls');
  const before = asTls(change?.before);
  const after = asTls(change?.after);
  if (!before || !after) return [];
  if (before.mode !== 'off' && after.mode === 'off') return ['tls turned off'];
  const found: string[] = [];
  if (before.redirect_http === true && after.redirect_http === false) found.push('tls.redirect_http turned off');
  if (before.hsts && !after.hsts) found.push('tls.hsts removed');
  else if (typeof before.hsts?.max_age === 'number' && typeof after.hsts?.max_age === 'number' && after.hsts.max_age < before.hsts.max_age) {
    found.push(`tls.hsts.max_age ${before.hsts.max_age} → ${after.hsts.max_age}`);
  }
  if (before.min_version === '1.3' && after.min_version === '1.2') found.push('tls.min_version 1.3 → 1.2');
  return found;
}

/** The API refuses exclusions naming no managed rule (a typo would exclude nothing). */
function unknownExclusionRules(fields: Record<string, unknown>): FieldNote[] {
  const exclusions = (fields.managed_rules as { exclusions?: unknown } | undefined)?.exclusions;
  if (!Array.isArray(exclusions)) return [];
  return exclusions.flatMap((exclusion: unknown, i) => {
    const rules = (exclusion as { rules?: unknown } | null)?.rules;
    if (!Array.isArray(rules)) return [];
    const refs = rules.filter((r): r is string => typeof r === 'string');
    return unknownRuleRefs(refs).map((ref) => ({
      path: ['managed_rules', 'exclusions', i, 'rules', rules.indexOf(ref)],
      message: `${JSON.stringify(ref)} is not a managed rule id or category (GET /api/v1/shield/managed-rules)`,
    }));
  });
}

const COLLECTION = '/api/v1/shield/sites';
const ITEM = '/api/v1/shield/sites/{id}';
type Create = Body<typeof COLLECTION, 'post'>;
type Update = Body<typeof ITEM, 'patch'>;

export const shieldSite = defineKind({
  kind: 'ShieldSite',
  order: 0,
  singleton: false,
  protective: true,
  identity: identityFields(shieldSiteMeta.identity),
  describe: ({ fields }) => String(fields.domain),
  weakened: (diff) => [...reasons(lowered(diff, 'mode', MODE_RANK), lowered(diff, 'path_case', PATH_CASE_RANK)), ...managedRulesWeakened(diff), ...tlsWeakened(diff)],
  endpoints: collectionEndpoints(COLLECTION, ITEM),
  operations: {
    list: async (client) => (await client.listAll(COLLECTION)).items.map(asFields),
    get: async (client, id) => asFields(await client.GET(ITEM, { params: { path: { id } } })),
    create: async (client, fields) => asFields(await client.POST(COLLECTION, { body: fields as Create })),
    update: async (client, id, changes) => asFields(await client.PATCH(ITEM, { params: { path: { id } }, body: changes as Update })),
    remove: async (client, id) => void (await client.DELETE(ITEM, { params: { path: { id } } })),
  },
  config: {},
  lint: (spec) => (spec.mode === 'log' ? [{ path: ['mode'], message: 'site does not block: in log mode its rules only record what they would do' }] : []),
  offlineChecks: unknownExclusionRules,
  dump: { placement: 'own-file', fallbackName: (fields) => slug(String(fields.domain)) },
  provider: { subcategory: 'Shield' },
});
