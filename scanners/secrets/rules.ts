// Secret rules are data (rules/*.yaml, allowlist.yaml); this module parses them strictly — a bad
// rule file is an error naming the file, the rule and the field — and compiles them once: every
// regex on RE2 (linear time, so a rule or a hostile file cannot stall a worker), the keywords into
// one Aho-Corasick automaton.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import RE2 from 're2';
import { parse } from 'yaml';
import type { Severity } from '../types.ts';
import { KeywordMatcher } from './keywords.ts';
import { VALIDATORS, type Validator } from './validators.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export interface RuleAllowlist {
  /** RE2 patterns tested against the secret; a hit matching one is dropped. */
  regexes?: string[];
  /** RE2 patterns tested against the whole regex match (key name, URL host, …). */
  match_regexes?: string[];
  /** RE2 patterns tested against the line(s) of the match. */
  line_regexes?: string[];
  /** Case-insensitive substrings of the secret that mark a placeholder. */
  stopwords?: string[];
  /** RE2 patterns over the relative path (forward slashes) where the rule does not apply. */
  paths?: string[];
}

export interface RuleDefinition {
  id: string;
  title: string;
  severity: Severity;
  cwe: string | null;
  /**
   * Lower-case ASCII substrings: the rule runs only on text containing one (case-insensitive). May
   * be empty only when `paths` is given (a file format known by its name, e.g. config/master.key).
   */
  keywords: string[];
  /** RE2 patterns over the relative path (forward slashes): the rule runs only on matching files. */
  paths?: string[];
  /** RE2 syntax. The secret is the group named `secret`, else group 1, else the whole match. */
  regex: string;
  /**
   * RE2 pattern the text just before the match must satisfy (anchor it with `$`): a lookbehind,
   * which RE2 lacks. Lets a regex start with a literal (`://`), which RE2 finds with memchr.
   */
  preceded_by?: string;
  /** Minimum Shannon entropy (bits per character) of the secret. */
  entropy?: number;
  /** Name of a structural check in validators.ts. */
  validate?: string;
  allowlist?: RuleAllowlist;
  /** Generic rules lose to specific ones when both find the same text. */
  generic?: boolean;
  /** Lines the rule must report (tested); fake values. */
  examples?: string[];
  /** Lines the rule must not report (tested). */
  counter_examples?: string[];
}

export interface GlobalAllowlistDefinition {
  regexes?: string[];
  stopwords?: string[];
}

export interface CompiledRule {
  readonly index: number;
  readonly id: string;
  readonly title: string;
  readonly severity: Severity;
  readonly cwe: string | null;
  readonly keywords: readonly string[];
  /** The rule runs only on paths matching one of these (none: every path). */
  readonly onlyPaths: readonly RE2[];
  /**
   * Global + indices flags: byte offsets of the match and of each group. A leading `\b` is taken
   * off the pattern and checked in code (`leadingBoundary`): RE2 then sees the literal prefix and
   * skips to candidates with memchr — 4 to 10 times faster on our corpus.
   */
  readonly regex: RE2;
  readonly leadingBoundary: boolean;
  readonly precededBy: RE2 | undefined;
  readonly entropy: number;
  readonly validator: Validator | undefined;
  readonly allowSecret: readonly RE2[];
  readonly allowMatch: readonly RE2[];
  readonly allowLine: readonly RE2[];
  readonly stopwords: readonly string[];
  readonly allowPaths: readonly RE2[];
  readonly generic: boolean;
  readonly definition: RuleDefinition;
}

export interface RuleSet {
  readonly rules: readonly CompiledRule[];
  readonly matcher: KeywordMatcher;
  /** keyword id → indices of the rules it gates. */
  readonly keywordRules: readonly (readonly number[])[];
  /** Indices of the rules without keywords, gated by their `paths` alone. */
  readonly pathOnlyRules: readonly number[];
  readonly globalRegexes: readonly RE2[];
  readonly globalStopwords: readonly string[];
}

