// Plan-time impact previews (issue 43): what a planned change to a Shield site or one of its rules
// would have done to the traffic the site actually saw, asked of POST /api/v1/shield/sites/{id}/impact
// and shown as one warning on the resource. A preview is advice: any failure (404, 429, a timeout,
// a proposal the API refuses) means no warning, never a failed plan, and nothing is retried — a
// plan must not wait.
import type { AegisClient } from '../../client/client.ts';
import type { operations } from '../../client/api-types.ts';
import type { Kind } from '../../reconciler/kinds/index.ts';
import type { Diagnostic, TfObject, TfValue } from '../framework/contract.ts';
import { attr, canonicalJson, containsUnknown, type Json } from './values.ts';

type ImpactOperationSpec = operations['shieldImpact.preview'];
type ImpactBody = ImpactOperationSpec['requestBody']['content']['application/json'];
export type ImpactAnswer = ImpactOperationSpec['responses'][200]['content']['application/json'];
type ChangeStats = ImpactAnswer['totals']['newly_blocked'];

export const IMPACT_SUMMARY = 'Impact on recorded traffic';
export const DEFAULT_IMPACT_WINDOW_MS = 24 * 3_600_000;
/** Longest a plan waits for one preview. */
export const IMPACT_TIMEOUT_MS = 15_000;

/** The rule kinds a preview takes, by their name in the rule batch (and so in `operations`). */
export const IMPACT_RULE_KINDS = { IpAccessRule: 'ip_access_rule', VirtualPatch: 'virtual_patch', RateLimitRule: 'rate_limit_rule' } as const satisfies Partial<Record<Kind, string>>;
export type ImpactRuleKind = (typeof IMPACT_RULE_KINDS)[keyof typeof IMPACT_RULE_KINDS];

/** The site settings a decision depends on: the rest of a site's update changes no verdict. */
const SITE_SETTINGS = ['mode', 'path_case', 'managed_rules'] as const;

export interface ImpactOperation {
  op: 'create' | 'update' | 'delete';
  kind: ImpactRuleKind;
  id?: string;
  /** The body the provider's own create or update would send. */
  spec?: Record<string, Json>;
}

export interface ImpactProposal {
  site?: Record<string, Json>;
  operations?: ImpactOperation[];
}

/** A proposal for one site. */
export interface SiteProposal {
  siteId: string;
  proposal: ImpactProposal;
  /**
   * What the warning names, for a deletion: Terraform shows a removed resource's warning without
   * its address (no configuration to point at), so the sentence says which object it is about.
   */
  subject?: string;
  /** The change replaces the object: its last operation creates the replacement. */
  replacement?: boolean;
}

/** The request bodies the resource sends on apply (resource.ts), so a preview proposes exactly what apply would write. */
export interface RequestBodies {
  create(planned: TfObject, config: TfObject | null): Record<string, Json>;
  update(prior: TfObject, planned: TfObject, config: TfObject | null): Record<string, Json>;
}

/** One planned change as PlanResourceChange sees it. */
export interface PlannedChange {
  prior: TfObject | null;
  planned: TfObject | null;
  config: TfObject | null;
  replacing: boolean;
}

const knownId = (value: TfValue): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * The proposal for a planned change of a rule: a create, an update with the changed fields, a
 * delete, or a replacement (delete, then create). Undefined when there is nothing to preview: no
 * change, a site not known yet (created in the same apply), or a value known only at apply.
 */
export function ruleProposal(kind: ImpactRuleKind, change: PlannedChange, bodies: RequestBodies, describe: (prior: TfObject) => string): SiteProposal | undefined {
  const { prior, planned, config } = change;
  const priorId = prior ? knownId(attr(prior, 'id')) : undefined;
  if (planned === null) {
    const siteId = prior ? knownId(attr(prior, 'site_id')) : undefined;
    if (!prior || !siteId || !priorId) return undefined;
    return { siteId, proposal: { operations: [{ op: 'delete', kind, id: priorId }] }, subject: `Deleting ${describe(prior)}` };
  }
  // Unknown site_id (a site created in the same apply) or any value computed from another object.
  if (containsUnknown(config)) return undefined;
  const siteId = knownId(attr(planned, 'site_id'));
  if (!siteId) return undefined;
  if (prior === null) return { siteId, proposal: { operations: [{ op: 'create', kind, spec: bodies.create(planned, config) }] } };
  if (!priorId) return undefined;
  if (change.replacing) {
    const create: ImpactOperation = { op: 'create', kind, spec: bodies.create(planned, config) };
    // Moved to another site: what it does there (one preview per change).
    if (knownId(attr(prior, 'site_id')) !== siteId) return { siteId, proposal: { operations: [create] }, replacement: true };
    return { siteId, proposal: { operations: [{ op: 'delete', kind, id: priorId }, create] }, replacement: true };
  }
  const spec = bodies.update(prior, planned, config);
  return Object.keys(spec).length > 0 ? { siteId, proposal: { operations: [{ op: 'update', kind, id: priorId, spec }] } } : undefined;
}

/** The proposal for an update of an existing site: its changed mode, path_case and managed_rules, when any changes. */
export function siteProposal(change: PlannedChange, bodies: RequestBodies): SiteProposal | undefined {
  const { prior, planned, config } = change;
  if (!prior || !planned || change.replacing) return undefined;
  const siteId = knownId(attr(prior, 'id'));
  if (!siteId || SITE_SETTINGS.some((name) => containsUnknown(attr(planned, name)))) return undefined;
  const changes = bodies.update(prior, planned, config);
  const site = Object.fromEntries(SITE_SETTINGS.flatMap((name) => (changes[name] === undefined ? [] : [[name, changes[name]]])));
  return Object.keys(site).length > 0 ? { siteId, proposal: { site } } : undefined;
}

