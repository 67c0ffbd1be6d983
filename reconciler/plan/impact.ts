// What a plan would have done to the traffic its sites actually saw: for every existing site with
// planned changes to its settings (mode, path_case, managed_rules) or its rules (IP rules, virtual
// patches, rate limits), the proposal exactly as apply would send it — the site's PATCH body and
// its rule batch operations, built by apply's own functions — goes to the impact preview
// (POST /api/v1/shield/sites/{id}/impact), and the answer is attributed back to the changes that
// made it: a rule by the index of its operation, the mode and managed rules to the site's change.
//
// An impact preview is advice, never a reason for a plan to fail: a server without the route (404),
// a rate limit (429), a network error leave the plan as it is, with a note. New sites have no
// traffic, and a site whose record holds nothing shows no impact.
import { AegisApiError, type AegisClient, type paths } from '../../client/client.ts';
import { batchOperation, changedFields, changeSteps } from '../apply/apply.ts';
import { isParentKind } from '../kinds/index.ts';
import { RULE_BATCH_LIMIT, type Fields } from '../live/resources.ts';
import { batchRequestOperations, isBatchKind } from '../live/rest-resources.ts';
import { errorMessage } from '../../schemas/json-value.ts';
import { DEFAULT_IMPACT_WINDOW, readImpactWindow } from '../../schemas/impact-window.ts';
import type { Plan, PlannedChange } from './plan.ts';

const IMPACT_PATH = '/api/v1/shield/sites/{id}/impact';
type PreviewOperation = paths[typeof IMPACT_PATH]['post'];

export type ImpactRequest = NonNullable<PreviewOperation['requestBody']>['content']['application/json'];
export type ImpactAnswer = PreviewOperation['responses'][200]['content']['application/json'];
export type ImpactObject = ImpactAnswer['objects'][number];
export type ChangeStats = ImpactAnswer['totals']['newly_blocked'];
export type Coverage = ImpactAnswer['totals']['coverage'];
/** What a change (or a whole site) would have done: how far the counts go, and the three kinds of change. */
export type ImpactGroup = Pick<ImpactObject, 'coverage' | 'newly_blocked' | 'newly_challenged' | 'newly_allowed'>;

/** The impact preview as the reconciler reaches it (through client/, like every other call). */
export interface ImpactPreviewer {
  preview(siteId: string, request: ImpactRequest): Promise<ImpactAnswer>;
}

export function restImpactPreviewer(client: AegisClient): ImpactPreviewer {
  return { preview: (siteId, body) => client.POST(IMPACT_PATH, { params: { path: { id: siteId } }, body }) };
}

// ---- the window ----------------------------------------------------------------------------------

export interface ImpactWindow {
  /** As given: `24h`. */
  flag: string;
  /** As output says it: `last 24 h`. */
  label: string;
  ms: number;
}

export { DEFAULT_IMPACT_WINDOW };
const UNIT_TEXT = { m: 'min', h: 'h', d: 'd' } as const;

/** `30m`, `6h`, `24h`, `7d`, `1d12h` (schemas/impact-window.ts); null when it is not such a window. */
export function parseImpactWindow(value: string): ImpactWindow | null {
  const window = readImpactWindow(value);
  if (!window) return null;
  return { flag: window.parts.map(([amount, unit]) => `${amount}${unit}`).join(''), label: `last ${window.parts.map(([amount, unit]) => `${amount} ${UNIT_TEXT[unit]}`).join(' ')}`, ms: window.ms };
}

// ---- proposals -----------------------------------------------------------------------------------

/** The site settings a decision depends on: what the preview takes of a site's PATCH body. */
const DECISION_SETTINGS = ['mode', 'path_case', 'managed_rules'] as const;

/** One site's proposal, and which change made each part of it. */
export interface SiteProposal {
  siteId: string;
  /** The site's config name. */
  site: string;
  /** The site's settings change, when it changes a setting a decision depends on. */
  settingsChange: PlannedChange | undefined;
  settings: Fields | undefined;
  /** The rule changes, in proposal order: operation i was made by `operationChanges[i]`. */
  operationChanges: PlannedChange[];
  operations: NonNullable<ImpactRequest['operations']>;
}

const siteNameOf = (change: PlannedChange): string => (isParentKind(change.kind) ? change.name : (change.siteName ?? change.name.split('/')[0] ?? change.name));

