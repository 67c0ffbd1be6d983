// A Shield virtual patch derived from a finding: the URL path, method and parameter the attack went
// in through (the finding's `details.attack`, set by the URL scanners) and a regex for its attack
// class. The regexes are deliberately broad for the one parameter they guard — a search box that
// must never carry a quote loses nothing by refusing one — and all compile under RE2.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { ShieldSiteRow } from '../../platform/db/schema.ts';
import type { VulnerabilityRow } from '../findings/store.ts';
import { validationFailed } from '../../platform/http/errors.ts';
import type { NewPatch } from '../shield/virtual-patches/store.ts';
import type { AttackClass, WebFindingDetails } from '../../scanners/web/types.ts';

export const ATTACK_PATTERNS: Record<AttackClass, string> = {
  // Quotes, comments, statement separators, the keywords of UNION/time-based probes, `or 1=1` forms.
  sqli: `(?i)('|"|--|/\\*|;|\\b(union|select|sleep|benchmark|waitfor|pg_sleep)\\b|\\b(or|and)\\b\\s+[\\w'"]+\\s*[=<>])`,
  xss: '(?i)(<|>|javascript:|\\bon[a-z]+\\s*=)',
  traversal: '(?i)(\\.\\.|%2e|\\x00|^/|^\\\\|^[a-z]:)',
  // An absolute, scheme-relative or backslash URL instead of a local path.
  open_redirect: '(?i)^\\s*([a-z][a-z0-9+.-]*:|//|\\\\|/\\\\)',
  cmdi: '[;&|`$<>\\n]',
  ssti: '(\\{\\{|\\}\\}|\\{%|%\\}|\\$\\{|#\\{|<%)',
};

const ATTACK_CLASSES = Object.keys(ATTACK_PATTERNS) as AttackClass[];

/** `*` and `?` are wildcards in URL patterns; a literal path keeps them out. */
const literalPath = (path: string): string => path.replace(/[*?]/g, '');

export interface DerivedPatch {
  hostname: string;
  patch: Omit<NewPatch, 'expires_in_days' | 'action'>;
}

/** The patch for a finding, or 422 when the finding has no attack vector to guard. */
export function derivePatch(vulnerability: Pick<VulnerabilityRow, 'id' | 'location' | 'details'>): DerivedPatch {
  const location = vulnerability.location as { kind?: string; url?: string };
  const attack = (vulnerability.details as Partial<WebFindingDetails>).attack;
  if (location.kind !== 'url' || typeof location.url !== 'string' || !attack || !ATTACK_CLASSES.includes(attack.class)) {
    throw validationFailed('this finding has no attack vector a virtual patch can guard (injection findings of URL scans have one)', { fields: [{ field: 'details.attack', message: 'missing' }] });
  }
  if (attack.in !== 'query' && attack.in !== 'body') {
    throw validationFailed(`a virtual patch inspects query and body parameters; this attack comes in through the ${attack.in}`, { fields: [{ field: 'details.attack.in', message: attack.in }] });
  }
  return {
    hostname: new URL(location.url).hostname.toLowerCase(),
    patch: {
      url_pattern: literalPath(attack.path) || '/',
      method: attack.method.toUpperCase(),
      match_param: attack.parameter,
      match_regex: ATTACK_PATTERNS[attack.class],
      labels: { 'aegis.dev/finding': vulnerability.id },
      source_finding_id: vulnerability.id,
    },
  };
}

/** The organisation's Shield site serving `hostname`, if any. */
export async function siteServing(db: Db, orgId: string, hostname: string): Promise<ShieldSiteRow | undefined> {
  return db.selectFrom('shield_sites').selectAll().where('org_id', '=', orgId).where(sql<string>`lower(domain)`, '=', hostname).executeTakeFirst();
}