// ---- the summary -------------------------------------------------------------------------------

const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
const requestsFrom = (stats: ChangeStats): string => `${counted(stats.requests, 'request')} from ${counted(stats.clients, 'client')}`;

/** `24 h`, `7 days`, `30 min`: the window as the sentence names it. */
export function windowText(ms: number): string {
  const hours = ms / 3_600_000;
  if (hours >= 48 && hours % 24 === 0) return `${hours / 24} days`;
  if (Number.isInteger(hours)) return `${hours} h`;
  return `${Math.round(ms / 60_000)} min`;
}

/** How many of these requests the origin had answered 2xx: by their one status when they share it (`2 answered 200`). */
function answeredOk(stats: ChangeStats): string | undefined {
  const ok = stats.origin_statuses.classes['2xx'] ?? 0;
  if (ok === 0) return undefined;
  const codes = Object.keys(stats.origin_statuses.exact).filter((code) => code.startsWith('2'));
  return `${ok} answered ${codes.length === 1 ? codes[0] : '2xx'} by the origin`;
}

const isoSeconds = (iso: string): string => iso.replace(/\.\d+Z$/, 'Z');

/**
 * The warning's detail, e.g. "would have blocked 37 requests from 4 clients in the last 24 h (2
 * answered 200 by the origin)."; null when the record holds no traffic or no outcome changes.
 */
export function describeImpact(answer: ImpactAnswer, windowMs: number, subject?: string): string | null {
  if (answer.covered.recorded_since === null) return null;
  const { newly_blocked: blocked, newly_challenged: challenged, newly_allowed: allowed, coverage } = answer.totals;
  const clauses: { counts: string; note?: string | undefined }[] = [];
  if (blocked.requests > 0) clauses.push({ counts: `blocked ${requestsFrom(blocked)}`, note: answeredOk(blocked) });
  if (challenged.requests > 0) clauses.push({ counts: `challenged ${requestsFrom(challenged)}` });
  if (allowed.requests > 0) clauses.push({ counts: `let through ${requestsFrom(allowed)}`, note: 'blocked or challenged now' });
  if (clauses.length === 0) return null;
  const window = `in the last ${windowText(windowMs)}`;
  const parts = clauses.map((clause, index) => `${clause.counts}${index === 0 ? ` ${window}` : ''}${clause.note ? ` (${clause.note})` : ''}`);
  const joined = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  const sentences = [`${subject ? `${subject} ` : ''}would have ${joined}.`];
  // The counts of rules that read parameter values cover only the requests whose values were kept.
  if (!coverage.exact && coverage.with_values < coverage.records) sentences.push(`Values sampled: ${coverage.with_values} of ${coverage.records} requests (the counts are a lower bound).`);
  if (answer.covered.since !== null && Date.parse(answer.covered.since) > Date.parse(answer.window.since) + 60_000) {
    sentences.push(`Traffic is recorded only since ${isoSeconds(answer.covered.since)}.`);
  }
  if (answer.warnings.length > 0) sentences.push(`${answer.warnings.join('; ')}.`);
  return sentences.join(' ');
}

// ---- asking the API ----------------------------------------------------------------------------

export interface ImpactPreviewer {
  /** The warning for `proposal` on `siteId`, or none: no traffic, nothing changes, or the API could not answer. Never rejects. */
  preview(change: SiteProposal): Promise<Diagnostic[]>;
}

export interface ImpactPreviewerOptions {
  /** A client that does not retry (a 429 means no preview, not a stalled plan). */
  client: AegisClient;
  windowMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

export function createImpactPreviewer(options: ImpactPreviewerOptions): ImpactPreviewer {
  const windowMs = options.windowMs ?? DEFAULT_IMPACT_WINDOW_MS;
  const timeoutMs = options.timeoutMs ?? IMPACT_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  // Sites whose record is empty: asked once per provider process (one plan), then skipped.
  const withoutTraffic = new Set<string>();
  // A replacement is planned twice: once as the change (previewed as delete + create), then its
  // create alone, whose warnings Terraform drops. That second call is not sent.
  const replacedCreates = new Set<string>();
  const createKey = (siteId: string, operation: ImpactOperation): string => `${siteId} ${operation.kind} ${canonicalJson(operation.spec ?? {})}`;

  return {
    async preview({ siteId, proposal, replacement, subject }) {
      const operations = proposal.operations ?? [];
      const last = operations[operations.length - 1];
      if (replacement && last) replacedCreates.add(createKey(siteId, last));
      else if (operations.length === 1 && last?.op === 'create' && replacedCreates.delete(createKey(siteId, last))) return [];
      if (withoutTraffic.has(siteId)) return [];
      try {
        const answer = await options.client.POST('/api/v1/shield/sites/{id}/impact', {
          params: { path: { id: siteId } },
          // Checked by the API as apply checks it: a proposal it refuses is a 422, i.e. no preview.
          body: { ...proposal, since: new Date(now() - windowMs).toISOString() } as ImpactBody,
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (answer.covered.recorded_since === null) withoutTraffic.add(siteId);
        const detail = describeImpact(answer, windowMs, subject);
        return detail === null ? [] : [{ severity: 'warning', summary: IMPACT_SUMMARY, detail }];
      } catch {
        return [];
      }
    },
  };
}
