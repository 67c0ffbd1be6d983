// The compiled form of the catalogue at one paranoia level: per target, the patterns of the rules
// at or below the level that read it, in one RE2.Set per canonical form, so each canonical text is
// scanned once whatever the number of rules. Programs depend on nothing but the level, so there are
// at most four, shared by every site (site-specific exclusions are applied to a program's answers,
// engine.ts).
//
// Each target keeps a bounded memo of the answers for short inputs: the same User-Agent, Referer,
// path, cookie and parameter names come back request after request, and an answer depends only on
// the text. An attacker sending unique values only gets the uncached cost.
import RE2 from 're2';
import type { Anomaly } from '../../inspect/fields.ts';
import { base64Text } from './base64-text.ts';
import { canonicalForms, mayHoldCommand, shellForm, type CanonicalOptions } from './canonicalise.ts';
import { RULE_DEFINITIONS } from '../../../schemas/managed-rules/catalogue.ts';
import { isInert } from './prefilter.ts';
import { hostClasses, mayHoldHost } from './ssrf-hosts.ts';
import { ANOMALY_THRESHOLD, SEVERITY_SCORE, TARGETS, type Form, type HostClass, type ParanoiaLevel, type RuleDefinition, type Target } from '../../../schemas/managed-rules/types.ts';

type RegexSet = InstanceType<typeof RE2.Set>;

/** Rule indexes (positions in RULE_DEFINITIONS), ascending: the order a decision prefers them in. */
export type RuleHits = readonly number[];
const NONE: RuleHits = Object.freeze([]);

const SET_MEMORY = 64 * 1024 * 1024;
const MEMO_ENTRIES = 4096;
const MEMO_MAX_LENGTH = 512;

/** Some rules' patterns as one RE2.Set, with each pattern on its own for when the set gives up. */
interface PatternGroup {
  set: RegexSet;
  /** Rule index of each pattern, in set order. */
  rules: readonly number[];
  single: readonly RE2[];
}

function patternGroup(rules: readonly number[]): PatternGroup | null {
  if (rules.length === 0) return null;
  const patterns = rules.map((i) => RULE_DEFINITIONS[i]!.pattern!);
  return {
    set: new RE2.Set(patterns, 'u', { maxMem: SET_MEMORY }),
    rules,
    single: patterns.map((p) => new RE2(p, 'u')),
  };
}

function addMatches(group: PatternGroup, text: string, hits: number[]): void {
  let matched: number[];
  try {
    matched = group.set.match(text);
  } catch {
    // The set's DFA ran out of memory on this input: each pattern alone still runs in linear time.
    matched = [];
    group.single.forEach((regex, i) => {
      if (regex.test(text)) matched.push(i);
    });
  }
  for (const i of matched) hits.push(group.rules[i]!);
}

/**
 * Raw patterns are about an encoding (types.ts `raw`), so they read only texts canonicalisation
 * changed beyond case — and, for a base64 carrier, what it carries, as canonicalForms reads it.
 */
function matchRaw(group: PatternGroup, raw: string, forms: readonly string[], hits: number[]): void {
  const lower = raw.toLowerCase();
  if (forms.length === 1 && forms[0] === lower) return;
  addMatches(group, lower, hits);
  const carried = forms.length > 1 ? base64Text(raw.trim()) : null;
  if (carried !== null) addMatches(group, carried.toLowerCase(), hits);
}

const ascending = (a: number, b: number): number => a - b;

/** Everything a level's rules look for in one target. */
export class TargetProgram {
  readonly #memo = new Map<string, RuleHits>();

  constructor(
    private readonly text: PatternGroup | null,
    private readonly shell: PatternGroup | null,
    /** Patterns over the input before canonicalisation (types.ts `raw`). */
    private readonly raw: PatternGroup | null,
    /** Rule index per host class, for the SSRF host checks of this target. */
    private readonly hosts: ReadonlyMap<HostClass, number>,
    /** Values, names and bodies: skip inert texts (prefilter.ts). */
    private readonly skipInert: boolean,
    /** Memoise answers (not for bodies, which are long and seldom repeat). */
    private readonly memoise: boolean,
    private readonly options: CanonicalOptions | undefined,
    /** Read only scheme-qualified URL hosts (paths: `//` there is a doubled slash). */
    private readonly schemeOnlyHosts = false,
  ) {}

  get empty(): boolean {
    return !this.text && !this.shell && !this.raw && this.hosts.size === 0;
  }

  /** The rules (indexes, ascending) whose pattern or host check matches `raw`. */
  evaluate(raw: string): RuleHits {
    if (raw === '' || (this.skipInert && isInert(raw))) return NONE;
    if (!this.memoise || raw.length > MEMO_MAX_LENGTH) return this.#evaluate(raw);
    const known = this.#memo.get(raw);
    if (known) return known;
    const hits = this.#evaluate(raw);
    if (this.#memo.size >= MEMO_ENTRIES) this.#memo.clear();
    this.#memo.set(raw, hits);
    return hits;
  }

  /** The full evaluation, without the fast path or the memo (also used by tests). */
  evaluateFully(raw: string): RuleHits {
    return this.#evaluate(raw);
  }

  #evaluate(raw: string): RuleHits {
    const hits: number[] = [];
    const forms = canonicalForms(raw, this.options);
    if (this.raw) matchRaw(this.raw, raw, forms, hits);
    for (const text of forms) {
      if (this.text) addMatches(this.text, text, hits);
      if (this.shell && mayHoldCommand(text, this.options)) addMatches(this.shell, shellForm(text), hits);
      if (this.hosts.size > 0 && mayHoldHost(text)) {
        for (const hostClass of hostClasses(text, this.schemeOnlyHosts)) {
          const rule = this.hosts.get(hostClass);
          if (rule !== undefined) hits.push(rule);
        }
      }
    }
    if (hits.length === 0) return NONE;
    return Object.freeze([...new Set(hits)].sort(ascending));
  }
}

