// Reads the live state through the list endpoints. A collection that fails to read is recorded as
// incomplete rather than aborting: the plan then deletes nothing from it and the command fails.
import type { LiveObject, LiveState } from './model.ts';
import type { Fields, ResourceApi } from './resources.ts';

const labelsOf = (fields: Fields) => (fields.labels as Record<string, string> | undefined) ?? {};
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export async function readLiveState(api: ResourceApi, { concurrency = 8 } = {}): Promise<LiveState> {
  const objects: LiveObject[] = [];
  const incomplete: LiveState['incomplete'] = [];
  const before = api.requestCount().reads;

  const top = async (kind: 'ShieldSite' | 'ScanSchedule' | 'Webhook') => {
    try {
      return (await api.listTop(kind)).map((fields): LiveObject => ({ kind, id: String(fields.id), fields, labels: labelsOf(fields) }));
    } catch (err) {
      incomplete.push({ collection: kind, error: message(err) });
      return [];
    }
  };
  const [sites, schedules, webhooks] = await Promise.all([top('ShieldSite'), top('ScanSchedule'), top('Webhook')]);
  objects.push(...sites, ...schedules, ...webhooks);
  // Without a complete list of sites, rules of an unlisted site could look deleted: fail closed on all.
  if (incomplete.some((i) => i.collection === 'ShieldSite')) {
    for (const kind of ['VirtualPatch', 'IpAccessRule', 'RateLimitRule', 'ShieldSchema']) incomplete.push({ collection: kind, error: 'sites could not be listed' });
  }

  const tasks: (() => Promise<void>)[] = [];
  for (const site of sites) {
    for (const kind of ['VirtualPatch', 'IpAccessRule', 'RateLimitRule'] as const) {
      tasks.push(async () => {
        try {
          for (const fields of await api.listSiteRules(kind, site.id)) objects.push({ kind, id: String(fields.id), siteId: site.id, fields, labels: labelsOf(fields) });
        } catch (err) {
          incomplete.push({ collection: `${kind}@${site.id}`, error: message(err) });
        }
      });
    }
    tasks.push(async () => {
      try {
        const schema = await api.getSchema(site.id);
        if (schema) objects.push({ kind: 'ShieldSchema', id: site.id, siteId: site.id, fields: schema, labels: labelsOf(schema) });
      } catch (err) {
        incomplete.push({ collection: `ShieldSchema@${site.id}`, error: message(err) });
      }
    });
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
  // Deterministic order, so plans (and their checksums) do not depend on response timing.
  objects.sort((a, b) => (a.kind + a.id < b.kind + b.id ? -1 : 1));
  return { objects, incomplete, reads: api.requestCount().reads - before };
}
