// The event catalogue's names, versions and meanings (api/events/catalogue.ts documents each payload). Webhooks subscribe
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
  'shield.certificate.failed',
  'shield.site.domain_taken_over',
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

export interface EventTypeDescription {
  /** Payload version: raised when `data.object` of the type changes incompatibly. */
  version: number;
  description: string;
}

/** Each type's payload version and meaning; api/events/catalogue.ts adds who may read it and its schema. */
export const EVENT_TYPE_INFO: Record<EventType | 'ping', EventTypeDescription> = {
  'vulnerability.created': { version: 1, description: 'A scan found a vulnerability not seen before on its target.' },
  'vulnerability.updated': { version: 1, description: 'A finding’s status, triage (false positive, notes), verification or virtual patch changed; `data.previous_attributes` holds the old values.' },
  'vulnerability.resolved': { version: 1, description: 'A finding became resolved: fixed (a later scan no longer sees it), verified, or closed by hand.' },
  'scan.started': { version: 1, description: 'A scan began running.' },
  'scan.completed': { version: 1, description: 'A scan finished; `summary` counts findings by severity, new and fixed.' },
  'scan.failed': { version: 1, description: 'A scan ended without a result; `error` says why.' },
  'shield.block': { version: 1, description: 'Shield blocked requests on a site: one event per site, rule and window (AEGIS_SHIELD_ALERT_WINDOW_MS, 10 s by default) with the count and up to five samples, so an attack is a bounded number of events.' },
  'shield.challenge': { version: 1, description: 'Shield challenged requests on a site; aggregated like `shield.block`.' },
  'shield.certificate.failed': { version: 1, description: 'Obtaining or renewing a site’s certificate from ACME failed; the certificate being served (if any) keeps serving. `error` says why, `next_attempt_at` when it is tried again (backing off from 5 minutes to a day).' },
  'shield.site.domain_taken_over': {
    version: 1,
    description:
      'Another organisation proved control of the domain of one of your Shield sites (AEGIS_SHIELD_DOMAIN_PROOF); that organisation’s site now serves the domain and yours serves nothing (`status: superseded`). ' +
      '`was_serving` says whether yours had been getting the traffic. Prove control yourself (`domain_verification`) only if the domain is really yours: a verified domain is never taken over.',
  },
  'config_repo.sync.completed': { version: 1, description: 'A config-repository sync ended (applied, unchanged, planned or refused).' },
  'config_repo.sync.failed': { version: 1, description: 'A config-repository sync failed; `failure_stage` and `errors` say where and why.' },
  'api_key.created': { version: 1, description: 'An API key was created (or issued by rotation). Never carries the key value.' },
  'api_key.revoked': { version: 1, description: 'An API key was revoked.' },
  'webhook.disabled': { version: 1, description: 'A webhook was disabled because every delivery to it failed for AEGIS_WEBHOOK_DISABLE_AFTER_MS (3 days); `disabled_reason` says why. Re-enable it with PATCH `enabled: true`.' },
  'integration.connected': { version: 1, description: 'A provider connection became active (OAuth completed, or a pasted token was validated). Never carries a token.' },
  'integration.disconnected': { version: 1, description: 'A provider connection was deleted (its grant revoked at the provider where the provider allows).' },
  'integration.error': { version: 1, description: 'The provider refused a connection’s credential (revoked, or expired beyond refresh); `error` says why. Connect again to repair it.' },
  ping: { version: 1, description: 'Sent by POST /api/v1/webhooks/:id/test to that webhook only; no subscription selects it.' },
};

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
