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
// A matching rule acts according to the site's mode: `block` applies the rule's own action,
// `challenge` softens blocks into challenges, `log` only records what would have happened. A rule
// whose own action is `log` records and lets evaluation continue, so a later blocking rule still
// blocks. A challenge is skipped for a client holding a valid clearance cookie.
import type { DecisionAction, RuleKind } from './decision.ts';
import type { InspectedRequest } from './inspected-request.ts';
import type { ParsedIp } from '../net/ip.ts';
import type { AsnDatabase } from './rules/asn-db.ts';
import { REFUSAL_STATUS } from './inspect/body.ts';
import { identityKey, ruleApplies } from './rules/rate-limits.ts';
import { escalationKeys, type CompiledSite } from './sites/compile.ts';
import { slidingCount, type RateState } from './state/rate-state.ts';

export interface Verdict {
  action: DecisionAction;
  ruleKind: RuleKind | null;
  ruleId: string | null;
  would: 'block' | 'challenge' | null;
  /** For `block`: 403, or 429 for rate limits (with `retryAfter` seconds). */
  status: number;
  retryAfter?: number;
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

class Evaluation {
  /** The first rule that only logged; the verdict when nothing acts. */
  logged: Verdict | null = null;
  #cleared: boolean | undefined;

  constructor(private readonly site: CompiledSite, private readonly facts: RequestFacts) {}

  /** The verdict if the rule ends evaluation, else null (recorded or cleared, carry on). */
  apply(ruleAction: RuleAction, kind: RuleKind, ruleId: string | null, status = 403, retryAfter?: number): Verdict | null {
    if (ruleAction === 'log' || this.site.mode === 'log') {
      this.logged ??= { action: 'log', ruleKind: kind, ruleId, would: ruleAction === 'log' ? null : ruleAction, status };
      return null;
    }
    const effective = this.site.mode === 'challenge' && ruleAction === 'block' ? 'challenge' : ruleAction;
    if (effective === 'challenge') {
      this.#cleared ??= this.facts.hasClearance();
      if (this.#cleared) return null;
      return { action: 'challenge', ruleKind: kind, ruleId, would: null, status: 403 };
    }
    return { action: 'block', ruleKind: kind, ruleId, would: null, status, ...(retryAfter !== undefined ? { retryAfter } : {}) };
  }
}

export async function decide(site: CompiledSite, facts: RequestFacts, deps: PipelineDeps): Promise<Verdict> {
  const evaluation = new Evaluation(site, facts);
  const { request } = facts;

  if (site.ipAccess) {
    const origin = site.ipAccess.needsAsn && deps.asnDb ? deps.asnDb.lookup(facts.parsedIp) : null;
    const match = site.ipAccess.match(facts.parsedIp, origin);
    if (match?.action === 'allow') return { ...ALLOW, ruleKind: 'ip_access', ruleId: match.ruleId };
    if (match) {
      const verdict = evaluation.apply(match.action === 'deny' ? 'block' : 'challenge', 'ip_access', match.ruleId);
      if (verdict) return verdict;
    }
  }

  if (site.rateLimits.length > 0) {
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
        if (!ruleApplies(rule, request.method, request.path)) continue;
        const identity = identityKey(rule, request.headers, facts.clientIp);
        const hit = deps.state.hit(`${site.id}:${rule.id}:${identity}`, rule.windowMs, now);
        const counts = hit instanceof Promise ? await hit : hit;
        if (slidingCount(counts, rule.windowMs, now) <= rule.budget) continue;
        if (rule.escalateMs > 0) await deps.state.deny(`${site.id}:${identity}`, { until: now + rule.escalateMs, ruleId: rule.id });
        const retryAfter = Math.ceil((rule.escalateMs > 0 ? rule.escalateMs : rule.windowMs - (now % rule.windowMs)) / 1000);
        const verdict = evaluation.apply(rule.action, 'rate_limit', rule.id, 429, retryAfter);
        if (verdict) return verdict;
      }
    } catch (err) {
      deps.onStateError(err);
    }
  }

  // Refused only when some rule reads the request: patches on this path, managed rules, or the schema's body check.
  const bodyRead = request.bodyState !== 'none' && request.bodyState !== 'not_inspected';
  if (bodyRead || site.managed || site.patches?.inspectsBody(request.method, request.path)) {
    const refusal = request.refusal;
    if (refusal) {
      const verdict = evaluation.apply('block', 'inspection', refusal, REFUSAL_STATUS[refusal]);
      if (verdict) return verdict;
    }
  }

  if (site.patches) {
    const hit = site.patches.match(request);
    if (hit) {
      const verdict = evaluation.apply(hit.action, 'virtual_patch', hit.patchId);
      if (verdict) return verdict;
    }
  }

  if (site.managed) {
    const hit = site.managed.match(request);
    if (hit) {
      const verdict = evaluation.apply('block', 'managed', hit.ruleId);
      if (verdict) return verdict;
    }
  }

  if (site.schema) {
    const violation = site.schema.enforcer.check(request, site.schema.strictness, site.foldCase);
    if (violation) {
      // The operation (operationId or `METHOD /template`) stands for the rule; null for an undeclared path.
      const verdict = evaluation.apply('block', 'schema', violation.operation);
      if (verdict) return verdict;
    }
  }

  return evaluation.logged ?? ALLOW;
}
