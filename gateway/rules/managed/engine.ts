// Managed rules for one site: the shared program of its paranoia level (program.ts) plus its
// exclusions (exclusions.ts). A request is read in this order, and the first rule that matches and
// is not excluded names the decision:
//   1. every field: its value, then its name as sent;
//   2. the decoded path;
//   3. the User-Agent and Referer headers;
//   4. a text body not parsed into fields (XML, plain text);
//   5. request-level checks: encoding anomalies, the method, missing headers.
// Within one text, rules are preferred in catalogue order (catalogue.ts). Attack categories come
// before protocol anomalies, so a traversal written with overlong UTF-8 is reported as traversal.
import type { IncomingHttpHeaders } from 'node:http';
import type { ManagedRulesSettings } from '../../../platform/db/schema.ts';
import type { InspectedRequest } from '../../inspected-request.ts';
import { RULE_DEFINITIONS } from '../../../schemas/managed-rules/catalogue.ts';
import { compileExclusions, isExcluded, type CompiledExclusions } from './exclusions.ts';
import { programFor, type LevelProgram, type RuleHits } from './program.ts';
import type { ParanoiaLevel } from '../../../schemas/managed-rules/types.ts';

export interface ManagedRuleHit {
  ruleId: string;
}

export interface ManagedRuleSet {
  match(request: InspectedRequest): ManagedRuleHit | null;
}

const USER_AGENT_NAMES: readonly string[] = ['user-agent'];
const REFERER_NAMES: readonly string[] = ['referer'];

/** Hits are made once per rule and reused: the decision only needs the id. */
const HITS: readonly ManagedRuleHit[] = RULE_DEFINITIONS.map((rule) => Object.freeze({ ruleId: rule.id }));

function headerText(headers: IncomingHttpHeaders, name: 'user-agent' | 'referer'): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function clampLevel(level: number): ParanoiaLevel {
  const rounded = Math.round(level);
  if (!(rounded >= 1)) return 1;
  return (rounded > 4 ? 4 : rounded) as ParanoiaLevel;
}

class SiteManagedRules implements ManagedRuleSet {
  constructor(
    private readonly program: LevelProgram,
    private readonly exclusions: CompiledExclusions,
  ) {}

  match(request: InspectedRequest): ManagedRuleHit | null {
    const { targets } = this.program;
    for (const field of request.fields) {
      const hit = this.#first(targets.value.evaluate(field.value), request, field.names) ?? this.#first(targets.name.evaluate(field.raw), request, field.names);
      if (hit) return hit;
    }
    let hit = this.#first(targets.path.evaluate(request.decodedPath), request, null);
    if (hit) return hit;
    const userAgent = headerText(request.headers, 'user-agent');
    if (userAgent !== undefined && (hit = this.#first(targets.user_agent.evaluate(userAgent), request, USER_AGENT_NAMES))) return hit;
    const referer = headerText(request.headers, 'referer');
    if (referer !== undefined && (hit = this.#first(targets.referer.evaluate(referer), request, REFERER_NAMES))) return hit;
    const body = request.bodyText;
    if (body !== null && (hit = this.#first(targets.body.evaluate(body), request, null))) return hit;
    return this.#requestChecks(request, userAgent);
  }

  /** The first of `hits` that is neither off site-wide nor excluded here. */
  #first(hits: RuleHits, request: InspectedRequest, names: readonly string[] | null): ManagedRuleHit | null {
    for (const index of hits) {
      if (this.exclusions.disabled[index]) continue;
      if (this.exclusions.hasScoped && isExcluded(this.exclusions, index, request.path, names)) continue;
      return HITS[index]!;
    }
    return null;
  }

  #requestChecks(request: InspectedRequest, userAgent: string | undefined): ManagedRuleHit | null {
    const { anomalies, methods, missingHeaders } = this.program;
    const found: number[] = [];
    const seen = request.anomalies;
    if (seen.size > 0) for (const { anomaly, rule } of anomalies) if (seen.has(anomaly)) found.push(rule);
    for (const { methods: names, rule } of methods) if (names.includes(request.method)) found.push(rule);
    for (const { header, rule } of missingHeaders) {
      const value = header === 'user-agent' ? userAgent : request.headers[header];
      if (value === undefined || value === '') found.push(rule);
    }
    if (found.length === 0) return null;
    return this.#first(found.sort((a, b) => a - b), request, null);
  }
}

/**
 * The managed rules of a site, or null when they are off. `foldCase` is the site's path case
 * folding (`path_case: insensitive`), used by exclusions' URL patterns.
 */
export function compileManagedRules(settings: ManagedRulesSettings | null | undefined, foldCase: boolean): ManagedRuleSet | null {
  if (!settings?.enabled) return null;
  return new SiteManagedRules(programFor(clampLevel(settings.paranoia_level)), compileExclusions(settings.exclusions, foldCase));
}
