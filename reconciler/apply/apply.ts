// Executes a plan in the kind registry's dependency order (sites, then what hangs off them, then
// schedules and webhooks), then deletions in reverse order (rules before their sites). Replacements create the new object before the
// old one is deleted, so protection never lapses in between. On the first failure nothing new is
// started; the result says exactly what was applied, what failed and what was not attempted, and
// re-running converges (creates carry ownership labels, so a second plan finds what was made).
import { isParentKind, kindEntry } from '../kinds/index.ts';
import type { Fields, ResourceApi } from '../live/resources.ts';
import type { Plan, PlannedChange } from '../plan/plan.ts';

export interface StepOutcome {
  change: PlannedChange;
  step: 'create' | 'update' | 'delete';
  id?: string;
}

export interface ApplyResult {
  applied: StepOutcome[];
  failed: (StepOutcome & { error: string })[];
  notAttempted: StepOutcome[];
}

interface Step extends StepOutcome {
  run(): Promise<string | undefined>;
}

export interface ApplyOptions {
  concurrency?: number;
  onStep?: (outcome: StepOutcome, error?: string) => void;
}

/** The fields an update sends: those that differ (a digest, such as a schema's hash, stands for its field). */
function changedFields(change: PlannedChange): Fields {
  const digest = kindEntry(change.kind).digest;
  const fields: Fields = {};
  for (const d of change.diff) {
    const name = digest && d.field === digest.as ? digest.field : d.field;
    fields[name] = change.fields?.[name];
  }
  return fields;
}

export async function applyPlan(plan: Plan, api: ResourceApi, options: ApplyOptions = {}): Promise<ApplyResult> {
  const concurrency = options.concurrency ?? 8;
  const newSiteIds = new Map<string, string>();
  const siteOf = (change: PlannedChange): string | undefined => (change.siteName !== undefined ? (newSiteIds.get(change.siteName) ?? change.siteId) : undefined);
  // One phase per dependency order: writes ascending, deletions descending.
  const writes = new Map<number, Step[]>();
  const deletes = new Map<number, Step[]>();
  const bucket = (phases: Map<number, Step[]>, change: PlannedChange): Step[] => {
    const order = kindEntry(change.kind).order;
    if (!phases.has(order)) phases.set(order, []);
    return phases.get(order)!;
  };
  for (const change of plan.changes) {
    if (change.action === 'create' || change.action === 'replace') {
      bucket(writes, change).push({
        change,
        step: 'create',
        run: async () => {
          const created = await api.create(change.kind, change.fields ?? {}, siteOf(change));
          const id = String(created.id ?? siteOf(change));
          if (isParentKind(change.kind)) newSiteIds.set(change.name, id);
          return id;
        },
      });
    }
    if (change.action === 'update') {
      bucket(writes, change).push({ change, step: 'update', id: change.id, run: async () => String((await api.update(change.kind, change.id!, changedFields(change), change.siteId)).id ?? change.id) });
    }
    if ((change.action === 'delete' || change.action === 'replace') && change.id && !change.withSite) {
      bucket(deletes, change).push({ change, step: 'delete', id: change.id, run: async () => (await api.remove(change.kind, change.id!, change.siteId), change.id) });
    }
  }

  const result: ApplyResult = { applied: [], failed: [], notAttempted: [] };
  const outcome = ({ change, step, id }: Step): StepOutcome => ({ change, step, ...(id ? { id } : {}) });
  const ordered = (phases: Map<number, Step[]>, direction: 1 | -1) => [...phases.entries()].sort(([a], [b]) => direction * (a - b)).map(([, steps]) => steps);
  for (const phase of [...ordered(writes, 1), ...ordered(deletes, -1)]) {
    if (result.failed.length > 0) {
      result.notAttempted.push(...phase.map(outcome));
      continue;
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, phase.length) }, async () => {
        while (next < phase.length && result.failed.length === 0) {
          const step = phase[next++]!;
          try {
            const id = await step.run();
            const done = { ...outcome(step), ...(id ? { id } : {}) };
            result.applied.push(done);
            options.onStep?.(done);
          } catch (err) {
            const error = err instanceof Error ? err.message : String(err);
            result.failed.push({ ...outcome(step), error });
            options.onStep?.(outcome(step), error);
          }
        }
      }),
    );
    if (result.failed.length > 0) result.notAttempted.push(...phase.slice(next).map(outcome));
  }
  return result;
}

export function renderApplyReport(result: ApplyResult): string {
  const line = (o: StepOutcome) => `${o.step} ${o.change.kind} ${o.change.name}${o.id ? ` (${o.id})` : ''}`;
  const out = [`Applied ${result.applied.length} step(s).`];
  for (const f of result.failed) out.push(`FAILED: ${line(f)}: ${f.error}`);
  if (result.notAttempted.length > 0) {
    out.push(`Not attempted (${result.notAttempted.length}):`);
    for (const n of result.notAttempted) out.push(`  ${line(n)}`);
  }
  if (result.failed.length > 0) out.push('Nothing else was changed. Fix the cause and run apply again: it continues from the live state.');
  return `${out.join('\n')}\n`;
}
