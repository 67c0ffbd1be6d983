// An impact preview in words, for the text and Markdown plans and the watcher's events:
//   impact (last 24 h): would newly block 37 requests from 4 clients (2 answered 2xx by the origin); 0 newly allowed
//   values sampled: 120 of 5 000 requests
import type { ChangeImpact, ImpactGroup, PlanImpact, SiteImpact } from '../plan/impact.ts';
import type { PlannedChange } from '../plan/plan.ts';

/** `5 000`: thousands apart, as people read large counts. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

const counted = (n: number, word: string): string => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;

/**
 * What a group of changes would have done, in one sentence. `merged`: summed over several objects,
 * whose clients may overlap, so their count is an upper bound.
 */
export function impactSentence(group: ImpactGroup, merged = false): string {
  const from = (clients: number) => ` from ${merged ? 'up to ' : ''}${counted(clients, 'client')}`;
  const blocked = group.newly_blocked;
  const answered = blocked.origin_statuses.classes['2xx'] ?? 0;
  const parts = [`would newly block ${counted(blocked.requests, 'request')}${blocked.requests > 0 ? from(blocked.clients) : ''}${answered > 0 ? ` (${formatCount(answered)} answered 2xx by the origin)` : ''}`];
  const challenged = group.newly_challenged;
  if (challenged.requests > 0) parts.push(`would newly challenge ${counted(challenged.requests, 'request')}${from(challenged.clients)}`);
  parts.push(`${formatCount(group.newly_allowed.requests)} newly allowed`);
  return parts.join('; ');
}

/** The coverage line when the counts are not exact: they read values, which only a sample of the requests kept. */
export function coverageLine(group: ImpactGroup): string | null {
  const { coverage } = group;
  if (coverage.exact || coverage.with_values >= coverage.records) return null;
  return `values sampled: ${formatCount(coverage.with_values)} of ${counted(coverage.records, 'request')}`;
}

/** A change's impact lines (to indent under it): the sentence, then coverage when not exact. */
export function changeImpactLines(impact: ChangeImpact, label: string): string[] {
  const coverage = coverageLine(impact.group);
  return [`impact (${label}): ${impactSentence(impact.group, impact.objects.length > 1)}`, ...(coverage ? [coverage] : [])];
}

/** One site's total, or why there is none. */
export function siteImpactLine(site: SiteImpact): string {
  if (site.status === 'no-traffic') return `${site.site}: no traffic recorded; no impact to show`;
  if (site.status === 'unavailable') return `${site.site}: impact unavailable (${site.note ?? 'unknown'})`;
  const answer = site.answer!;
  const coverage = coverageLine(answer.totals);
  // The record may start inside the window (a new site, retention): say what the counts cover.
  const partial = answer.covered.since !== null && Date.parse(answer.covered.since) - Date.parse(answer.window.since) > 60_000 ? `; recorded only since ${answer.covered.since}` : '';
  return `${site.site}: ${impactSentence(answer.totals)}${coverage ? ` (${coverage})` : ''}${partial}`;
}

/**
 * The per-site section: a heading and one line per site previewed or, unless `withoutTraffic` is
 * false, without traffic (empty when there is none). Sites whose preview was unavailable are in the
 * plan impact's notes, one per reason.
 */
export function siteImpactSection(impact: PlanImpact, { withoutTraffic = true }: { withoutTraffic?: boolean } = {}): string[] {
  const shown = impact.sites.filter((site) => site.status === 'previewed' || (withoutTraffic && site.status === 'no-traffic'));
  if (shown.length === 0) return [];
  return [`Impact on recorded traffic (${impact.window.label}), per site:`, ...shown.map((site) => `  ${siteImpactLine(site)}`)];
}

/** Impact lines for a change, or none (not previewed, no traffic, unavailable). */
export function impactLinesFor(change: PlannedChange, impact: PlanImpact | undefined): string[] {
  const found = impact?.byChange.get(change);
  return found && impact ? changeImpactLines(found, impact.window.label) : [];
}
