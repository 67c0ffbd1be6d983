// One batch of rule writes on one site: each operation is checked with the very schema and checks
// of its single route (the same compiled validator, checkIpRule, compileUserRegex) and stored as
// there, inside the caller's transaction, in order. Consecutive creates (or deletes) of one kind go
// in one statement through the stores' multi-row functions; updates use the single routes' own.
// The first operation that fails throws an ApiError naming it (`details.operation`, its index),
// which rolls the whole batch back.
import type { FromSchema } from 'json-schema-to-ts';
import {
  IpAccessRuleSpec,
  IpAccessRuleUpdate,
  RateLimitRuleSpec,
  RateLimitRuleUpdate,
  VirtualPatchSpec,
  VirtualPatchUpdate,
} from '../../../schemas/index.ts';
import type { Db } from '../../../platform/db/database.ts';
import { fieldProblems } from '../../../platform/http/error-handler.ts';
import { ApiError, type ErrorCode, type ErrorDetails } from '../../../platform/http/errors.ts';
import { compileStrict } from '../../../schemas/validation.ts';
import { checkIpRule, checkIpRuleExpiry } from '../../../schemas/checks/ip-rule.ts';
import { deleteIpRules, existingRuleKeys, insertIpRules, ruleKey, toIpRule, updateIpRule } from '../ip-access/store.ts';
import { deleteRateLimits, insertRateLimits, newRateLimitFrom, toRateLimit, updateRateLimit } from '../rate-limits/store.ts';
import { compileUserRegex } from '../../../schemas/checks/regex.ts';
import { deletePatches, insertPatches, newPatchFrom, toPatch, updatePatchLabels } from '../virtual-patches/store.ts';

export const MAX_BATCH_OPERATIONS = 1000;
export const BATCH_KINDS = ['ip_access_rule', 'virtual_patch', 'rate_limit_rule'] as const;
export const BATCH_OPS = ['create', 'update', 'delete'] as const;

export type BatchKind = (typeof BATCH_KINDS)[number];
export type BatchOp = (typeof BATCH_OPS)[number];

export interface BatchOperation {
  op: BatchOp;
  kind: BatchKind;
  id?: string | undefined;
  spec?: Record<string, unknown> | undefined;
}

export type BatchResultItem = {
  op: BatchOp;
  kind: BatchKind;
  id: string;
  object: Record<string, unknown> | null;
};

export type BatchOutcome = {
  results: BatchResultItem[];
  counts: { created: number; updated: number; deleted: number };
};

const NOUN: Record<BatchKind, string> = { ip_access_rule: 'IP access rule', virtual_patch: 'virtual patch', rate_limit_rule: 'rate-limit rule' };

/** The body schema each operation's `spec` must satisfy: the single create (POST) or update (PATCH) route's own. */
const SPEC_SCHEMAS = {
  ip_access_rule: { create: IpAccessRuleSpec, update: IpAccessRuleUpdate },
  virtual_patch: { create: VirtualPatchSpec, update: VirtualPatchUpdate },
  rate_limit_rule: { create: RateLimitRuleSpec, update: RateLimitRuleUpdate },
} as const;

