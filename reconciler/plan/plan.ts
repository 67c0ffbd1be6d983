// Plan: what must change for the live state to match the config. Objects are matched through the
// ownership labels; unowned objects are never touched unless adopted; deletions come only from
// collections read completely, and never take a rule off a site this source does not own. What
// differs per kind (order, identity, descriptions) comes from the kind registry.
import { createHash } from 'node:crypto';
import { isParentKind, kindEntry } from '../kinds/index.ts';
import type { DesiredObject, Kind, SourceLocation } from '../model.ts';
import type { LiveObject, LiveState } from '../live/model.ts';
import { canonicalJson, compareFields, desiredFields, needsReplacement, type FieldDiff } from './compare.ts';
import { naturalKey } from './natural-identity.ts';
import { NAME_LABEL, SOURCE_LABEL, desiredLabels, identityKey, identityName } from './ownership.ts';

export type ChangeAction = 'create' | 'update' | 'replace' | 'delete';

export interface PlannedChange {
  action: ChangeAction;
  kind: Kind;
  /** Identity name (`site/name` for site kinds). */
  name: string;
  /** Live id of the object changed (update, replace, delete). */
  id?: string;
  /** Live id of its site, when the site already exists. */
  siteId?: string;
  /** Config name of its site, for site kinds (apply resolves a newly created site through it). */
  siteName?: string;
  /** Fields to send for create/update/replace: the config's spec with ownership labels. */
  fields?: Record<string, unknown>;
  diff: FieldDiff[];
  /** An unowned object taken over (--adopt). */
  adopted?: boolean;
  /** Deleted together with its site: no request of its own. */
  withSite?: boolean;
  location?: SourceLocation;
}

export interface PlanProblem {
  kind: Kind;
  name: string;
  message: string;
  location?: SourceLocation;
}

export interface Plan {
  source: string;
  changes: PlannedChange[];
  unchanged: number;
  /** Live objects this source does not own and config does not mention. */
  unmanaged: { kind: Kind; id: string; description: string }[];
  /** Errors: collisions with objects this source does not own. */
  conflicts: PlanProblem[];
  incomplete: LiveState['incomplete'];
  /** Objects this source owns live (the base of the deletion threshold). */
  ownedCount: number;
  reads: number;
  checksum: string;
}

export interface PlanOptions {
  source: string;
  adopt?: boolean;
  prune?: boolean;
}

const describe = (object: LiveObject): string => kindEntry(object.kind).describe(object);
const isSiteLevel = (kind: Kind): boolean => kindEntry(kind).parent !== null;

