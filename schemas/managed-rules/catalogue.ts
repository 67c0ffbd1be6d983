// The managed-rule catalogue: every rule of every category in one ordered list. The order is the
// tie-break when several rules match one request (the first listed names the decision): categories
// in MANAGED_RULE_CATEGORIES order, and within a category the most specific (level 1) rules first.
import { CMDI_RULES } from './data/cmdi.ts';
import { CRLF_RULES } from './data/crlf.ts';
import { JAVA_RULES } from './data/java.ts';
import { LDAP_RULES } from './data/ldap.ts';
import { MAIL_RULES } from './data/mail.ts';
import { NOSQLI_RULES } from './data/nosqli.ts';
import { PHP_RULES } from './data/php.ts';
import { PROTOCOL_RULES } from './data/protocol.ts';
import { RFI_RULES } from './data/rfi.ts';
import { SESSION_RULES } from './data/session.ts';
import { SQLI_RULES } from './data/sqli.ts';
import { SSRF_RULES } from './data/ssrf.ts';
import { SSTI_RULES } from './data/ssti.ts';
import { TRAVERSAL_RULES } from './data/traversal.ts';
import { XSS_RULES } from './data/xss.ts';
import { XXE_RULES } from './data/xxe.ts';
import { MANAGED_RULE_CATEGORIES, type RuleDefinition } from './types.ts';

export { MANAGED_RULE_CATEGORIES };

/** What the API lists (GET /api/v1/shield/managed-rules). */
export interface ManagedRuleInfo {
  id: string;
  category: string;
  paranoia_level: number;
  description: string;
}

export const RULE_DEFINITIONS: readonly RuleDefinition[] = [
  ...SQLI_RULES,
  ...XSS_RULES,
  ...TRAVERSAL_RULES,
  ...RFI_RULES,
  ...CMDI_RULES,
  ...PHP_RULES,
  ...JAVA_RULES,
  ...SSRF_RULES,
  ...SSTI_RULES,
  ...NOSQLI_RULES,
  ...LDAP_RULES,
  ...XXE_RULES,
  ...CRLF_RULES,
  ...MAIL_RULES,
  ...SESSION_RULES,
  ...PROTOCOL_RULES,
];

export const MANAGED_RULES: readonly ManagedRuleInfo[] = RULE_DEFINITIONS.map(({ id, category, paranoia_level, description }) => ({
  id,
  category,
  paranoia_level,
  description,
}));

const RULE_IDS: ReadonlySet<string> = new Set(RULE_DEFINITIONS.map((rule) => rule.id));
const CATEGORY_NAMES: ReadonlySet<string> = new Set(MANAGED_RULE_CATEGORIES);

/** The refs (rule ids or categories, as exclusions name them) that name nothing: for API validation. */
export function unknownRuleRefs(refs: readonly string[]): string[] {
  return refs.filter((ref) => !RULE_IDS.has(ref) && !CATEGORY_NAMES.has(ref));
}

/** The ids a ref stands for: the rule itself, or every rule of the category; none for an unknown ref. */
export function expandRuleRef(ref: string): string[] {
  if (RULE_IDS.has(ref)) return [ref];
  if (CATEGORY_NAMES.has(ref)) return RULE_DEFINITIONS.filter((rule) => rule.category === ref).map((rule) => rule.id);
  return [];
}
