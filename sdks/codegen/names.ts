// Spelling helpers shared by the model and the three emitters.

/** Words of an identifier in any case: `shieldSites`, `ip-access`, `rule_id`, `IPAccess` → lower-case words. */
export function words(identifier: string): string[] {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const upperFirst = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

export const pascalCase = (identifier: string): string => words(identifier).map(upperFirst).join('');
export const camelCase = (identifier: string): string => {
  const p = pascalCase(identifier);
  return p.charAt(0).toLowerCase() + p.slice(1);
};
export const snakeCase = (identifier: string): string => words(identifier).join('_');

/** Go's initialisms (Effective Go): `siteId` → `SiteID`, `apiKeys` → `APIKeys`. */
const GO_INITIALISMS = new Set(['id', 'ip', 'url', 'api', 'http', 'json', 'csv', 'sso', 'asn', 'cve', 'sca', 'sast', 'ai', 'aws', 'oidc', 'saml', 'uri', 'sarif', 'ttl', 'cidr', 'tls', 'pr', 'osv']);
export const goName = (identifier: string): string =>
  words(identifier)
    .map((w) => (GO_INITIALISMS.has(w) ? w.toUpperCase() : upperFirst(w)))
    .join('');

/** `exclusions` → `exclusion`, `policies` → `policy`; leaves words that are not plurals alone. */
export function singular(word: string): string {
  if (/(series|ics)$/.test(word)) return word;
  if (/ies$/.test(word)) return word.slice(0, -3) + 'y';
  if (/(ss|us|is)$/.test(word)) return word;
  if (/(sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (/s$/.test(word)) return word.slice(0, -1);
  return word;
}
