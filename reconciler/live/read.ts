// Reads the live state through the list endpoints: the top-level kinds, then each site's kinds
// per site (the registry says which is which). A collection that fails to read is recorded as
// incomplete rather than aborting: the plan then deletes nothing from it and the command fails.
import { KIND_REGISTRY, TOP_LEVEL, type Entry } from '../kinds/index.ts';
import { inheritedLabels } from '../kinds/ownership-labels.ts';
import type { LiveObject, LiveState } from './model.ts';
import type { Fields, ResourceApi } from './resources.ts';
import { errorMessage } from '../../schemas/json-value.ts';

const labelsOf = (fields: Fields) => (fields.labels as Record<string, string> | undefined) ?? {};

export async function readLiveState(api: ResourceApi, { concurrency = 8 } = {}): Promise<LiveState> {
  const objects: LiveObject[] = [];
  const incomplete: LiveState['incomplete'] = [];
  const before = api.requestCount().reads;

  const top = async ({ kind }: Entry): Promise<LiveObject[]> => {
    try {
      return (await api.list(kind)).map((fields): LiveObject => ({ kind, id: String(fields.id), fields, labels: labelsOf(fields) }));
    } catch (err) {
      incomplete.push({ collection: kind, error: errorMessage(err) });
      return [];
    }
  };
  for (const listed of await Promise.all(TOP_LEVEL.map(top))) objects.push(...listed);

  const children = KIND_REGISTRY.filter((entry) => entry.parent !== null);
  // Without a complete list of sites, rules of an unlisted site could look deleted: fail closed on all.
  for (const child of children) {
    if (incomplete.some((i) => i.collection === child.parent)) incomplete.push({ collection: child.kind, error: 'sites could not be listed' });
  }

  const tasks: (() => Promise<void>)[] = [];
  for (const parent of objects.filter((o) => children.some((c) => c.parent === o.kind))) {
    for (const child of children.filter((c) => c.parent === parent.kind)) {
      tasks.push(async () => {
        try {
          for (const fields of await api.list(child.kind, parent.id)) {
            // A singleton has no id of its own: it is its parent's.
            const id = child.singleton ? parent.id : String(fields.id);
            const labels = child.ownedWithParent ? inheritedLabels(parent.labels) : labelsOf(fields);
            objects.push({ kind: child.kind, id, siteId: parent.id, fields, labels });
          }
        } catch (err) {
          incomplete.push({ collection: `${child.kind}@${parent.id}`, error: errorMessage(err) });
        }
      });
    }
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
