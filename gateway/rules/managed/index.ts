// Managed rules for the Shield gateway: generic detection of injection attacks (SQL, NoSQL, LDAP,
// template, command, XML entities, CRLF, mail), cross-site scripting, path traversal, SSRF and
// protocol anomalies, without a rule per vulnerability.
//
//   types.ts        the rule data model (categories, targets, canonical forms, checks)
//   data/*.ts       the rules, one file per category, RE2 patterns written for this engine
//   catalogue.ts    the ordered catalogue, ids and category lookups
//   canonicalise.ts how every input is normalised before matching (decoding, case, comments, space)
//   base64-text.ts  values that are base64 of text, decoded as one more canonical form
//   headers.ts      which request headers are read as free text
//   prefilter.ts    the fast path for values no rule can match
//   ssrf-hosts.ts   URL host classification for the SSRF rules
//   program.ts      per paranoia level: one RE2.Set per target and form, shared by all sites
//   exclusions.ts   a site's exclusions by rule/category, URL pattern and parameter
//   engine.ts       matching a request: decisive rules, weak signals and the anomaly score, prose
export { MANAGED_RULE_CATEGORIES, MANAGED_RULES, unknownRuleRefs, type ManagedRuleInfo } from '../../../schemas/managed-rules/catalogue.ts';
export { clampLevel, compileManagedLevels, compileManagedRules, PASSES_EVERY_LEVEL, type ManagedByLevel, type ManagedLevels, type ManagedRuleHit, type ManagedRuleSet } from './engine.ts';