export class RuleFileError extends Error {
  override name = 'RuleFileError';
}

const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];
const RULE_KEYS = new Set(['id', 'title', 'severity', 'cwe', 'keywords', 'paths', 'regex', 'preceded_by', 'entropy', 'validate', 'allowlist', 'generic', 'examples', 'counter_examples']);
const ALLOWLIST_KEYS = new Set(['regexes', 'match_regexes', 'line_regexes', 'stopwords', 'paths']);

type Fail = (message: string) => never;

function stringList(value: unknown, field: string, fail: Fail): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) fail(`${field} must be a list of strings`);
  return value as string[];
}

function checkRegex(pattern: string, field: string, fail: Fail): void {
  try {
    new RE2(pattern, 'u');
  } catch (err) {
    fail(`${field} is not a valid RE2 pattern: ${errorMessage(err)}`);
  }
}

function parseAllowlist(value: unknown, fail: Fail): RuleAllowlist {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('allowlist must be a mapping');
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (!ALLOWLIST_KEYS.has(key)) fail(`allowlist has an unknown field "${key}"`);
  const out: RuleAllowlist = {};
  for (const field of ['regexes', 'match_regexes', 'line_regexes', 'paths'] as const) {
    if (raw[field] === undefined) continue;
    const list = stringList(raw[field], `allowlist.${field}`, fail);
    list.forEach((r, i) => checkRegex(r, `allowlist.${field}[${i}]`, fail));
    out[field] = list;
  }
  if (raw.stopwords !== undefined) out.stopwords = stringList(raw.stopwords, 'allowlist.stopwords', fail);
  return out;
}

