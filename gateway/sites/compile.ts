// Turns a site's stored configuration into the structures the request path consults: IP rules as
// range tables, patches as one multi-pattern set per parameter, schema validators compiled once per
// document version. Compilation happens off the request path, when a change is noticed.
import { compileIpAccess, type IpAccessTable } from '../rules/ip-access.ts';
import { compileManagedLevels, compileManagedRules, type ManagedLevels, type ManagedRuleSet } from '../rules/managed/index.ts';
import { compileRateLimits, identityKeys, type CompiledRateLimit } from '../rules/rate-limits.ts';
import { getSchemaEnforcer, type SchemaEnforcer, type Strictness } from '../rules/schema/index.ts';
import { compileVirtualPatches, type PatchSet } from '../rules/virtual-patches.ts';
import { ScopeIndex } from '../rules/url-pattern.ts';
import type { SiteConfig } from './load.ts';
import type { SiteTlsSettings } from '../../platform/db/schema.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export type SiteMode = 'log' | 'block' | 'challenge';

export interface CompiledSite {
  id: string;
  orgId: string;
  domain: string;
  mode: SiteMode;
  /** Origin base URL without a trailing slash: `http://10.0.0.5:8080` or `https://app.internal/base`. */
  originUrl: string;
  ipAccess: IpAccessTable | null;
  rateLimits: CompiledRateLimit[];
  /** The same rules, looked up by path: only those whose pattern can match it, in rule order. */
  rateLimitsByPath: ScopeIndex<CompiledRateLimit>;
  /** Rules that escalate to a deny: their identities are checked for a standing deny first. */
  escalating: CompiledRateLimit[];
  patches: PatchSet | null;
  managed: ManagedRuleSet | null;
  /** The same rules judged at every paranoia level, for the traffic record; null when they are off or nothing records. */
  managedLevels: ManagedLevels | null;
  schema: { enforcer: SchemaEnforcer; strictness: Strictness } | null;
  /** URL patterns and schema routes compare paths in lower case (`path_case: insensitive`). */
  foldCase: boolean;
  /** TLS at the edge: mode, HTTP→HTTPS redirect, HSTS, minimum version (schemas/shield-site.ts). */
  tls: SiteTlsSettings;
  /** Whether the organisation proved it controls the domain (who serves a shared domain: the registry). */
  verified: boolean;
  /** False when the site has no rule of any kind: its requests are allowed without evaluation. */
  hasRules: boolean;
  /** When the earliest expiring rule lapses (epoch ms): the site is recompiled then. */
  nextExpiry: number | null;
  /** Problems met while compiling (a pattern that no longer compiles, an unreadable schema). */
  warnings: string[];
}

function earliest(rows: readonly { expires_at: Date | null }[]): number | null {
  let min: number | null = null;
  for (const row of rows) {
    const t = row.expires_at?.getTime();
    if (t !== undefined && (min === null || t < min)) min = t;
  }
  return min;
}

export interface CompileOptions {
  /**
   * Judge managed rules at every paranoia level (the gateway records traffic): the site's own
   * level then asks level 4 first (rules/managed/engine.ts ManagedLevels), so that most requests
   * are judged at every level for the price of one pass.
   */
  everyManagedLevel?: boolean;
}

export async function compileSite(config: SiteConfig, options: CompileOptions = {}): Promise<CompiledSite> {
  const warnings: string[] = [];
  const foldCase = config.site.path_case !== 'sensitive';
  const patches = config.patches.length > 0 ? compileVirtualPatches(config.patches, Date.now(), foldCase) : null;
  const managedLevels = options.everyManagedLevel ? compileManagedLevels(config.site.managed_rules, foldCase) : null;
  const managed = managedLevels?.rules ?? compileManagedRules(config.site.managed_rules, foldCase);
  for (const skipped of patches?.skipped ?? []) warnings.push(`virtual patch ${skipped.id} skipped: ${skipped.reason}`);

  let schema: CompiledSite['schema'] = null;
  if (config.schema) {
    try {
      const enforcer = await getSchemaEnforcer(config.schema.hash, config.schema.document);
      for (const warning of enforcer.warnings ?? []) warnings.push(`schema ${config.schema.hash}: ${warning}`);
      schema = { enforcer, strictness: config.schema.strictness as Strictness };
    } catch (err) {
      warnings.push(`schema ${config.schema.hash} not enforced: ${errorMessage(err)}`);
    }
  }
  const rateLimits = compileRateLimits(config.rateLimits, foldCase);
  const rateLimitsByPath = new ScopeIndex<CompiledRateLimit>(foldCase);
  for (const rule of rateLimits) rateLimitsByPath.add(rule.urlPattern, rule);
  const expiries = [earliest(config.ipRules), earliest(config.patches)].filter((t): t is number => t !== null);
  const ipAccess = config.ipRules.length > 0 ? compileIpAccess(config.ipRules) : null;
  return {
    id: config.site.id,
    orgId: config.site.org_id,
    domain: config.site.domain,
    mode: config.site.mode as SiteMode,
    originUrl: config.site.origin_url.replace(/\/+$/, ''),
    ipAccess,
    rateLimits,
    rateLimitsByPath,
    escalating: rateLimits.filter((r) => r.escalateMs > 0),
    patches,
    managed,
    managedLevels,
    schema,
    foldCase,
    tls: config.site.tls,
    verified: config.site.domain_verified_at !== null,
    hasRules: ipAccess !== null || rateLimits.length > 0 || patches !== null || managed !== null || schema !== null,
    nextExpiry: expiries.length > 0 ? Math.min(...expiries) : null,
    warnings,
  };
}

/**
 * Which rules of the site read this request's body, so the gateway buffers and inspects it:
 * `specific` when a virtual patch or the schema names this method and path, `managed` when managed
 * rules are on (they read every body).
 */
export function bodyReaders(site: CompiledSite, method: string, path: string, headerOverrides: readonly string[] = []): { specific: boolean; managed: boolean } {
  // A POST may stand for another method (inspect/method-override.ts), named in a header or in its
  // body: read it when a rule of any method it could stand for needs it.
  const methods = method === 'POST' ? [...POST_STANDS_FOR, ...headerOverrides] : [method, ...headerOverrides];
  const specific = methods.some(
    (m) => (site.patches?.inspectsBody(m, path) ?? false) || (site.schema !== null && site.schema.strictness !== 'lenient' && site.schema.enforcer.needsBody(m, path, site.foldCase)),
  );
  return { specific, managed: site.managed !== null };
}

/** The methods frameworks let a POST override to (and POST itself). */
const POST_STANDS_FOR = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Counter-store keys of the standing denies that could apply to this request. */
export function escalationKeys(site: CompiledSite, headers: Parameters<typeof identityKeys>[1], clientIp: string): string[] {
  if (site.escalating.length === 0) return [];
  const keys = new Set<string>();
  for (const rule of site.escalating) for (const identity of identityKeys(rule, headers, clientIp)) keys.add(`${site.id}:${identity}`);
  return [...keys];
}
