// The shape of a managed rule as data. A rule is either a regular expression (RE2 syntax, so it
// runs in linear time) tested against the canonical form of some parts of the request, or a check
// that regular expressions are the wrong tool for (URL host classification, protocol anomalies the
// request reader records, the method, a missing header) — or both, under one id.
import type { Anomaly } from './anomalies.ts';

export const MANAGED_RULE_CATEGORIES = [
  'sqli', 'xss', 'traversal', 'rfi', 'cmdi', 'php', 'java', 'ssrf', 'ssti', 'nosqli', 'ldap', 'xxe', 'crlf', 'mail', 'session', 'protocol',
] as const;
export type Category = (typeof MANAGED_RULE_CATEGORIES)[number];

export type ParanoiaLevel = 1 | 2 | 3 | 4;

/**
 * Anomaly scoring, as the OWASP CRS does it: a rule at or below the site's paranoia level decides
 * alone. A broader rule of a higher level may also count, from a lower level, as a weak signal of
 * some points; the points of the distinct signals in one request add up, and the request is refused
 * when the sum reaches the level's threshold — three different warnings at level 1, where one or two
 * misfire on developer sites (a code snippet with a query in it).
 */
export type Severity = 'warning' | 'notice';
export const SEVERITY_SCORE: Readonly<Record<Severity, number>> = { warning: 3, notice: 2 };
/** The score of weak signals that blocks, per level. */
export const ANOMALY_THRESHOLD: Readonly<Record<ParanoiaLevel, number>> = { 1: 9, 2: 6, 3: 5, 4: 4 };

/**
 * What a rule reads:
 *   - `value`: every field value (query, form, multipart, JSON, cookies, uploaded file names);
 *   - `name`: every field name as sent (`q[<script>]`, a JSON key path);
 *   - `path`: the request path percent-decoded once, dot segments kept (InspectedRequest.decodedPath);
 *   - `user_agent`, `referer`: those headers;
 *   - `header`: every other header an application may read, but those whose grammar the gateway
 *     already knows (Accept, Content-Type, Cookie — parsed into fields —, Authorization, Sec-*…);
 *   - `body`: a text body that is not parsed into fields (XML, plain text);
 *   - `file_name`: the name of an uploaded file — a multipart part's filename, or a header whose
 *     name says it carries one (`X-File-Name`, `X_Filename`, `X.Filename`), as upload APIs take it.
 */
export type Target = 'value' | 'name' | 'path' | 'user_agent' | 'referer' | 'header' | 'body' | 'file_name';
export const TARGETS: readonly Target[] = ['value', 'name', 'path', 'user_agent', 'referer', 'header', 'body', 'file_name'];

/**
 * Which canonical form a pattern is matched against (canonicalise.ts): `text` for everything but
 * command injection, `shell` (text with shell quoting and expansion tricks undone) for the command
 * rules, which only run when the text holds a shell metacharacter, and `raw` (the input as it came,
 * lower case) for the few rules about the encoding itself: a value that is nothing but an escaped
 * `<` is a probe of the decoder, while a `<` alone is a filter operator. Raw patterns read only
 * inputs that canonicalisation changes beyond case: without an encoding there is nothing for them.
 */
export type Form = 'text' | 'shell' | 'raw';

/** Host classes of ssrf-hosts.ts; each is reported by the rule that names it. */
export type HostClass = 'metadata' | 'link_local' | 'obfuscated' | 'loopback' | 'private';

export type RuleCheck =
  | { kind: 'host'; hostClass: HostClass }
  | { kind: 'anomaly'; anomaly: Anomaly }
  | { kind: 'missing_header'; header: string }
  | { kind: 'method'; methods: readonly string[] }
  /**
   * A session cookie's name sent as a parameter (query, form, JSON) by a request that no page of
   * the site led to — no Referer, or one from another host: a link planted to fix the victim's
   * session id (session fixation). Names compared in lower case; a trailing `*` is a prefix.
   */
  | { kind: 'session_parameter'; names: readonly string[] };

export interface RuleDefinition {
  /** `<category>.<name>`, lower case `[a-z0-9_]`. */
  id: string;
  category: Category;
  /** 1: unambiguous attacks, near-zero false positives; 2–4 progressively broader. */
  paranoia_level: ParanoiaLevel;
  /** Below `paranoia_level`, from level `from`: a weak signal of `severity` (see Severity). */
  signal?: { from: ParanoiaLevel; severity: Severity };
  /**
   * In prose — text on several lines, as a forum post, a message or a code snippet on a developer
   * site is — only a weak signal of this severity at levels 1 and 2: such texts carry `../`, `$(…)`
   * and `--` as a matter of course, while the values these attacks go through (a file name, a host,
   * an id) are one line, and a line break added to one breaks the file name. In prose, broader
   * rules' `signal`s do not count at those levels either.
   */
  in_prose?: Severity;
  /** One line, for the catalogue. */
  description: string;
  /** What the pattern (or a host check) reads; anomaly, method and header checks read the request. */
  targets: readonly Target[];
  /** RE2 pattern over the lower-case canonical text; written in lower case. */
  pattern?: string;
  form?: Form;
  check?: RuleCheck;
}
