// IpAccessRule: allow, deny or challenge clients by address, network, AS or country, on one site.
// Nested under `ip_access`, where an item may leave out its name. Its identity compares values
// the way the API stores them (`2001:DB8::/48` and `2001:db8::/48` are one rule).
import { checkRuleValue, type IpRuleType } from '../../schemas/checks/ip-values.ts';
import { IP_RULE_TYPES, ipAccessRuleMeta } from '../../schemas/index.ts';
import { asFields, collectionEndpoints, defineKind, requireSite, type Body, type Fields, type FieldNote } from './kind.ts';
import { lowered, reasons } from './weakening.ts';

const ACTION_RANK = { allow: 0, challenge: 1, deny: 2 };

/** Networks that contain every address of their family. */
const EVERY_ADDRESS: Readonly<Record<string, string>> = { '0.0.0.0/0': 'every IPv4 client', '::/0': 'every IPv6 client' };

/** What an IP rule value covers when that is "everyone" (`every IPv4 client`), else null. */
export function coversEveryAddress(type: string, value: string): string | null {
  if (type !== 'cidr') return null;
  const check = checkRuleValue(type as IpRuleType, value);
  return check.ok ? (EVERY_ADDRESS[check.key] ?? null) : null;
}

/**
 * `<type>-<value>` in the characters of a name: an unnamed nested IP rule needs an identity that
 * stays the same as long as the rule does.
 */
export function defaultIpRuleName(type: string, value: string): string {
  return `${type}-${value}`.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}

/** The identity fields, the value in the API's canonical form when it is valid. */
function identity(fields: Fields): string[] {
  return ipAccessRuleMeta.identity.map((field) => {
    const value = fields[field];
    if (field === 'value') {
      const checked = checkRuleValue(fields.type as IpRuleType, String(value));
      return checked.ok ? checked.key : String(value);
    }
    return String(value ?? '');
  });
}

function lint(spec: Fields): FieldNote[] {
  const who = coversEveryAddress(String(spec.type), String(spec.value));
  if (who && spec.action === 'allow') return [{ path: ['value'], message: `allow rule for ${String(spec.value)} lets ${who} bypass the site's other rules` }];
  if (who && spec.action === 'deny') return [{ path: ['value'], message: `deny rule for ${String(spec.value)} blocks ${who}` }];
  return [];
}

function offlineChecks(fields: Fields): FieldNote[] {
  const { type, value } = fields;
  if (typeof value !== 'string' || !(IP_RULE_TYPES as readonly unknown[]).includes(type)) return [];
  const check = checkRuleValue(type as IpRuleType, value);
  return check.ok ? [] : [{ path: ['value'], message: `value ${JSON.stringify(value)} ${check.reason}` }];
}

const COLLECTION = '/api/v1/shield/sites/{id}/ip-access';
const ITEM = '/api/v1/shield/sites/{id}/ip-access/{rule_id}';

export const ipAccessRule = defineKind({
  kind: 'IpAccessRule',
  order: 1,
  singleton: false,
  protective: true,
  identity,
  describe: ({ fields }) => `${String(fields.type)} ${String(fields.value)} (${String(fields.action)})`,
  weakened: (diff) => reasons(lowered(diff, 'action', ACTION_RANK)),
  endpoints: collectionEndpoints(COLLECTION, ITEM),
  operations: {
    list: async (client, siteId) => (await client.listAll(COLLECTION, { params: { path: { id: requireSite(siteId) } } })).items.map(asFields),
    get: async (client, id, siteId) => asFields(await client.GET(ITEM, { params: { path: { id: requireSite(siteId), rule_id: id } } })),
    create: async (client, fields, siteId) => asFields(await client.POST(COLLECTION, { params: { path: { id: requireSite(siteId) } }, body: fields as Body<typeof COLLECTION, 'post'> })),
    update: async (client, id, changes, siteId) =>
      asFields(await client.PATCH(ITEM, { params: { path: { id: requireSite(siteId), rule_id: id } }, body: changes as Body<typeof ITEM, 'patch'> })),
    remove: async (client, id, siteId) => void (await client.DELETE(ITEM, { params: { path: { id: requireSite(siteId), rule_id: id } } })),
  },
  config: {
    nested: { form: 'list', field: 'ip_access', defaultName: { description: '`<type>-<value>`', of: (fields) => defaultIpRuleName(String(fields.type), String(fields.value)) } },
  },
  lint,
  offlineChecks,
  dump: { placement: 'with-parent', namePrefix: 'ip' },
  provider: { subcategory: 'Shield rules', dependsOn: { status: ['expires_at'] } },
});
