// The shape of a managed rule as data. A rule is either a regular expression (RE2 syntax, so it
// runs in linear time) tested against the canonical form of some parts of the request, or a check
// that regular expressions are the wrong tool for (URL host classification, protocol anomalies the
// request reader records, the method, a missing header) — or both, under one id.
import type { Anomaly } from './anomalies.ts';

export const MANAGED_RULE_CATEGORIES = ['sqli', 'xss', 'traversal', 'cmdi', 'ssrf', 'protocol'] as const;
export type Category = (typeof MANAGED_RULE_CATEGORIES)[number];

export type ParanoiaLevel = 1 | 2 | 3 | 4;

/**
 * What a rule reads:
 *   - `value`: every field value (query, form, multipart, JSON, cookies, uploaded file names);
 *   - `name`: every field name as sent (`q[<script>]`, a JSON key path);
 *   - `path`: the request path percent-decoded once, dot segments kept (InspectedRequest.decodedPath);
 *   - `user_agent`, `referer`: those headers;
 *   - `body`: a text body that is not parsed into fields (XML, plain text).
 */
export type Target = 'value' | 'name' | 'path' | 'user_agent' | 'referer' | 'body';
export const TARGETS: readonly Target[] = ['value', 'name', 'path', 'user_agent', 'referer', 'body'];

/**
 * Which canonical form a pattern is matched against (canonicalise.ts): `text` for everything but
 * command injection, `shell` (text with shell quoting and expansion tricks undone) for the command
 * rules, which only run when the text holds a shell metacharacter.
 */
export type Form = 'text' | 'shell';

/** Host classes of ssrf-hosts.ts; each is reported by the rule that names it. */
export type HostClass = 'metadata' | 'link_local' | 'obfuscated' | 'loopback' | 'private';

export type RuleCheck =
  | { kind: 'host'; hostClass: HostClass }
  | { kind: 'anomaly'; anomaly: Anomaly }
  | { kind: 'missing_header'; header: string }
  | { kind: 'method'; methods: readonly string[] };

export interface RuleDefinition {
  /** `<category>.<name>`, lower case `[a-z0-9_]`. */
  id: string;
  category: Category;
  /** 1: unambiguous attacks, near-zero false positives; 2–4 progressively broader. */
  paranoia_level: ParanoiaLevel;
  /** One line, for the catalogue. */
  description: string;
  /** What the pattern (or a host check) reads; anomaly, method and header checks read the request. */
  targets: readonly Target[];
  /** RE2 pattern over the lower-case canonical text; written in lower case. */
  pattern?: string;
  form?: Form;
  check?: RuleCheck;
}
