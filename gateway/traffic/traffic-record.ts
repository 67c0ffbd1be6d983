// One request as the traffic record keeps it (docs/impact-preview.md): every request's metadata and
// decision, and for a bounded subset its parameter values, so that an impact preview can replay a
// proposed configuration through the whole pipeline (replay.ts) and say what it would have done.
import type { DecisionAction, RuleKind } from '../decision.ts';
import type { ManagedByLevel } from '../rules/managed/index.ts';

/** Why a request's values were kept: a rule flagged it, the uniform sample took it, or its route had none kept yet this hour. */
export type ValuesReason = 'flagged' | 'sample' | 'floor';

/**
 * What rules read beyond the path, cut to a few hundred bytes per value, with credential-like names
 * (password, token, secret, cookie, authorization, …) dropped when captured. Sealed at rest.
 */
export interface RecordedValues {
  /** The query string as sent (percent-encoding kept), without credential-named parameters. */
  query: string;
  /** Header values by lower-case name, without credential headers. */
  headers: Record<string, string>;
  /** Media type of the body in lower case without parameters; '' when none. */
  contentType: string;
  /** The inspected body as text (JSON, form, XML, plain text), without credential-named fields; null when none was read. */
  body: string | null;
}

export interface TrafficRecord {
  siteId: string;
  /** Epoch ms the request arrived. */
  at: number;
  clientIp: string;
  /** The client's network: its /24 (IPv4) or /48 (IPv6), in CIDR notation (derived from the address when read: record-batch.ts). */
  network: string;
  asn: number | null;
  country: string | null;
  /** Upper case. */
  method: string;
  /** Path without the query string, as sent (percent-encoding kept), at most 1024 characters. */
  path: string;
  /** The status the client got: the origin's for a proxied request, ours for one answered here. */
  status: number;
  /** Milliseconds from arrival to the answer's head. */
  latencyMs: number;
  /** Whether the request carried a session or credentials (a Cookie or an Authorization / X-Api-Key header). */
  hasSession: boolean;
  /**
   * The API keys it carried, as digests (what rate limits count an `api_key` identity by): replay
   * counts the same client in the same bucket without knowing the key.
   */
  apiKeys: readonly string[];
  /** What the live configuration decided. */
  action: DecisionAction;
  ruleKind: RuleKind | null;
  ruleId: string | null;
  would: 'block' | 'challenge' | null;
  /**
   * The managed rule that would have decided at each paranoia level, with the site's exclusions
   * (detection only, whatever the site's own level): a preview of a level change reads it rather
   * than values. Null when the site's managed rules were off.
   */
  managedByLevel: ManagedByLevel | null;
  /** The values, when kept (see ValuesReason); null for a metadata-only record. */
  values: RecordedValues | null;
  valuesReason: ValuesReason | null;
}

/** A request as the gateway captures it: the network is not worked out on the hot path, but when the record is read. */
export type CapturedRequest = Omit<TrafficRecord, 'network'>;
