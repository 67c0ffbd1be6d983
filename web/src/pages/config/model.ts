// What the config pages share: the resources' types and how a sync's plan lines read.
import type { Item } from '../../api/types.ts';

export type ConfigRepo = Item<'/api/v1/config-repos'>;
export type Sync = Item<'/api/v1/config-repos/{id}/syncs'>;

/** Syncs still queued or running: pages poll while one is on screen. */
export const isMoving = (sync: Pick<Sync, 'status'>) => sync.status !== 'completed';
export const LIVE_INTERVAL_MS = 1500;

export type ChangeAction = 'create' | 'update' | 'replace' | 'delete' | 'other';

export interface PlannedChange {
  action: ChangeAction;
  kind: string;
  name: string;
  /** The fields an update or replacement changes. */
  fields: string[];
  line: string;
}

/** A plan line as the reconciler writes it: `update VirtualPatch search-sqli (match_regex, action)`. */
export function parseChange(line: string): PlannedChange {
  const match = /^(create|update|replace|delete) (\S+) (\S+)(?: \((.*)\))?$/.exec(line);
  if (!match) return { action: 'other', kind: '', name: '', fields: [], line };
  return { action: match[1] as ChangeAction, kind: match[2]!, name: match[3]!, fields: match[4] ? match[4].split(', ') : [], line };
}

export const CHANGE_SIGN: Record<ChangeAction, string> = { create: '+', update: '~', replace: '±', delete: '−', other: '·' };

/** The result of a sync in words, or its status while it has none. */
export const syncOutcome = (sync: Sync) => sync.result ?? sync.status;
