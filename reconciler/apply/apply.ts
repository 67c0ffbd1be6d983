// Executes a plan in the kind registry's dependency order (sites, then what hangs off them, then
// schedules and webhooks), then deletions in reverse order (rules before their sites). Replacements create the new object before the
// old one is deleted, so protection never lapses in between. Rule writes of one site (virtual
// patches, IP and rate-limit rules) go in batches of up to RULE_BATCH_LIMIT per request when the API
// offers it: a batch is one request and one transaction, so it applies whole or not at all. On the
// first failure nothing new is started; the result says exactly what was applied, what failed (the
// change a failed batch names) and what was not attempted (the rest of that batch too), and
// re-running converges (creates carry ownership labels, so a second plan finds what was made).
import { isParentKind, kindEntry } from '../kinds/index.ts';
import { RULE_BATCH_LIMIT, type Fields, type ResourceApi, type RuleBatchOperation } from '../live/resources.ts';
import type { Plan, PlannedChange } from '../plan/plan.ts';
import { errorMessage } from '../../schemas/json-value.ts';

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
  /** For a rule of a site: the operation it is in a rule batch (the site resolved when its phase starts). */
  batched?: () => RuleBatchOperation;
}

/**
 * A phase with fewer rule writes than this sends them one request each: a plan that touches a few
 * rules (an edit under `aegis watch`) reports and retries change by change, as it always did.
 */
export const RULE_BATCH_MIN = 50;

/** What runs as one request: one step, or a batch of one site's rule steps. */
type Unit = { steps: [Step]; siteId?: undefined } | { steps: Step[]; siteId: string };

export interface ApplyOptions {
  concurrency?: number;
  /** Send rule writes of a site in batches when the API can (default true); false: one request per change. */
  batch?: boolean;
  /** Batch only a phase with at least this many rule writes (default RULE_BATCH_MIN); fewer go one request each, as before. */
  batchMin?: number;
  onStep?: (outcome: StepOutcome, error?: string) => void;
}

/**
 * The fields an update sends: those that differ (a digest, such as a schema's hash, stands for its
 * field), and every write-only field config gives (a certificate's key goes with its certificate).
 * A site's update sends exactly this as its PATCH body; impact previews propose the same.
 */
export function changedFields(change: PlannedChange): Fields {
  const { digest, definition } = kindEntry(change.kind);
  const fields: Fields = {};
  for (const d of change.diff) {
    const name = digest && d.field === digest.as ? digest.field : d.field;
    fields[name] = change.fields?.[name];
  }
  for (const field of definition.meta.sensitive) if (change.fields?.[field] !== undefined) fields[field] = change.fields[field];
  return fields;
}

/** The writes a change takes: a replacement creates the new object before the old one goes; a deletion with its site takes none. */
export function changeSteps(change: PlannedChange): StepOutcome['step'][] {
  const steps: StepOutcome['step'][] = [];
  if (change.action === 'create' || change.action === 'replace') steps.push('create');
  if (change.action === 'update') steps.push('update');
  if ((change.action === 'delete' || change.action === 'replace') && change.id && !change.withSite) steps.push('delete');
  return steps;
}

