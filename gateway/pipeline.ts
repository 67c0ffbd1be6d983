// The decision for one request, in a fixed order (docs/shield-gateway.md):
//
//   1. IP access allow  — an allowed client skips every other rule
//   2. IP access deny / challenge (address, network, ASN, country)
//   3. standing denies from rate-limit escalation
//   4. rate limits
//   5. requests that cannot be inspected (inspect/body.ts: a body too large, in an unknown coding or
//      charset, unparsable, a decompression bomb; too many parameters), when a rule needs to read them
//   6. virtual patches
//   7. managed rules
//   8. schema enforcement
//
// A POST that names another method (an override header, a `_method` field: inspect/
// method-override.ts) is evaluated as each method it names as well as POST wherever a rule looks
// at methods (rate limits, virtual patches, managed rules, the schema).
//
// A matching rule acts according to the site's mode: `block` applies the rule's own action,
// `challenge` softens blocks into challenges, `log` only records what would have happened. A rule
// whose own action is `log` records and lets evaluation continue, so a later blocking rule still
// blocks. A clearance cookie (a solved challenge) answers challenges only: a rule whose own action
// is `challenge` is passed, but a block the site's challenge mode softened blocks a cleared client
// after all — solving a puzzle once must not open the way past IP denies, rate limits and patches.
import type { DecisionAction, ManagedAnomaly, RuleKind } from './decision.ts';
import type { InspectedRequest } from './inspected-request.ts';
import type { ParsedIp } from '../schemas/checks/ip.ts';
import type { AsnDatabase } from './rules/asn-db.ts';
import { REFUSAL_STATUS } from './inspect/body.ts';
import { identityKeys, ruleApplies } from './rules/rate-limits.ts';
import { escalationKeys, type CompiledSite } from './sites/compile.ts';
import { requestViews } from './inspect/method-override.ts';
import { slidingCount, type RateState } from './state/rate-state.ts';

export interface Verdict {
  action: DecisionAction;
  ruleKind: RuleKind | null;
  ruleId: string | null;
  would: 'block' | 'challenge' | null;
  /** For `block`: 403, or 429 for rate limits (with `retryAfter` seconds). */
  status: number;
  retryAfter?: number;
  /** Managed rules: the score and signals behind the decision. */
  anomaly?: ManagedAnomaly;
}

export interface RequestFacts {
  request: InspectedRequest;
  clientIp: string;
  parsedIp: ParsedIp;
  /** Whether the client holds a valid clearance for this site (asked only when a challenge is due). */
  hasClearance: () => boolean;
}

export interface PipelineDeps {
  state: RateState;
  asnDb: AsnDatabase | undefined;
  /** Called when the counter store fails; rate limiting then fails open for that request. */
  onStateError: (err: unknown) => void;
  now?: () => number;
}

export const ALLOW: Verdict = { action: 'allow', ruleKind: null, ruleId: null, would: null, status: 200 };

type RuleAction = 'block' | 'challenge' | 'log';

/**
 * One request's evaluation: the first rule that only logged, and whether the client holds a
 * clearance (asked once). decide() runs the stages below on one evaluation; the impact replay runs
 * them on evaluations of its own to reuse the answers of the stages that read no counters.
 */
export class Evaluation {
  /** The first rule that only logged; the verdict when nothing acts. */
  logged: Verdict | null = null;
  #cleared: boolean | undefined;

  constructor(private readonly site: CompiledSite, readonly facts: RequestFacts) {}

