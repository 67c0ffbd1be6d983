// The event catalogue's names (api/events/catalogue.ts documents each payload). Webhooks subscribe
// to these, or to a family with `<prefix>.*`, or to everything with `*`.

export const EVENT_TYPES = [
  'vulnerability.created',
  'vulnerability.updated',
  'vulnerability.resolved',
  'scan.started',
  'scan.completed',
  'scan.failed',
  'shield.block',
  'shield.challenge',
  'config_repo.sync.completed',
  'config_repo.sync.failed',
  'api_key.created',
  'api_key.revoked',
  'webhook.disabled',
  'integration.connected',
  'integration.disconnected',
  'integration.error',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Families a subscription may name with a trailing `.*`, and `*` for every type. */
export const EVENT_PATTERNS = ['*', 'vulnerability.*', 'scan.*', 'shield.*', 'config_repo.*', 'config_repo.sync.*', 'api_key.*', 'webhook.*', 'integration.*'] as const;

/** What a webhook's `events` may list. `ping` is not subscribable: it goes only where it is sent. */
export const WEBHOOK_EVENTS = [...EVENT_TYPES, ...EVENT_PATTERNS] as const;

/** Whether `type` is selected by a subscription entry. */
export function eventMatches(pattern: string, type: string): boolean {
  if (pattern === '*') return type !== 'ping';
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}
