// The decision actions the API reports, with the colour each is drawn in (a CSS variable of the
// theme, so the chart follows light and dark like the rest of the page).
import type { Answer } from '../../../api/types.ts';

export type Analytics = Answer<'/api/v1/shield/sites/{id}/analytics'>;
export type SeriesPoint = Analytics['timeseries'][number];

export const ACTIONS = ['allow', 'block', 'challenge', 'log'] as const satisfies ReadonlyArray<keyof SeriesPoint & keyof Analytics['totals']>;
export type Action = (typeof ACTIONS)[number];

export const ACTION_COLOUR_VAR: Record<Action, string> = { allow: '--ok', block: '--danger', challenge: '--warn', log: '--accent' };

export const ACTION_LABEL: Record<Action, string> = { allow: 'Allowed', block: 'Blocked', challenge: 'Challenged', log: 'Logged' };

/** The pipeline stage of a rule, as people call it. */
export const RULE_LABEL: Record<string, string> = {
  ip_access: 'IP access',
  escalation: 'Escalation',
  rate_limit: 'Rate limit',
  inspection: 'Inspection',
  virtual_patch: 'Virtual patch',
  managed: 'Managed rule',
  schema: 'Schema',
};