export function computePlan(desired: readonly DesiredObject[], live: LiveState, options: PlanOptions): Plan {
  const { source, adopt = false, prune = true } = options;
  const owned = new Map<string, LiveObject>();
  const foreign = new Map<string, LiveObject>();
  /** Live sites (parents) by id. */
  const parentsById = new Map<string, LiveObject>();
  const ownedBySource = (object: LiveObject) => object.labels[SOURCE_LABEL] === source && Boolean(object.labels[NAME_LABEL]);
  for (const object of live.objects) {
    if (isParentKind(object.kind)) parentsById.set(object.id, object);
    const owner = object.labels[SOURCE_LABEL];
    const name = object.labels[NAME_LABEL];
    if (owner === source && name) owned.set(identityKey(object.kind, name), object);
  }
  for (const object of live.objects) {
    if (ownedBySource(object)) continue;
    foreign.set(naturalKey(object.kind, object.fields, object.siteId), object);
  }

  const changes: PlannedChange[] = [];
  const conflicts: PlanProblem[] = [];
  const matched = new Set<LiveObject>();
  let unchanged = 0;
  /** Config site name → its live id once matched, or undefined when it is created or replaced. */
  const siteIds = new Map<string, string | undefined>();

  // Dependency order (the registry's): a new site is known by the time its rules are planned.
  const order = (o: DesiredObject) => kindEntry(o.kind).order;
  for (const object of [...desired].sort((a, b) => order(a) - order(b))) {
    const name = identityName(object);
    const labels = desiredLabels(source, object);
    const fields = desiredFields(object, labels);
    const siteId = object.site !== undefined ? siteIds.get(object.site) : undefined;
    const base = {
      kind: object.kind,
      name,
      fields: { ...object.spec, labels },
      location: object.location,
      ...(object.site !== undefined ? { siteName: object.site } : {}),
      ...(siteId ? { siteId } : {}),
    };
    let match = owned.get(identityKey(object.kind, name));
    // A rule whose site is new or replaced goes to the new site; the old one leaves with its site.
    if (match && isSiteLevel(object.kind) && match.siteId !== siteId) match = undefined;
    let adopted = false;
    if (!match) {
      const collision = isSiteLevel(object.kind) && !siteId ? undefined : foreign.get(naturalKey(object.kind, object.spec, siteId));
      if (collision) {
        const owner = collision.labels[SOURCE_LABEL];
        if (owner) {
          conflicts.push({ kind: object.kind, name, location: object.location, message: `collides with ${describe(collision)} (${collision.id}), owned by source "${owner}"` });
          continue;
        }
        if (!adopt) {
          conflicts.push({ kind: object.kind, name, location: object.location, message: `collides with unmanaged ${describe(collision)} (${collision.id}); pass --adopt to take it over` });
          continue;
        }
        match = collision;
        adopted = true;
      }
    }
    if (!match) {
      changes.push({ ...base, action: 'create', diff: [] });
      if (isParentKind(object.kind)) siteIds.set(object.name, undefined);
      continue;
    }
    matched.add(match);
    const diff = compareFields(object.kind, fields, match);
    if (diff.length === 0) {
      unchanged++;
      if (isParentKind(object.kind)) siteIds.set(object.name, match.id);
      continue;
    }
    if (needsReplacement(object.kind, diff)) {
      changes.push({ ...base, action: 'replace', id: match.id, diff, ...(adopted ? { adopted } : {}) });
      if (isParentKind(object.kind)) siteIds.set(object.name, undefined);
    } else {
      changes.push({ ...base, action: 'update', id: match.id, diff, ...(adopted ? { adopted } : {}) });
      if (isParentKind(object.kind)) siteIds.set(object.name, match.id);
    }
  }

  // Sites leaving (deleted or replaced) take their rules with them.
  const leavingSites = new Set(changes.filter((c) => isParentKind(c.kind) && c.action === 'replace' && c.id).map((c) => c.id!));
  const incomplete = new Set(live.incomplete.map((i) => i.collection));
  const readComplete = (object: LiveObject) => !incomplete.has(object.kind) && !(object.siteId && incomplete.has(`${object.kind}@${object.siteId}`));
  const unmanaged: Plan['unmanaged'] = [];
  const deletions: PlannedChange[] = [];
  for (const object of live.objects) {
    if (matched.has(object)) continue;
    const name = object.labels[NAME_LABEL];
    if (object.labels[SOURCE_LABEL] !== source || !name) {
      unmanaged.push({ kind: object.kind, id: object.id, description: describe(object) });
      continue;
    }
    // Labelled for this source but on a site it does not own (the site was relabelled or adopted
    // elsewhere): config can only name rules of its own sites, so it cannot keep this one, and
    // deleting it would weaken a site another source manages. Reported, left alone.
    const parent = object.siteId !== undefined ? parentsById.get(object.siteId) : undefined;
    if (parent && !ownedBySource(parent)) {
      unmanaged.push({ kind: object.kind, id: object.id, description: `${describe(object)} (labelled for this source, on a site it does not own)` });
      continue;
    }
    if (!prune || !readComplete(object)) continue;
    if (isParentKind(object.kind)) leavingSites.add(object.id);
    deletions.push({ action: 'delete', kind: object.kind, name, id: object.id, ...(object.siteId ? { siteId: object.siteId } : {}), diff: [] });
  }
  for (const deletion of deletions) if (deletion.siteId && leavingSites.has(deletion.siteId)) deletion.withSite = true;
  changes.push(...deletions);

  const ownedCount = [...owned.values()].length;
  const checksum = createHash('sha256')
    .update(canonicalJson({ source, changes: changes.map(({ location: _location, ...change }) => change) }))
    .digest('hex')
    .slice(0, 16);
  return { source, changes, unchanged, unmanaged, conflicts, incomplete: live.incomplete, ownedCount, reads: live.reads, checksum };
}

/** Counts by action, for summaries. */
export function summarise(plan: Plan): Record<ChangeAction, number> {
  const counts: Record<ChangeAction, number> = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const change of plan.changes) counts[change.action]++;
  return counts;
}

export const hasChanges = (plan: Plan) => plan.changes.length > 0;
