// Managed rules for one site: the shared program of its paranoia level (program.ts) plus its
// exclusions (exclusions.ts). A request is read in this order, and the first rule that matches and
// is not excluded decides — or, for weak signals (a rule's `severity`), the anomaly score of every
// distinct signal met so far reaches the level's threshold (types.ts) and the strongest names it:
//   1. every field: its value, then its name as sent;
//   2. the decoded path;
//   3. the User-Agent and Referer headers, then every other header an application may read
//      (headers.ts: not those whose grammar is known, such as Accept or Cookie);
//   4. a text body not parsed into fields (XML, plain text);
//   5. request-level checks: encoding anomalies, the method, missing headers, session parameters.
// Uploaded file names (multipart filenames, X-File-Name headers) are also read as file names.
// Within one text, rules are preferred in catalogue order (catalogue.ts). Attack categories come
// before protocol anomalies, so a traversal written with overlong UTF-8 is reported as traversal.
// The hit carries the score and the signals counted, which the decision records.
import type { IncomingHttpHeaders } from 'node:http';
import type { ManagedRulesSettings } from '../../../platform/db/schema.ts';
import type { InspectedRequest } from '../../inspected-request.ts';
import type { Field } from '../../inspect/fields.ts';
import { RULE_DEFINITIONS } from '../../../schemas/managed-rules/catalogue.ts';
import { compileExclusions, isExcluded, type CompiledExclusions } from './exclusions.ts';
import { freeFormHeaders } from './headers.ts';
import { programFor, type LevelProgram, type RuleHits, type SessionParameterCheck } from './program.ts';
import type { ParanoiaLevel } from '../../../schemas/managed-rules/types.ts';

export interface ManagedRuleHit {
  /** The rule that names the decision: the decisive match, or the weak signal with most points. */
  ruleId: string;
  /** The request's anomaly score (types.ts): the points of every distinct rule counted. */
  score: number;
  /** Every rule counted, in catalogue order. */
  signals: readonly string[];
}

export interface ManagedRuleSet {
  match(request: InspectedRequest): ManagedRuleHit | null;
}

const USER_AGENT_NAMES: readonly string[] = ['user-agent'];
const REFERER_NAMES: readonly string[] = ['referer'];
/** A scheme and `//`: what a browser's Referer starts with. */
const ABSOLUTE_URL = /^\s*[a-z][a-z\d+.-]*:\/\//i;
/** Where a parameter may come without a value, read whole by applications that parse the raw text. */
const VALUELESS_SOURCES: ReadonlySet<Field['source']> = new Set(['query', 'form', 'cookie']);

/** Decisive hits are made once per rule and level and reused: most blocked requests need only those. */
function decisiveHits(program: LevelProgram): readonly (ManagedRuleHit | undefined)[] {
  return RULE_DEFINITIONS.map((rule, i) => {
    const score = program.scores[i]!;
    return score >= program.threshold ? Object.freeze({ ruleId: rule.id, score, signals: Object.freeze([rule.id]) }) : undefined;
  });
}

/** Headers upload APIs take a file's name in (X-File-Name, X_Filename, X-Filename, X.Filename). */
const FILE_NAME_HEADER = /^x[-_.]file[-_]?name$/;

/** A parameter named like a session cookie (types.ts `session_parameter`); cookies themselves are where it belongs. */
function isSessionParameter(field: Field, check: SessionParameterCheck): boolean {
  // An XML element named SessionId is how SOAP APIs carry sessions, not a session fixed in a link.
  if (field.source === 'cookie' || field.source === 'file_name' || field.source === 'xml') return false;
  // field.names are lower case already (inspect/fields.ts).
  return field.names.some((name) => check.exact.has(name) || check.prefixes.some((prefix) => name.startsWith(prefix)));
}