/** Compiled once, on the body validator the routes use (so the same compiled function as the single routes). */
const validators = new Map<object, ReturnType<typeof compileStrict>>();
function validatorFor(schema: object) {
  let validate = validators.get(schema);
  if (!validate) {
    validate = compileStrict(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/** An error about operation `index`, in the envelope's terms. */
function operationError(status: number, code: ErrorCode, index: number, operation: BatchOperation, message: string, details: ErrorDetails = {}): ApiError {
  return new ApiError(status, code, `operation ${index} (${operation.op} ${operation.kind}${operation.id ? ` ${operation.id}` : ''}): ${message}`, {
    operation: index,
    op: operation.op,
    kind: operation.kind,
    ...(operation.id ? { id: operation.id } : {}),
    ...details,
  });
}

const invalid = (index: number, operation: BatchOperation, problems: { field: string; message: string }[]) =>
  operationError(422, 'validation_failed', index, operation, `spec is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, { fields: problems });

/** Ajv issues as the single route's error names them (relative to the spec). */
const problemsOf = (errors: NonNullable<ReturnType<typeof compileStrict>['errors']>) => fieldProblems(errors).map(({ field, message }) => ({ field: field || 'spec', message }));

/**
 * Shape checks that need no database: `id` exactly for update/delete, `spec` exactly for
 * create/update and valid against the single route's schema (defaults applied, as there).
 */
export function checkOperations(operations: readonly BatchOperation[]): void {
  operations.forEach((operation, index) => {
    const needsId = operation.op !== 'create';
    if (needsId && !operation.id) throw invalid(index, operation, [{ field: 'id', message: `is required for ${operation.op}` }]);
    if (!needsId && operation.id !== undefined) throw invalid(index, operation, [{ field: 'id', message: 'is not allowed for create (the server assigns it)' }]);
    if (operation.op === 'delete') {
      if (operation.spec !== undefined) throw invalid(index, operation, [{ field: 'spec', message: 'is not allowed for delete' }]);
      return;
    }
    if (operation.spec === undefined) throw invalid(index, operation, [{ field: 'spec', message: `is required for ${operation.op}` }]);
    const validate = validatorFor(SPEC_SCHEMAS[operation.kind][operation.op]);
    if (!validate(operation.spec)) throw invalid(index, operation, problemsOf(validate.errors ?? []));
  });
}

type IpCreate = FromSchema<typeof IpAccessRuleSpec>;
type IpUpdate = FromSchema<typeof IpAccessRuleUpdate>;
type PatchCreate = FromSchema<typeof VirtualPatchSpec>;
type PatchUpdate = FromSchema<typeof VirtualPatchUpdate>;
type LimitCreate = FromSchema<typeof RateLimitRuleSpec>;
type LimitUpdate = FromSchema<typeof RateLimitRuleUpdate>;

const isUniqueViolation = (err: unknown) => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';

/**
 * Applies checked operations to `siteId` in order, in `trx`. Throws the ApiError of the first
 * operation that cannot apply; the caller's transaction then undoes the others.
 */
export async function applyOperations(trx: Db, orgId: string, siteId: string, operations: readonly BatchOperation[], now = Date.now()): Promise<BatchOutcome> {
  // The checks of the single routes that need no database, for every operation before any write.
  const ipChecks = new Map<number, { valueKey: string; expiresAt: Date | null }>();
  operations.forEach((operation, index) => {
    if (operation.kind === 'ip_access_rule' && operation.op === 'create') {
      const checked = checkIpRule(operation.spec as IpCreate, now);
      if (!checked.ok) throw invalid(index, operation, checked.problems);
      ipChecks.set(index, { valueKey: checked.valueKey, expiresAt: checked.expiresAt });
    }
    if (operation.kind === 'ip_access_rule' && operation.op === 'update') {
      const checked = checkIpRuleExpiry((operation.spec as IpUpdate).expires_at, now);
      if (!checked.ok) throw invalid(index, operation, checked.problems);
    }
    if (operation.kind === 'virtual_patch' && operation.op === 'create') {
      const regex = compileUserRegex((operation.spec as PatchCreate).match_regex);
      if (!regex.ok) throw invalid(index, operation, [{ field: 'match_regex', message: regex.reason }]);
    }
  });

  // IP rules the site already has (one query for the whole batch). A clash is checked again right
  // before its insert, so a rule deleted earlier in the same batch may be created again.
  const creates = [...ipChecks.entries()].map(([index, c]) => ({ index, type: (operations[index]!.spec as IpCreate).type, valueKey: c.valueKey }));
  const taken = await existingRuleKeys(trx, siteId, creates);
  const inBatch = new Map<string, number>();
  for (const { index, type, valueKey } of creates) {
    const key = ruleKey(type, valueKey);
    const earlier = inBatch.get(key);
    if (earlier !== undefined) {
      const spec = operations[index]!.spec as IpCreate;
      throw operationError(409, 'conflict', index, operations[index]!, `operation ${earlier} already creates an IP access rule for ${spec.type} ${spec.value}`, { field: 'value' });
    }
    inBatch.set(key, index);
  }

  const outcome: BatchOutcome = { results: [], counts: { created: 0, updated: 0, deleted: 0 } };
  const record = (operation: BatchOperation, id: string, object: Record<string, unknown> | null) => {
    outcome.results.push({ op: operation.op, kind: operation.kind, id, object });
    outcome.counts[operation.op === 'create' ? 'created' : operation.op === 'update' ? 'updated' : 'deleted']++;
  };
  const notFound = (index: number) => operationError(404, 'not_found', index, operations[index]!, `${NOUN[operations[index]!.kind]} not found`);

  // In order, a run at a time: consecutive creates (or deletes) of one kind are one statement, an
  // update is one statement of its own. The outcome is that of applying them one by one.
  let start = 0;
  while (start < operations.length) {
    const first = operations[start]!;
    let end = start + 1;
    if (first.op !== 'update') while (end < operations.length && operations[end]!.kind === first.kind && operations[end]!.op === first.op) end++;
    const run = operations.slice(start, end);
    const indexes = run.map((_, i) => start + i);
    try {
      if (first.op === 'create') {
        const objects = await createRun(trx, orgId, siteId, first.kind, run, indexes, ipChecks, taken);
        run.forEach((operation, i) => record(operation, String(objects[i]!.id), objects[i]!));
      } else if (first.op === 'delete') {
        const ids = run.map((operation) => operation.id!);
        const deleted = await (first.kind === 'ip_access_rule' ? deleteIpRules : first.kind === 'virtual_patch' ? deletePatches : deleteRateLimits)(trx, siteId, ids);
        // The same id twice: the second finds nothing, as it would one at a time.
        const seen = new Set<string>();
        ids.forEach((id, i) => {
          if (!deleted.has(id) || seen.has(id)) throw notFound(indexes[i]!);
          seen.add(id);
        });
        run.forEach((operation) => record(operation, operation.id!, null));
      } else {
        const object = await updateOne(trx, siteId, first);
        if (!object) throw notFound(start);
        record(first, String(object.id), object);
      }
    } catch (err) {
      // A uniqueness rule no check above foresaw: still a conflict, of the run's first operation.
      if (isUniqueViolation(err)) throw operationError(409, 'conflict', start, first, 'an object with the same identity already exists');
      throw err;
    }
    start = end;
  }
  return outcome;
}

/** Consecutive creates of one kind, as one insert; returns the objects as the single routes answer them, in order. */
async function createRun(
  trx: Db,
  orgId: string,
  siteId: string,
  kind: BatchKind,
  run: readonly BatchOperation[],
  indexes: readonly number[],
  ipChecks: ReadonlyMap<number, { valueKey: string; expiresAt: Date | null }>,
  taken: ReadonlySet<string>,
): Promise<Record<string, unknown>[]> {
  if (kind === 'ip_access_rule') {
    const rules = run.map((operation, i) => {
      const spec = operation.spec as IpCreate;
      const checked = ipChecks.get(indexes[i]!)!;
      return { type: spec.type, value: spec.value, valueKey: checked.valueKey, action: spec.action, note: spec.note ?? '', expiresAt: checked.expiresAt, labels: spec.labels ?? {} };
    });
    // A rule the site had when the batch started clashes unless an earlier operation deleted it: ask again now.
    const suspect = rules.filter((rule) => taken.has(ruleKey(rule.type, rule.valueKey)));
    if (suspect.length > 0) {
      const still = await existingRuleKeys(trx, siteId, suspect);
      const i = rules.findIndex((rule) => still.has(ruleKey(rule.type, rule.valueKey)));
      if (i >= 0) throw operationError(409, 'conflict', indexes[i]!, run[i]!, `the site already has an IP access rule for ${rules[i]!.type} ${rules[i]!.value}`, { field: 'value' });
    }
    return (await insertIpRules(trx, orgId, siteId, rules)).map(toIpRule);
  }
  if (kind === 'virtual_patch') {
    const patches = run.map((operation) => newPatchFrom(operation.spec as PatchCreate));
    return (await insertPatches(trx, orgId, siteId, patches)).map(toPatch);
  }
  const limits = run.map((operation) => newRateLimitFrom(operation.spec as LimitCreate));
  return (await insertRateLimits(trx, orgId, siteId, limits)).map(toRateLimit);
}

/** One update, through the single route's store function; undefined when the rule does not exist. */
async function updateOne(trx: Db, siteId: string, operation: BatchOperation): Promise<Record<string, unknown> | undefined> {
  const id = operation.id!;
  if (operation.kind === 'ip_access_rule') {
    const { action, note, expires_at, labels } = operation.spec as IpUpdate;
    // Checked before any write (applyOperations).
    const expiresAt = expires_at === undefined || expires_at === null ? expires_at : new Date(expires_at);
    const row = await updateIpRule(trx, siteId, id, { action, note, expiresAt, labels });
    return row && toIpRule(row);
  }
  if (operation.kind === 'virtual_patch') {
    const row = await updatePatchLabels(trx, siteId, id, (operation.spec as PatchUpdate).labels ?? {});
    return row && toPatch(row);
  }
  const row = await updateRateLimit(trx, siteId, id, operation.spec as LimitUpdate);
  return row && toRateLimit(row);
}