/** One step of a rule change as an operation of its site's rule batch: what apply sends, and what an impact preview proposes. */
export function batchOperation(change: PlannedChange, step: StepOutcome['step']): RuleBatchOperation {
  if (step === 'create') return { op: 'create', kind: change.kind, fields: change.fields ?? {} };
  if (step === 'update') return { op: 'update', kind: change.kind, id: change.id!, fields: changedFields(change) };
  return { op: 'delete', kind: change.kind, id: change.id! };
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
  const run = (change: PlannedChange, step: StepOutcome['step']): (() => Promise<string | undefined>) => {
    if (step === 'create') {
      return async () => {
        const created = await api.create(change.kind, change.fields ?? {}, siteOf(change));
        const id = String(created.id ?? siteOf(change));
        if (isParentKind(change.kind)) newSiteIds.set(change.name, id);
        return id;
      };
    }
    if (step === 'update') return async () => String((await api.update(change.kind, change.id!, changedFields(change), change.siteId)).id ?? change.id);
    return async () => (await api.remove(change.kind, change.id!, change.siteId), change.id);
  };
  for (const change of plan.changes) {
    for (const step of changeSteps(change)) {
      bucket(step === 'delete' ? deletes : writes, change).push({
        change,
        step,
        ...(step !== 'create' && change.id ? { id: change.id } : {}),
        run: run(change, step),
        batched: () => batchOperation(change, step),
      });
    }
  }

  const result: ApplyResult = { applied: [], failed: [], notAttempted: [] };
  const outcome = ({ change, step, id }: Step): StepOutcome => ({ change, step, ...(id ? { id } : {}) });
  const ordered = (phases: Map<number, Step[]>, direction: 1 | -1) => [...phases.entries()].sort(([a], [b]) => direction * (a - b)).map(([, steps]) => steps);
  const batching = options.batch !== false && api.batch !== undefined;

  /** A phase's requests: rule steps grouped by site into batches (sites are known once earlier phases ran), the rest one each. */
  const batchable = (step: Step) => batching && step.batched !== undefined && api.batchable?.(step.change.kind) === true;
  const unitsOf = (phase: Step[]): Unit[] => {
    const units: Unit[] = [];
    const bySite = new Map<string, Step[]>();
    const batchPhase = phase.filter(batchable).length >= (options.batchMin ?? RULE_BATCH_MIN);
    for (const step of phase) {
      const siteId = siteOf(step.change) ?? step.change.siteId;
      if (batchPhase && batchable(step) && siteId !== undefined) {
        if (!bySite.has(siteId)) bySite.set(siteId, []);
        bySite.get(siteId)!.push(step);
      } else units.push({ steps: [step] });
    }
    for (const [siteId, unsorted] of bySite) {
      // Changes of one phase do not depend on each other: grouped by kind and step, consecutive
      // operations of one kind are one statement on the server.
      const steps = [...unsorted].sort((a, b) => (a.change.kind + a.step < b.change.kind + b.step ? -1 : a.change.kind + a.step > b.change.kind + b.step ? 1 : 0));
      for (let i = 0; i < steps.length; i += RULE_BATCH_LIMIT) units.push({ steps: steps.slice(i, i + RULE_BATCH_LIMIT), siteId });
    }
    return units;
  };

  const applied = (step: Step, id: string | undefined) => {
    const done = { ...outcome(step), ...(id ? { id } : {}) };
    result.applied.push(done);
    options.onStep?.(done);
  };
  const failed = (step: Step, error: string) => {
    result.failed.push({ ...outcome(step), error });
    options.onStep?.(outcome(step), error);
  };

  const runUnit = async (unit: Unit): Promise<void> => {
    if (unit.siteId === undefined) {
      const [step] = unit.steps;
      try {
        applied(step, await step.run());
      } catch (err) {
        failed(step, errorMessage(err));
      }
      return;
    }
    const { steps, siteId } = unit;
    try {
      const answers = await api.batch!(siteId, steps.map((step) => step.batched!()));
      steps.forEach((step, i) => applied(step, answers[i]?.id ?? step.id));
    } catch (err) {
      // The batch applied nothing. The change it names failed; the others were not applied. An
      // error that names none (the request itself failed) is every change's.
      const index = failingOperation(err, steps.length);
      const note = `(batch of ${steps.length} change(s) on site ${siteId}; none applied)`;
      if (index === undefined) {
        for (const step of steps) failed(step, `${errorMessage(err)} ${note}`);
        return;
      }
      failed(steps[index]!, `${errorMessage(err)} ${note}`);
      result.notAttempted.push(...steps.filter((_, i) => i !== index).map(outcome));
    }
  };

  for (const phase of [...ordered(writes, 1), ...ordered(deletes, -1)]) {
    if (result.failed.length > 0) {
      result.notAttempted.push(...phase.map(outcome));
      continue;
    }
    const units = unitsOf(phase);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, units.length) }, async () => {
        while (next < units.length && result.failed.length === 0) await runUnit(units[next++]!);
      }),
    );
    if (result.failed.length > 0) result.notAttempted.push(...units.slice(next).flatMap((unit) => unit.steps.map(outcome)));
  }
  return result;
}


/** The index of the operation a failed batch names (`details.operation` of the API's error), if any. */
function failingOperation(err: unknown, size: number): number | undefined {
  const details = (err as { details?: unknown } | null)?.details;
  const index = typeof details === 'object' && details !== null ? (details as { operation?: unknown }).operation : undefined;
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < size ? index : undefined;
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