/** The Referer names this site (its host, or a host under it), as a link followed from one of its pages does. */
function fromOwnPage(headers: IncomingHttpHeaders): boolean {
  const referer = headers.referer;
  const host = headers.host?.toLowerCase().replace(/:\d+$/, '');
  if (typeof referer !== 'string' || !host) return false;
  let from: string;
  try {
    from = new URL(referer).hostname.toLowerCase();
  } catch {
    return false;
  }
  return from === host || from.endsWith(`.${host}`);
}

function headerText(headers: IncomingHttpHeaders, name: 'user-agent' | 'referer'): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function clampLevel(level: number): ParanoiaLevel {
  const rounded = Math.round(level);
  if (!(rounded >= 1)) return 1;
  return (rounded > 4 ? 4 : rounded) as ParanoiaLevel;
}

/** Levels at which prose changes how rules count (types.ts `in_prose`). */
const PROSE_LEVEL = 2;
const LINE_BREAK_BETWEEN_TEXT = /\S[^\S\n]*\r?\n\s*\S/;

/**
 * How an injection opens, before its first line ends: a line break (alone or after a shell
 * separator), a quote or bracket closed and followed by a terminator or glued to a call, or a `${`
 * expression (`;%0aecho …`, `'%0a…`, `");}print(…`, `'.print(…`, `${popen(…`). A post or a snippet
 * starts with words, an opening quote or bracket, a fence or a table (`|Symbol|…`), not by closing
 * something.
 */
