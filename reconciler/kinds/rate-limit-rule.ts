// RateLimitRule: a request budget per client identity on some paths of one site. Nested under
// `rate_limits`.
import { rateLimitRuleMeta } from '../../schemas/index.ts';
import { asFields, collectionEndpoints, defineKind, identityFields, requireSite, type Body, type FieldChange, type Fields } from './kind.ts';
import { lowered, reasons } from './weakening.ts';

const ACTION_RANK = { log: 0, challenge: 1, block: 2 };

/** A rule counts requests to the whole site when it matches every path and method. */
export const matchesWholeSite = (spec: Fields): boolean => spec.url_pattern === '/*' && spec.method === 'ANY';

/** At most one request per this many seconds, per client, is past "rate limiting" and into "blocking". */
export const BLOCKING_SECONDS_PER_REQUEST = 3600;

/**
 * A rate limit that in effect blocks everything: it covers the whole site, acts on the excess,
 * and lets a client through at most once an hour.
 */
export function blocksEverything(spec: Fields): boolean {
  const budget = Number(spec.budget);
  const window = Number(spec.window_seconds);
  return matchesWholeSite(spec) && spec.action !== 'log' && budget >= 1 && window / budget >= BLOCKING_SECONDS_PER_REQUEST;
}

/** A larger budget lets more through. */
function budgetRaised(diff: readonly FieldChange[]): string | null {
  const budget = diff.find((d) => d.field === 'budget');
  return budget && Number(budget.after) > Number(budget.before) ? `budget ${String(budget.before)} → ${String(budget.after)}` : null;
}

const COLLECTION = '/api/v1/shield/sites/{id}/rate-limits';
const ITEM = '/api/v1/shield/sites/{id}/rate-limits/{rule_id}';

export const rateLimitRule = defineKind({
  kind: 'RateLimitRule',
  order: 1,
  singleton: false,
  protective: true,
  identity: identityFields(rateLimitRuleMeta.identity),
  describe: ({ fields }) => `${String(fields.method)} ${String(fields.url_pattern)} by ${String(fields.identity)}`,
  weakened: (diff) => reasons(lowered(diff, 'action', ACTION_RANK), budgetRaised(diff)),
  endpoints: collectionEndpoints(COLLECTION, ITEM),
  operations: {
    list: async (client, siteId) => (await client.listAll(COLLECTION, { params: { path: { id: requireSite(siteId) } } })).items.map(asFields),
    get: async (client, id, siteId) => asFields(await client.GET(ITEM, { params: { path: { id: requireSite(siteId), rule_id: id } } })),
    create: async (client, fields, siteId) => asFields(await client.POST(COLLECTION, { params: { path: { id: requireSite(siteId) } }, body: fields as Body<typeof COLLECTION, 'post'> })),
    update: async (client, id, changes, siteId) =>
      asFields(await client.PATCH(ITEM, { params: { path: { id: requireSite(siteId), rule_id: id } }, body: changes as Body<typeof ITEM, 'patch'> })),
    remove: async (client, id, siteId) => void (await client.DELETE(ITEM, { params: { path: { id: requireSite(siteId), rule_id: id } } })),
  },
  config: { nested: { form: 'list', field: 'rate_limits' } },
  lint: (spec) =>
    blocksEverything(spec)
      ? [{ path: ['budget'], message: `${String(spec.budget)} request(s) per ${String(spec.window_seconds)} s on every path and method effectively blocks the site` }]
      : [],
  dump: { placement: 'with-parent', namePrefix: 'limit' },
  provider: { subcategory: 'Shield rules' },
});