/** A level's programs per target, and its request-level checks. */
export interface LevelProgram {
  level: ParanoiaLevel;
  /** The anomaly score that blocks at this level (types.ts); decisive rules score it alone. */
  threshold: number;
  /** Points per rule index: the threshold for the level's own rules, a signal's points, else 0. */
  scores: Uint8Array;
  /** Points per rule index when the text matched is prose at levels 1–2 (types.ts `in_prose`), else 0. */
  proseScores: Uint8Array;
  targets: Readonly<Record<Target, TargetProgram>>;
  anomalies: readonly { anomaly: Anomaly; rule: number }[];
  methods: readonly { methods: readonly string[]; rule: number }[];
  missingHeaders: readonly { header: string; rule: number }[];
  /** Session-cookie names (types.ts `session_parameter`), split once into exact names and `*` prefixes. */
  sessionParameters: readonly SessionParameterCheck[];
}

export interface SessionParameterCheck {
  exact: ReadonlySet<string>;
  prefixes: readonly string[];
  rule: number;
}

const CANONICAL_OPTIONS: Readonly<Record<Target, CanonicalOptions | undefined>> = {
  value: undefined,
  name: undefined,
  path: { path: true },
  user_agent: { userAgent: true },
  referer: { rawUrl: true },
  header: undefined,
  body: undefined,
  file_name: undefined,
};

function buildProgram(level: ParanoiaLevel): LevelProgram {
  const threshold = ANOMALY_THRESHOLD[level];
  const scoreOf = (rule: RuleDefinition): number =>
    rule.paranoia_level <= level ? threshold : rule.signal && rule.signal.from <= level ? SEVERITY_SCORE[rule.signal.severity] : 0;
  const inLevel = RULE_DEFINITIONS.map((rule, index) => ({ rule, index })).filter(({ rule }) => scoreOf(rule) > 0);
  // Targets reading the same patterns share one set (value and body, usually).
  const groups = new Map<string, PatternGroup | null>();
  const groupFor = (target: Target, form: Form): PatternGroup | null => {
    const rules = inLevel.filter(({ rule }) => rule.pattern !== undefined && (rule.form ?? 'text') === form && rule.targets.includes(target)).map(({ index }) => index);
    const key = `${form}:${rules.join(',')}`;
    if (!groups.has(key)) groups.set(key, patternGroup(rules));
    return groups.get(key)!;
  };
  const targets = {} as Record<Target, TargetProgram>;
  for (const target of TARGETS) {
    const hosts = new Map<HostClass, number>();
    for (const { rule, index } of inLevel) {
      if (rule.check?.kind === 'host' && rule.targets.includes(target)) hosts.set(rule.check.hostClass, index);
    }
    const fieldLike = target === 'value' || target === 'name' || target === 'header' || target === 'body';
    targets[target] = new TargetProgram(groupFor(target, 'text'), groupFor(target, 'shell'), groupFor(target, 'raw'), hosts, fieldLike, target !== 'body', CANONICAL_OPTIONS[target], target === 'path');
  }
  const anomalies: { anomaly: Anomaly; rule: number }[] = [];
  const methods: { methods: readonly string[]; rule: number }[] = [];
  const missingHeaders: { header: string; rule: number }[] = [];
  const sessionParameters: SessionParameterCheck[] = [];
  for (const { rule, index } of inLevel) {
    const check = rule.check;
    if (check?.kind === 'anomaly') anomalies.push({ anomaly: check.anomaly, rule: index });
    else if (check?.kind === 'method') methods.push({ methods: check.methods, rule: index });
    else if (check?.kind === 'missing_header') missingHeaders.push({ header: check.header, rule: index });
    else if (check?.kind === 'session_parameter') {
      const prefixes = check.names.filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1));
      sessionParameters.push({ exact: new Set(check.names.filter((name) => !name.endsWith('*'))), prefixes, rule: index });
    }
  }
  const scores = new Uint8Array(RULE_DEFINITIONS.map(scoreOf));
  const proseScores = new Uint8Array(RULE_DEFINITIONS.map((rule) => (rule.in_prose && scoreOf(rule) > 0 ? SEVERITY_SCORE[rule.in_prose] : 0)));
  return { level, threshold, scores, proseScores, targets, anomalies, methods, missingHeaders, sessionParameters };
}

const PROGRAMS = new Map<ParanoiaLevel, LevelProgram>();

/** The program of a level, compiled on first use and shared by every site at that level. */
export function programFor(level: ParanoiaLevel): LevelProgram {
  let program = PROGRAMS.get(level);
  if (!program) {
    program = buildProgram(level);
    PROGRAMS.set(level, program);
  }
  return program;
}