const BREAKOUT_START = /^[^\S\n]*(?:(?:[;|&]{1,2}|['"])?[^\S\n]*\r?\n|[)\]}][;)\]}]*[a-z_]\w*\(|['"](?:[)\]};|&]|\.?[a-z_]\w*\()|\$\{)/i;

/** Prose (types.ts `in_prose`): text on at least two lines — a post, a message, a code snippet — that does not open as an injection does. */
const isProse = (text: string): boolean => LINE_BREAK_BETWEEN_TEXT.test(text) && !BREAKOUT_START.test(text);

/** Weak signals met so far in one request: each rule counts once, whatever it matched. */
class Signals {
  /** Rule indexes counted; allocated on the first signal (most requests have none). */
  #seen: number[] | null = null;
  #score = 0;

  add(index: number, score: number): void {
    if (this.#seen === null) this.#seen = [];
    else if (this.#seen.includes(index)) return;
    this.#seen.push(index);
    this.#score += score;
  }

  /** The hit when the score reaches `threshold`: named after the strongest signal (the first on a tie). */
  hit(threshold: number, scores: Uint8Array): ManagedRuleHit | null {
    if (this.#seen === null || this.#score < threshold) return null;
    const indexes = [...this.#seen].sort((a, b) => a - b);
    let lead = indexes[0]!;
    for (const i of indexes) if (scores[i]! > scores[lead]!) lead = i;
    return { ruleId: RULE_DEFINITIONS[lead]!.id, score: this.#score, signals: indexes.map((i) => RULE_DEFINITIONS[i]!.id) };
  }
}

class SiteManagedRules implements ManagedRuleSet {
  readonly #decisive: readonly (ManagedRuleHit | undefined)[];

  constructor(
    private readonly program: LevelProgram,
    private readonly exclusions: CompiledExclusions,
  ) {
    this.#decisive = decisiveHits(program);
  }

  match(request: InspectedRequest): ManagedRuleHit | null {
    const { targets } = this.program;
    const signals = new Signals();
    let hit: ManagedRuleHit | null;
    for (const field of request.fields) {
      if ((hit = this.#count(targets.value.evaluate(field.value), request, field.names, signals, field.value))) return hit;
      // An XML field's name is the path of its elements: the document's schema, not data (the body is also read whole).
      if (field.source !== 'xml' && (hit = this.#nameHits(field, request, signals))) return hit;
      if (field.source === 'file_name' && (hit = this.#count(targets.file_name.evaluate(field.value), request, field.names, signals))) return hit;
    }
    if ((hit = this.#count(targets.path.evaluate(request.decodedPath), request, null, signals))) return hit;
    const userAgent = headerText(request.headers, 'user-agent');
    if (userAgent !== undefined && (hit = this.#count(targets.user_agent.evaluate(userAgent), request, USER_AGENT_NAMES, signals))) return hit;
    const referer = headerText(request.headers, 'referer');
    if (referer !== undefined) {
      if ((hit = this.#count(targets.referer.evaluate(referer), request, REFERER_NAMES, signals))) return hit;
      // Browsers send an absolute URL; anything else is free text put there, read as any other header.
      if (!ABSOLUTE_URL.test(referer) && (hit = this.#count(targets.header.evaluate(referer), request, REFERER_NAMES, signals))) return hit;
    }
    for (const [name, value] of freeFormHeaders(request.headers)) {
      const hits = targets.header.evaluate(value);
      if (hits.length > 0 && (hit = this.#count(hits, request, [name], signals))) return hit;
      if (FILE_NAME_HEADER.test(name) && (hit = this.#count(targets.file_name.evaluate(value), request, [name], signals))) return hit;
    }
    const body = request.bodyText;
    if (body !== null && (hit = this.#count(targets.body.evaluate(body), request, null, signals, body))) return hit;
    if ((hit = this.#requestChecks(request, userAgent, signals))) return hit;
    return signals.hit(this.program.threshold, this.program.scores);
  }

  /**
   * A field's name, and what the application may read in it as a value: what follows an `=` in it
   * (sent as `%3D`, a name and a value glued together, which a server decoding twice splits there),
   * or the whole name of a query, form or cookie parameter sent without a value (`?sleep(5)`),
   * which applications reading the raw query string, body or Cookie header take as it is.
   */
  #nameHits(field: Field, request: InspectedRequest, signals: Signals): ManagedRuleHit | null {
    const hit = this.#count(this.program.targets.name.evaluate(field.raw), request, field.names, signals);
    if (hit) return hit;
    const glued = field.raw.indexOf('=');
    const value = glued >= 0 ? field.raw.slice(glued + 1) : field.value === '' && VALUELESS_SOURCES.has(field.source) ? field.raw : null;
    if (value === null) return null;
    return this.#count(this.program.targets.value.evaluate(value), request, field.names, signals, value);
  }

  /**
   * Counts `hits` that are neither off site-wide nor excluded here: the first decisive one is the
   * answer; weak ones add to `signals`, and the request is refused as soon as they reach the threshold.
   * `text` (a field value or body) is what the hits were found in, for the rules prose demotes.
   */
  #count(hits: RuleHits, request: InspectedRequest, names: readonly string[] | null, signals: Signals, text?: string): ManagedRuleHit | null {
    let prose: boolean | undefined;
    for (const index of hits) {
      if (this.exclusions.disabled[index]) continue;
      if (this.exclusions.hasScoped && isExcluded(this.exclusions, index, request.path, names)) continue;
      const proseScore = this.program.proseScores[index]!;
      const decisive = this.#decisive[index];
      if ((proseScore > 0 || !decisive) && text !== undefined && this.program.level <= PROSE_LEVEL && (prose ??= isProse(text))) {
        // In prose, the rules it demotes are weak signals and broader rules' signals do not count.
        if (proseScore > 0) signals.add(index, proseScore);
        continue;
      }
      if (decisive) return decisive;
      signals.add(index, this.program.scores[index]!);
    }
    return signals.hit(this.program.threshold, this.program.scores);
  }

  #requestChecks(request: InspectedRequest, userAgent: string | undefined, signals: Signals): ManagedRuleHit | null {
    const { anomalies, methods, missingHeaders, sessionParameters } = this.program;
    const found: number[] = [];
    const seen = request.anomalies;
    if (seen.size > 0) for (const { anomaly, rule } of anomalies) if (seen.has(anomaly)) found.push(rule);
    for (const { methods: names, rule } of methods) if (names.includes(request.method)) found.push(rule);
    for (const { header, rule } of missingHeaders) {
      const value = header === 'user-agent' ? userAgent : request.headers[header];
      if (value === undefined || value === '') found.push(rule);
    }
    // The Referer is parsed only for a request that carries a session parameter (few do).
    for (const check of sessionParameters) {
      if (request.fields.some((field) => isSessionParameter(field, check)) && !fromOwnPage(request.headers)) found.push(check.rule);
    }
    if (found.length === 0) return null;
    return this.#count(found.sort((a, b) => a - b), request, null, signals);
  }
}

/** The rule that would decide at each paranoia level (index: level − 1), null where the request passes. */
export type ManagedByLevel = readonly (string | null)[];
export const PASSES_EVERY_LEVEL: ManagedByLevel = Object.freeze([null, null, null, null]);
const LEVELS: readonly ParanoiaLevel[] = [1, 2, 3, 4];

/**
 * A site's managed rules judged at every paranoia level, with its exclusions, for the traffic
 * record (so an impact preview of a level change is exact). A level holds every rule of the levels
 * below it, decisive where they were, with a threshold no higher and prose demoted only at levels
 * 1–2 (types.ts): what the most sensitive level lets through passes at every level.
 *
 * So the site's own rules (`rules`) ask level 4 first, and a request it passes is done — and
 * remembered as passing everywhere, so that judging it for the record costs nothing more. Most
 * requests thus cost one level-4 pass instead of one at the site's level; only those level 4
 * flags are asked at the site's level, and at the others when recorded.
 */
export class ManagedLevels {
  readonly #levels: readonly SiteManagedRules[];
  /** Requests (views) level 4 passed while they were decided. */
  readonly #passed = new WeakSet<InspectedRequest>();
  /** The site's own level, screened by level 4. */
  readonly rules: ManagedRuleSet;

  constructor(exclusions: CompiledExclusions, level: ParanoiaLevel) {
    this.#levels = LEVELS.map((l) => new SiteManagedRules(programFor(l), exclusions));
    const own = this.#levels[level - 1]!;
    const top = this.#levels[3]!;
    this.rules = {
      match: (request) => {
        const screen = top.match(request);
        if (screen === null) {
          this.#passed.add(request);
          return null;
        }
        return level === 4 ? screen : own.match(request);
      },
    };
  }

  /** `views`: the request and each method an override names, as the pipeline asks managed rules. */
  judge(views: readonly InspectedRequest[]): ManagedByLevel {
    if (views.every((view) => this.#passed.has(view))) return PASSES_EVERY_LEVEL;
    const at = (level: SiteManagedRules): string | null => {
      for (const view of views) {
        const hit = level.match(view);
        if (hit) return hit.ruleId;
      }
      return null;
    };
    const levels = this.#levels;
    const top = at(levels[3]!);
    return top === null ? PASSES_EVERY_LEVEL : [at(levels[0]!), at(levels[1]!), at(levels[2]!), top];
  }
}

/** A site's managed rules judged at every level (ManagedLevels), or null when they are off. */
export function compileManagedLevels(settings: ManagedRulesSettings | null | undefined, foldCase: boolean): ManagedLevels | null {
  if (!settings?.enabled) return null;
  return new ManagedLevels(compileExclusions(settings.exclusions, foldCase), clampLevel(settings.paranoia_level));
}

/**
 * The managed rules of a site, or null when they are off. `foldCase` is the site's path case
 * folding (`path_case: insensitive`), used by exclusions' URL patterns.
 */
export function compileManagedRules(settings: ManagedRulesSettings | null | undefined, foldCase: boolean): ManagedRuleSet | null {
  if (!settings?.enabled) return null;
  return new SiteManagedRules(programFor(clampLevel(settings.paranoia_level)), compileExclusions(settings.exclusions, foldCase));
}