/**
 * The proposal of every existing site the plan changes, in the order the plan first names them.
 * Rule writes come before deletions, as apply runs them (a replacement's new rule before the old
 * one goes). New and replaced sites have no traffic yet; rules deleted with their site are gone
 * with it: neither is proposed.
 */
export function siteProposals(plan: Plan): SiteProposal[] {
  const bySite = new Map<string, { site: string; settingsChange?: PlannedChange; settings?: Fields; writes: [PlannedChange, ReturnType<typeof batchOperation>][]; deletes: [PlannedChange, ReturnType<typeof batchOperation>][] }>();
  const entry = (siteId: string, change: PlannedChange) => {
    if (!bySite.has(siteId)) bySite.set(siteId, { site: siteNameOf(change), writes: [], deletes: [] });
    return bySite.get(siteId)!;
  };
  for (const change of plan.changes) {
    if (isParentKind(change.kind)) {
      if (change.action !== 'update' || !change.id) continue;
      const fields = changedFields(change);
      const settings: Fields = {};
      for (const field of DECISION_SETTINGS) if (field in fields) settings[field] = fields[field];
      if (Object.keys(settings).length === 0) continue;
      Object.assign(entry(change.id, change), { settingsChange: change, settings });
      continue;
    }
    if (!isBatchKind(change.kind) || change.siteId === undefined || change.withSite) continue;
    const site = entry(change.siteId, change);
    for (const step of changeSteps(change)) (step === 'delete' ? site.deletes : site.writes).push([change, batchOperation(change, step)]);
  }
  return [...bySite].map(([siteId, { site, settingsChange, settings, writes, deletes }]) => {
    const ordered = [...writes, ...deletes];
    return { siteId, site, settingsChange, settings, operationChanges: ordered.map(([change]) => change), operations: batchRequestOperations(ordered.map(([, operation]) => operation)) };
  });
}

// ---- previews ------------------------------------------------------------------------------------

export interface SiteImpact {
  siteId: string;
  site: string;
  /** `previewed`: `answer` holds it; `no-traffic`: the record holds nothing of the site; `unavailable`: `note` says why. */
  status: 'previewed' | 'no-traffic' | 'unavailable';
  note?: string;
  answer?: ImpactAnswer;
  /** The changes its proposal carried. */
  changes: PlannedChange[];
}

export interface ChangeImpact {
  siteId: string;
  /** The answer's objects this change is responsible for (a replacement's new and old rule, a mode and a managed-rules level). */
  objects: ImpactObject[];
  /** Their sum; for one object, that object's counts. */
  group: ImpactGroup;
}

export interface PlanImpact {
  window: ImpactWindow;
  /** Start of the window asked for (ISO). */
  since: string;
  sites: SiteImpact[];
  /** Per change of a previewed site (every change its proposal carried, those that changed nothing too). */
  byChange: Map<PlannedChange, ChangeImpact>;
  /** One line per reason impact could not be shown (a site without traffic is not a reason). */
  notes: string[];
}

export interface ImpactOptions {
  previewer: ImpactPreviewer;
  window: ImpactWindow;
  /** Previews in flight at once (default 4; the route is rate-limited like analytics). */
  concurrency?: number;
  now?: () => number;
}

/** Why a preview is unavailable, in a few words (the same for every site it happens to, so notes can group them). */
function unavailableReason(err: unknown): string {
  if (err instanceof AegisApiError) {
    if (err.status === 404) return 'the server offers no impact preview (404)';
    if (err.status === 429) return 'rate-limited (429); try again in a minute, or pass --no-impact';
    return `${err.status} ${err.code}: ${err.message.replace(/^[A-Z]+ \S+: \d+ \S+: /, '')}`;
  }
  return errorMessage(err);
}