  /** The verdict if the rule ends evaluation, else null (recorded or cleared, carry on). */
  apply(ruleAction: RuleAction, kind: RuleKind, ruleId: string | null, status = 403, retryAfter?: number, anomaly?: ManagedAnomaly): Verdict | null {
    const extra = anomaly ? { anomaly } : {};
    if (ruleAction === 'log' || this.site.mode === 'log') {
      this.logged ??= { action: 'log', ruleKind: kind, ruleId, would: ruleAction === 'log' ? null : ruleAction, status, ...extra };
      return null;
    }
    const effective = this.site.mode === 'challenge' && ruleAction === 'block' ? 'challenge' : ruleAction;
    if (effective === 'challenge') {
      this.#cleared ??= this.facts.hasClearance();
      if (!this.#cleared) return { action: 'challenge', ruleKind: kind, ruleId, would: null, status: 403, ...extra };
      if (ruleAction === 'challenge') return null;
    }
    return { action: 'block', ruleKind: kind, ruleId, would: null, status, ...(retryAfter !== undefined ? { retryAfter } : {}), ...extra };
  }
}

/** The first non-null answer of `check` for the request and each of its override views. */
function firstOf<T>(views: readonly InspectedRequest[], check: (view: InspectedRequest) => T | null): T | null {
  for (const view of views) {
    const answer = check(view);
    if (answer !== null) return answer;
  }
  return null;
}

/** Stages 1–2: the client's address, network, ASN and country. Reads neither counters nor the request. */
export function accessStage(site: CompiledSite, facts: RequestFacts, deps: PipelineDeps, evaluation: Evaluation): Verdict | null {
  if (!site.ipAccess) return null;
  const origin = site.ipAccess.needsAsn && deps.asnDb ? deps.asnDb.lookup(facts.parsedIp) : null;
  const match = site.ipAccess.match(facts.parsedIp, origin);
  if (match?.action === 'allow') return { ...ALLOW, ruleKind: 'ip_access', ruleId: match.ruleId };
  if (!match) return null;
  return evaluation.apply(match.action === 'deny' ? 'block' : 'challenge', 'ip_access', match.ruleId);
}

/** Stages 3–4: standing denies and rate limits, the only stages that read and write counters. */
export async function rateStage(site: CompiledSite, facts: RequestFacts, deps: PipelineDeps, views: readonly InspectedRequest[], evaluation: Evaluation): Promise<Verdict | null> {
  const { request } = facts;
  const now = deps.now?.() ?? Date.now();
  try {
    const keys = escalationKeys(site, request.headers, facts.clientIp);
    // The in-process store answers synchronously: awaiting only real promises saves a microtask per rule.
    const pending = keys.length > 0 ? deps.state.deniedUntil(keys, now) : null;
    const standing = pending instanceof Promise ? await pending : pending;
    if (standing) {
      const verdict = evaluation.apply('block', 'escalation', standing.ruleId);
      if (verdict) return verdict;
    }
    for (const rule of site.rateLimitsByPath.candidates(request.path)) {
      if (!views.some((view) => ruleApplies(rule, view.method, request.path))) continue;
      // Over budget when any identity the request carries is (each API key it presents is counted).
      const over: string[] = [];
      for (const identity of identityKeys(rule, request.headers, facts.clientIp)) {
        const hit = deps.state.hit(`${site.id}:${rule.id}:${identity}`, rule.windowMs, now);
        const counts = hit instanceof Promise ? await hit : hit;
        if (slidingCount(counts, rule.windowMs, now) > rule.budget) over.push(identity);
      }
      if (over.length === 0) continue;
      if (rule.escalateMs > 0) for (const identity of over) await deps.state.deny(`${site.id}:${identity}`, { until: now + rule.escalateMs, ruleId: rule.id });
      const retryAfter = Math.ceil((rule.escalateMs > 0 ? rule.escalateMs : rule.windowMs - (now % rule.windowMs)) / 1000);
      const verdict = evaluation.apply(rule.action, 'rate_limit', rule.id, 429, retryAfter);
      if (verdict) return verdict;
    }
  } catch (err) {
    deps.onStateError(err);
  }
  return null;
}

/** Stages 5–8: what the request carries — inspection refusals, virtual patches, managed rules, the schema. Reads no counters. */
export function contentStage(site: CompiledSite, request: InspectedRequest, views: readonly InspectedRequest[], evaluation: Evaluation): Verdict | null {
  // Refused only when some rule reads the request: patches on this path, managed rules, or the schema's body check.
  const bodyRead = request.bodyState !== 'none' && request.bodyState !== 'not_inspected';
  if (bodyRead || site.managed || views.some((view) => site.patches?.inspectsBody(view.method, request.path))) {
    const refusal = request.refusal;
    if (refusal) {
      const verdict = evaluation.apply('block', 'inspection', refusal, REFUSAL_STATUS[refusal]);
      if (verdict) return verdict;
    }
  }

  const patches = site.patches;
  if (patches) {
    const hit = firstOf(views, (view) => patches.match(view));
    if (hit) {
      const verdict = evaluation.apply(hit.action, 'virtual_patch', hit.patchId);
      if (verdict) return verdict;
    }
  }

  const managed = site.managed;
  if (managed) {
    const hit = firstOf(views, (view) => managed.match(view));
    if (hit) {
      const verdict = evaluation.apply('block', 'managed', hit.ruleId, 403, undefined, { score: hit.score, signals: [...hit.signals] });
      if (verdict) return verdict;
    }
  }

  const schema = site.schema;
  if (schema) {
    const violation = firstOf(views, (view) => schema.enforcer.check(view, schema.strictness, site.foldCase) ?? null);
    if (violation) {
      // The operation (operationId or `METHOD /template`) stands for the rule; null for an undeclared path.
      const verdict = evaluation.apply('block', 'schema', violation.operation);
      if (verdict) return verdict;
    }
  }
  return null;
}

export async function decide(site: CompiledSite, facts: RequestFacts, deps: PipelineDeps): Promise<Verdict> {
  const evaluation = new Evaluation(site, facts);
  const access = accessStage(site, facts, deps, evaluation);
  if (access) return access;
  const views = requestViews(facts.request);
  if (site.rateLimits.length > 0) {
    const limited = await rateStage(site, facts, deps, views, evaluation);
    if (limited) return limited;
  }
  return contentStage(site, facts.request, views, evaluation) ?? evaluation.logged ?? ALLOW;
}
