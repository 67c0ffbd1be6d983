// What the gateway decided about one request, and the record of it that analytics, the live stream
// and (later) outbound webhooks consume. Shared by the data plane and the API routes that read it.

/** The effect a decision had: `log` means a rule matched but only recorded (site or rule in log mode). */
export type DecisionAction = 'allow' | 'block' | 'challenge' | 'log';

/** Which stage of the pipeline decided (null for a plain allow). Documented order in docs/shield-gateway.md. */
export type RuleKind = 'ip_access' | 'escalation' | 'rate_limit' | 'inspection' | 'virtual_patch' | 'managed' | 'schema';

export interface DecisionEvent {
  /** `dec_<ulid>`: sortable by time; also the SSE event id. */
  id: string;
  /** ISO 8601 UTC time the request arrived. */
  time: string;
  site_id: string;
  org_id: string;
  action: DecisionAction;
  rule_kind: RuleKind | null;
  rule_id: string | null;
  /** For `log`: what the rule would have done when enforced (`block` or `challenge`). */
  would: 'block' | 'challenge' | null;
  client_ip: string;
  asn: number | null;
  country: string | null;
  method: string;
  host: string;
  /** Path without the query string, at most 1024 characters. */
  path: string;
  /** HTTP status the client received (the origin's, for requests that were proxied). */
  status: number;
  request_id: string;
  /** Decisions by managed rules: the request's anomaly score and the rules counted, in catalogue order. */
  anomaly?: ManagedAnomaly;
}

export interface ManagedAnomaly {
  score: number;
  signals: string[];
}