/** Previews every site the plan changes and attributes the answers to the changes. Never rejects. */
export async function previewPlanImpact(plan: Plan, options: ImpactOptions): Promise<PlanImpact> {
  const now = options.now?.() ?? Date.now();
  const since = new Date(now - options.window.ms).toISOString();
  const proposals = siteProposals(plan);
  const sites: SiteImpact[] = proposals.map((p) => ({ siteId: p.siteId, site: p.site, status: 'unavailable', changes: proposedChanges(p) }));
  // After a 429 the budget is spent: asking for the other sites now only adds to the wait.
  let rateLimited: string | undefined;
  const previewOne = async (index: number): Promise<void> => {
    const proposal = proposals[index]!;
    const site = sites[index]!;
    if (proposal.operations.length > RULE_BATCH_LIMIT) {
      site.note = `more than ${RULE_BATCH_LIMIT} rule changes on one site`;
      return;
    }
    if (rateLimited) {
      site.note = rateLimited;
      return;
    }
    const request: ImpactRequest = { since, ...(proposal.settings ? { site: proposal.settings as ImpactRequest['site'] } : {}), ...(proposal.operations.length > 0 ? { operations: proposal.operations } : {}) };
    try {
      const answer = await options.previewer.preview(proposal.siteId, request);
      if (answer.covered.recorded_since === null) site.status = 'no-traffic';
      else Object.assign(site, { status: 'previewed', answer });
    } catch (err) {
      site.note = unavailableReason(err);
      if (err instanceof AegisApiError && err.status === 429) rateLimited = site.note;
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(options.concurrency ?? 4, proposals.length) }, async () => {
      while (next < proposals.length) await previewOne(next++);
    }),
  );

  const byChange = new Map<PlannedChange, ChangeImpact>();
  proposals.forEach((proposal, i) => {
    const site = sites[i]!;
    if (site.status === 'previewed') for (const [change, impact] of attribute(proposal, site.answer!)) byChange.set(change, impact);
  });
  return { window: options.window, since, sites, byChange, notes: groupedNotes(sites) };
}

function proposedChanges(proposal: SiteProposal): PlannedChange[] {
  return [...new Set([...(proposal.settingsChange ? [proposal.settingsChange] : []), ...proposal.operationChanges])];
}

/**
 * Each object of the answer to the change responsible: a rule the proposal writes by its
 * operation's index; the mode, managed rules and any other existing rule whose verdicts moved to
 * the site's settings change (a path_case change moves what existing patterns match). Without a
 * settings change such an object counts in the site's total only.
 */
function attribute(proposal: SiteProposal, answer: ImpactAnswer): Map<PlannedChange, ChangeImpact> {
  const objects = new Map<PlannedChange, ImpactObject[]>(proposedChanges(proposal).map((change) => [change, []]));
  for (const object of answer.objects) {
    const index = object.object.operation;
    const change = index !== undefined ? proposal.operationChanges[index] : proposal.settingsChange;
    if (change) objects.get(change)!.push(object);
  }
  const result = new Map<PlannedChange, ChangeImpact>();
  for (const [change, list] of objects) result.set(change, { siteId: proposal.siteId, objects: list, group: mergeGroups(list, answer.totals.coverage) });
  return result;
}

function groupedNotes(sites: readonly SiteImpact[]): string[] {
  const byReason = new Map<string, string[]>();
  for (const site of sites) {
    if (site.status !== 'unavailable') continue;
    const reason = site.note ?? 'unknown';
    byReason.set(reason, [...(byReason.get(reason) ?? []), site.site]);
  }
  return [...byReason].map(([reason, names]) => `impact unavailable for ${names.length === 1 ? `site ${names[0]}` : `${names.length} sites (${names.join(', ')})`}: ${reason}`);
}

// ---- sums ----------------------------------------------------------------------------------------

export function emptyStats(): ChangeStats {
  return { requests: 0, clients: 0, networks: 0, top_clients: [], top_networks: [], origin_statuses: { classes: {}, exact: {} }, with_session: 0, first_seen: null, last_seen: null, hourly: [], examples: [] };
}

const addCounts = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
  const sum = { ...a };
  for (const [key, n] of Object.entries(b)) sum[key] = (sum[key] ?? 0) + n;
  return sum;
};

/** The five with most requests, ties by value (as the server ranks them). */
const topFive = (a: ChangeStats['top_clients'], b: ChangeStats['top_clients']): ChangeStats['top_clients'] =>
  Object.entries(addCounts(Object.fromEntries(a.map((r) => [r.value, r.requests])), Object.fromEntries(b.map((r) => [r.value, r.requests]))))
    .map(([value, requests]) => ({ value, requests }))
    .sort((x, y) => y.requests - x.requests || (x.value < y.value ? -1 : 1))
    .slice(0, 5);

const earliest = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : a < b ? a : b);
const latest = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : a > b ? a : b);

/**
 * Two objects' changes of one kind, added. The server attributes each request to one object, so
 * requests add up exactly; distinct clients and networks may overlap, so their sum is an upper bound.
 */