/** Validates one rule (as parsed from YAML or given in code); throws RuleFileError naming `where`. */
export function validateRule(value: unknown, where: string): RuleDefinition {
  const label = typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string' ? ` (${(value as { id: string }).id})` : '';
  const fail: Fail = (message) => {
    throw new RuleFileError(`${where}${label}: ${message}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('a rule must be a mapping');
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (!RULE_KEYS.has(key)) fail(`unknown field "${key}"`);
  if (typeof raw.id !== 'string' || !/^[a-z0-9][a-z0-9-]{1,63}$/.test(raw.id)) fail('id must be lower-case letters, digits and dashes');
  if (typeof raw.title !== 'string' || raw.title.trim() === '') fail('title is required');
  if (typeof raw.severity !== 'string' || !SEVERITIES.includes(raw.severity as Severity)) fail(`severity must be one of ${SEVERITIES.join(', ')}`);
  if (raw.cwe !== null && (typeof raw.cwe !== 'string' || !/^CWE-\d+$/.test(raw.cwe))) fail('cwe must be CWE-<number> or null');
  const keywords = stringList(raw.keywords, 'keywords', fail);
  let paths: string[] | undefined;
  if (raw.paths !== undefined) {
    paths = stringList(raw.paths, 'paths', fail);
    if (paths.length === 0) fail('paths must not be empty when given');
    paths.forEach((r, i) => checkRegex(r, `paths[${i}]`, fail));
  }
  if (keywords.length === 0 && paths === undefined) fail('keywords must not be empty (they gate the regex) unless paths gate it');
  for (const kw of keywords) {
    if (!/^[\x20-\x7e]{2,64}$/.test(kw) || kw !== kw.toLowerCase()) fail(`keyword ${JSON.stringify(kw)} must be lower-case printable ASCII, 2–64 characters`);
  }
  if (typeof raw.regex !== 'string' || raw.regex === '') fail('regex is required');
  checkRegex(raw.regex, 'regex', fail);
  if (new RE2(raw.regex, 'u').test('')) fail('regex matches the empty string');
  const rule: RuleDefinition = {
    id: raw.id,
    title: raw.title,
    severity: raw.severity as Severity,
    cwe: raw.cwe as string | null,
    keywords,
    regex: raw.regex,
  };
  if (paths !== undefined) rule.paths = paths;
  if (raw.preceded_by !== undefined) {
    if (typeof raw.preceded_by !== 'string' || raw.preceded_by === '') fail('preceded_by must be a pattern');
    checkRegex(raw.preceded_by, 'preceded_by', fail);
    rule.preceded_by = raw.preceded_by;
  }
  if (raw.entropy !== undefined) {
    if (typeof raw.entropy !== 'number' || !(raw.entropy >= 0 && raw.entropy <= 8)) fail('entropy must be a number from 0 to 8');
    rule.entropy = raw.entropy;
  }
  if (raw.validate !== undefined) {
    if (typeof raw.validate !== 'string' || !(raw.validate in VALIDATORS)) fail(`validate must be one of ${Object.keys(VALIDATORS).join(', ')}`);
    rule.validate = raw.validate;
  }
  if (raw.allowlist !== undefined) rule.allowlist = parseAllowlist(raw.allowlist, fail);
  if (raw.generic !== undefined) {
    if (typeof raw.generic !== 'boolean') fail('generic must be true or false');
    rule.generic = raw.generic;
  }
  if (raw.examples !== undefined) rule.examples = stringList(raw.examples, 'examples', fail);
  if (raw.counter_examples !== undefined) rule.counter_examples = stringList(raw.counter_examples, 'counter_examples', fail);
  return rule;
}

/** Parses a rule file: a mapping with a `rules` list. */
export function parseRuleFile(text: string, source: string): RuleDefinition[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new RuleFileError(`${source}: not valid YAML: ${errorMessage(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { rules?: unknown }).rules)) {
    throw new RuleFileError(`${source}: expected a mapping with a "rules" list`);
  }
  const extra = Object.keys(doc).filter((k) => k !== 'rules');
  if (extra.length > 0) throw new RuleFileError(`${source}: unknown top-level field "${extra[0]}"`);
  return (doc as { rules: unknown[] }).rules.map((r, i) => validateRule(r, `${source}: rules[${i}]`));
}

export function parseAllowlistFile(text: string, source: string): GlobalAllowlistDefinition {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new RuleFileError(`${source}: not valid YAML: ${errorMessage(err)}`);
  }
  const fail: Fail = (message) => {
    throw new RuleFileError(`${source}: ${message}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) fail('expected a mapping');
  const raw = doc as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (key !== 'regexes' && key !== 'stopwords') fail(`unknown field "${key}"`);
  const out: GlobalAllowlistDefinition = {};
  if (raw.regexes !== undefined) {
    out.regexes = stringList(raw.regexes, 'regexes', fail);
    out.regexes.forEach((r, i) => checkRegex(r, `regexes[${i}]`, fail));
  }
  if (raw.stopwords !== undefined) out.stopwords = stringList(raw.stopwords, 'stopwords', fail);
  return out;
}

/** True when a pattern has `|` outside any group or class (then `\b…|…` binds to one branch). */
function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++; // a leading ] is literal
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

/** A leading `\b` that applies to every match, so it can be checked in code instead. */
function strippableBoundary(pattern: string): boolean {
  return pattern.startsWith('\\b') && !hasTopLevelAlternation(pattern);
}

export function compileRuleSet(definitions: readonly RuleDefinition[], allowlist: GlobalAllowlistDefinition = {}): RuleSet {
  const seen = new Set<string>();
  for (const def of definitions) {
    if (seen.has(def.id)) throw new RuleFileError(`duplicate rule id "${def.id}"`);
    seen.add(def.id);
  }
  const rules: CompiledRule[] = definitions.map((def, index) => ({
    index,
    id: def.id,
    title: def.title,
    severity: def.severity,
    cwe: def.cwe,
    keywords: def.keywords,
    onlyPaths: (def.paths ?? []).map((r) => new RE2(r, 'u')),
    regex: new RE2(strippableBoundary(def.regex) ? def.regex.slice(2) : def.regex, 'gdu'),
    leadingBoundary: strippableBoundary(def.regex),
    precededBy: def.preceded_by === undefined ? undefined : new RE2(def.preceded_by, 'u'),
    entropy: def.entropy ?? 0,
    validator: def.validate === undefined ? undefined : VALIDATORS[def.validate],
    allowSecret: (def.allowlist?.regexes ?? []).map((r) => new RE2(r, 'u')),
    allowMatch: (def.allowlist?.match_regexes ?? []).map((r) => new RE2(r, 'u')),
    allowLine: (def.allowlist?.line_regexes ?? []).map((r) => new RE2(r, 'u')),
    stopwords: (def.allowlist?.stopwords ?? []).map((w) => w.toLowerCase()),
    allowPaths: (def.allowlist?.paths ?? []).map((r) => new RE2(r, 'u')),
    generic: def.generic ?? false,
    definition: def,
  }));
  const keywordIds = new Map<string, number>();
  const keywordRules: number[][] = [];
  for (const rule of rules) {
    for (const kw of rule.keywords) {
      let id = keywordIds.get(kw);
      if (id === undefined) {
        id = keywordRules.length;
        keywordIds.set(kw, id);
        keywordRules.push([]);
      }
      if (!keywordRules[id]!.includes(rule.index)) keywordRules[id]!.push(rule.index);
    }
  }
  return {
    rules,
    matcher: new KeywordMatcher([...keywordIds.keys()]),
    keywordRules,
    pathOnlyRules: rules.filter((r) => r.keywords.length === 0).map((r) => r.index),
    globalRegexes: (allowlist.regexes ?? []).map((r) => new RE2(r, 'u')),
    globalStopwords: (allowlist.stopwords ?? []).map((w) => w.toLowerCase()),
  };
}

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const DEFAULT_RULES_DIR = join(HERE, 'rules');
export const DEFAULT_ALLOWLIST_FILE = join(HERE, 'allowlist.yaml');

/** The built-in rule definitions, file by file in name order. */
export function loadDefaultRuleDefinitions(dir: string = DEFAULT_RULES_DIR): RuleDefinition[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  return files.flatMap((f) => parseRuleFile(readFileSync(join(dir, f), 'utf8'), `rules/${f}`));
}

export function loadDefaultAllowlist(file: string = DEFAULT_ALLOWLIST_FILE): GlobalAllowlistDefinition {
  return parseAllowlistFile(readFileSync(file, 'utf8'), 'allowlist.yaml');
}

export interface LoadRuleSetOptions {
  /** Extra rules (validated like file rules). */
  extra?: readonly unknown[];
  /** Leave the built-in rules out (only `extra`). */
  replaceDefaults?: boolean;
  /** Extra global allowlist entries. */
  allowlist?: GlobalAllowlistDefinition;
}

// The only module-level state: compiled built-in rules, shared by every scan in this thread.
let cachedDefault: RuleSet | undefined;

/** Built-in rules (compiled once per thread) or a custom set. */
export function loadRuleSet(options: LoadRuleSetOptions = {}): RuleSet {
  const custom = options.extra !== undefined || options.replaceDefaults === true || options.allowlist !== undefined;
  if (!custom) return (cachedDefault ??= compileRuleSet(loadDefaultRuleDefinitions(), loadDefaultAllowlist()));
  const extra = (options.extra ?? []).map((r, i) => validateRule(r, `rules option [${i}]`));
  const defs = options.replaceDefaults === true ? extra : [...loadDefaultRuleDefinitions(), ...extra];
  const base = loadDefaultAllowlist();
  return compileRuleSet(defs, {
    regexes: [...(base.regexes ?? []), ...(options.allowlist?.regexes ?? [])],
    stopwords: [...(base.stopwords ?? []), ...(options.allowlist?.stopwords ?? [])],
  });
}
