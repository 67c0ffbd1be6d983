// The site modes from strongest to weakest, and what a site stops doing when it moves down: the
// words the confirmation shows before a weakening change (the gateway's pipeline: `log` records
// every rule's verdict without acting; `challenge` turns blocks into proof-of-work challenges).
import type { SiteMode } from '../shared/api.ts';

export const MODES: ReadonlyArray<{ value: SiteMode; label: string; what: string }> = [
  { value: 'block', label: 'Block', what: 'Rules act: matching requests are blocked (403, or 429 for rate limits).' },
  { value: 'challenge', label: 'Challenge', what: 'Requests that a rule would block get a proof-of-work challenge instead; clients that solve it pass.' },
  { value: 'log', label: 'Log only', what: 'Rules only record what they would do; every request reaches the origin.' },
];

/** Higher is stronger. */
export const strength = (mode: SiteMode): number => MODES.length - MODES.findIndex((m) => m.value === mode);

export const modeLabel = (mode: SiteMode): string => MODES.find((m) => m.value === mode)?.label ?? mode;

/** What stops being blocked when a site goes from `from` to the weaker `to`. */
export function weakening(from: SiteMode, to: SiteMode): string[] {
  if (to === 'log') {
    return [
      'Nothing is blocked or challenged any more: virtual patches, IP deny and challenge rules, rate limits, managed rules and the schema only record what they would have done.',
      'Attacks that these rules stop today reach the origin.',
    ];
  }
  if (from === 'block' && to === 'challenge') {
    return [
      'Requests that rules block today (virtual patches, IP deny rules, rate limits over budget, managed rules, schema violations) get a proof-of-work challenge instead.',
      'A client that solves the challenge — any script driving a real browser can — gets through to the origin.',
    ];
  }
  return [];
}