export function addStats(a: ChangeStats, b: ChangeStats): ChangeStats {
  const hourly = addCounts(Object.fromEntries(a.hourly.map((h) => [h.hour, h.requests])), Object.fromEntries(b.hourly.map((h) => [h.hour, h.requests])));
  const warning = a.warning ?? b.warning;
  return {
    requests: a.requests + b.requests,
    clients: a.clients + b.clients,
    networks: a.networks + b.networks,
    top_clients: topFive(a.top_clients, b.top_clients),
    top_networks: topFive(a.top_networks, b.top_networks),
    origin_statuses: { classes: addCounts(a.origin_statuses.classes, b.origin_statuses.classes), exact: addCounts(a.origin_statuses.exact, b.origin_statuses.exact) },
    with_session: a.with_session + b.with_session,
    first_seen: earliest(a.first_seen, b.first_seen),
    last_seen: latest(a.last_seen, b.last_seen),
    hourly: Object.entries(hourly)
      .sort(([x], [y]) => (x < y ? -1 : 1))
      .map(([hour, requests]) => ({ hour, requests })),
    examples: [...a.examples, ...b.examples].sort((x, y) => (x.at < y.at ? -1 : 1)).slice(0, 3),
    ...(warning !== undefined ? { warning } : {}),
  };
}

/** Objects' groups added up; none: nothing changes, over the whole record replayed. */
export function mergeGroups(objects: readonly ImpactGroup[], replayed: Coverage): ImpactGroup {
  const [first, ...rest] = objects;
  if (!first) return { coverage: { records: replayed.records, with_values: replayed.with_values, exact: true }, newly_blocked: emptyStats(), newly_challenged: emptyStats(), newly_allowed: emptyStats() };
  return rest.reduce<ImpactGroup>(
    (sum, o) => ({
      // Every object's coverage is over the same replay; the sum is exact only if each part is.
      coverage: { ...sum.coverage, exact: sum.coverage.exact && o.coverage.exact },
      newly_blocked: addStats(sum.newly_blocked, o.newly_blocked),
      newly_challenged: addStats(sum.newly_challenged, o.newly_challenged),
      newly_allowed: addStats(sum.newly_allowed, o.newly_allowed),
    }),
    { coverage: first.coverage, newly_blocked: first.newly_blocked, newly_challenged: first.newly_challenged, newly_allowed: first.newly_allowed },
  );
}

/** How long a watcher reuses a preview of an unchanged plan instead of replaying the traffic again. */
export const IMPACT_REUSE_MS = 15 * 60_000;

/**
 * A preview of an earlier plan with the same checksum (same changes, same order), re-attached to
 * this plan's changes; undefined when the plan differs or the preview is older than IMPACT_REUSE_MS.
 */
export function reuseImpact(previous: { plan: Plan; impact: PlanImpact; at: number } | undefined, plan: Plan, now = Date.now()): PlanImpact | undefined {
  if (!previous || previous.plan.checksum !== plan.checksum || now - previous.at > IMPACT_REUSE_MS || previous.plan.changes.length !== plan.changes.length) return undefined;
  const counterpart = new Map(previous.plan.changes.map((change, i) => [change, plan.changes[i]!]));
  const byChange = new Map<PlannedChange, ChangeImpact>();
  for (const [change, impact] of previous.impact.byChange) byChange.set(counterpart.get(change) ?? change, impact);
  return { ...previous.impact, sites: previous.impact.sites.map((site) => ({ ...site, changes: site.changes.map((change) => counterpart.get(change) ?? change) })), byChange };
}

// ---- the gate ------------------------------------------------------------------------------------

/**
 * Why the plan goes past --max-new-blocks: each site whose total newly blocked requests exceed the
 * limit, and each site whose impact could not be previewed (the limit cannot be checked there, so
 * it is not taken as met).
 */
export function newBlockViolations(impact: PlanImpact, limit: number): string[] {
  const reasons: string[] = [];
  for (const site of impact.sites) {
    if (site.status === 'previewed') {
      const blocked = site.answer!.totals.newly_blocked.requests;
      if (blocked > limit) reasons.push(`${site.site} would newly block ${blocked} request${blocked === 1 ? '' : 's'} (limit ${limit})`);
    } else if (site.status === 'unavailable') reasons.push(`${site.site}: impact unavailable (${site.note ?? 'unknown'}), so --max-new-blocks cannot be checked`);
  }
  return reasons;
}

/** --max-new-blocks as a number; null when it is not a whole number ≥ 0. */
export function parseMaxNewBlocks(value: string): number | null {
  return /^\d{1,12}$/.test(value.trim()) ? Number(value.trim()) : null;
}
