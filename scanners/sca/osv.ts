// OSV records (https://ossf.github.io/osv-schema/): validation on import, and the schema's
// evaluation algorithm deciding whether one package version is affected.
import type { Severity } from '../types.ts';
import { cvss3BaseScore, severityFromScore } from './cvss.ts';
import { normalizePackageName } from './names.ts';
import { comparatorFor, compareVersions, rangeComparator, type Comparator } from './versions/index.ts';

export type OsvRangeType = 'SEMVER' | 'ECOSYSTEM' | 'GIT';

/** Exactly one of the four keys is set. */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

export interface OsvRange {
  type: OsvRangeType;
  repo?: string;
  events: OsvEvent[];
}

export interface OsvSeverity {
  type: string;
  score: string;
}

export interface OsvPackage {
  ecosystem: string;
  name: string;
  purl?: string;
}

export interface OsvAffected {
  /** Absent for entries that only describe commits of a repository. */
  package?: OsvPackage;
  ranges: OsvRange[];
  versions: string[];
  severity: OsvSeverity[];
  ecosystem_specific?: Record<string, unknown>;
  database_specific?: Record<string, unknown>;
}

export interface OsvRecord {
  schema_version?: string;
  id: string;
  modified: string;
  published?: string;
  withdrawn?: string;
  aliases: string[];
  related: string[];
  summary?: string;
  details?: string;
  severity: OsvSeverity[];
  affected: OsvAffected[];
  references: { type: string; url: string }[];
  database_specific?: Record<string, unknown>;
}

export type OsvParseResult = { ok: true; record: OsvRecord; warnings: string[] } | { ok: false; errors: string[] };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9._:+-]*$/;
const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const;
// Bounds against hostile input; real records stay far below (the largest list tens of thousands of versions).
const MAX = { ids: 1000, affected: 10_000, ranges: 1000, events: 10_000, versions: 200_000, text: 1_000_000 };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates a parsed JSON value as an OSV record and returns a typed copy of the fields Aegis uses.
 * Errors reject the record (missing id/modified, wrong types, malformed events); warnings keep it but
 * flag what cannot be evaluated as written (a range with no `introduced`, versions the ecosystem's
 * comparator cannot read).
 */
export function parseOsvRecord(input: unknown): OsvParseResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!isObj(input)) return { ok: false, errors: ['record is not a JSON object'] };
  const id = input.id;
  if (typeof id !== 'string' || id.length > 255 || !ID.test(id)) errors.push('id: required, letters, digits and ._:+- only');
  const modified = input.modified;
  if (typeof modified !== 'string' || !RFC3339.test(modified) || Number.isNaN(Date.parse(modified))) errors.push('modified: required RFC 3339 timestamp');
  for (const key of ['published', 'withdrawn'] as const) {
    const v = input[key];
    if (v !== undefined && (typeof v !== 'string' || !RFC3339.test(v))) errors.push(`${key}: must be an RFC 3339 timestamp`);
  }
  for (const key of ['schema_version', 'summary', 'details'] as const) {
    const v = input[key];
    if (v !== undefined && (typeof v !== 'string' || v.length > MAX.text)) errors.push(`${key}: must be a string`);
  }
  const aliases = stringList(input.aliases, 'aliases', MAX.ids, errors);
  const related = stringList(input.related, 'related', MAX.ids, errors);
  const severity = severities(input.severity, 'severity', errors);
  const references: { type: string; url: string }[] = [];
  if (Array.isArray(input.references)) {
    for (const r of input.references) if (isObj(r) && typeof r.type === 'string' && typeof r.url === 'string') references.push({ type: r.type, url: r.url });
  } else if (input.references !== undefined) errors.push('references: must be an array');
  if (input.database_specific !== undefined && !isObj(input.database_specific)) errors.push('database_specific: must be an object');

  const affected: OsvAffected[] = [];
  if (input.affected !== undefined) {
    if (!Array.isArray(input.affected) || input.affected.length > MAX.affected) errors.push('affected: must be an array');
    else input.affected.forEach((a, i) => {
      const parsed = parseAffected(a, `affected[${i}]`, errors, warnings);
      if (parsed) affected.push(parsed);
    });
  }
  if (errors.length > 0) return { ok: false, errors };

  const record: OsvRecord = { id: id as string, modified: modified as string, aliases, related, severity, affected, references };
  if (typeof input.schema_version === 'string') record.schema_version = input.schema_version;
  if (typeof input.published === 'string') record.published = input.published;
  if (typeof input.withdrawn === 'string') record.withdrawn = input.withdrawn;
  if (typeof input.summary === 'string') record.summary = input.summary;
  if (typeof input.details === 'string') record.details = input.details;
  if (isObj(input.database_specific)) record.database_specific = input.database_specific;
  return { ok: true, record, warnings };
}

function stringList(v: unknown, field: string, max: number, errors: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > max || !v.every((x) => typeof x === 'string')) {
    errors.push(`${field}: must be an array of strings`);
    return [];
  }
  return v as string[];
}

function severities(v: unknown, field: string, errors: string[]): OsvSeverity[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    errors.push(`${field}: must be an array`);
    return [];
  }
  const out: OsvSeverity[] = [];
  for (const s of v) {
    if (isObj(s) && typeof s.type === 'string' && typeof s.score === 'string') out.push({ type: s.type, score: s.score });
    else errors.push(`${field}: entries need string type and score`);
  }
  return out;
}

function parseAffected(a: unknown, where: string, errors: string[], warnings: string[]): OsvAffected | null {
  if (!isObj(a)) {
    errors.push(`${where}: must be an object`);
    return null;
  }
  const out: OsvAffected = { ranges: [], versions: stringList(a.versions, `${where}.versions`, MAX.versions, errors), severity: severities(a.severity, `${where}.severity`, errors) };
  if (a.package !== undefined) {
    const p = a.package;
    if (!isObj(p) || typeof p.ecosystem !== 'string' || typeof p.name !== 'string' || p.name === '') errors.push(`${where}.package: needs ecosystem and name strings`);
    else {
      out.package = { ecosystem: p.ecosystem, name: p.name };
      if (typeof p.purl === 'string') out.package.purl = p.purl;
    }
  }
  if (isObj(a.ecosystem_specific)) out.ecosystem_specific = a.ecosystem_specific;
  if (isObj(a.database_specific)) out.database_specific = a.database_specific;
  if (a.ranges !== undefined) {
    if (!Array.isArray(a.ranges) || a.ranges.length > MAX.ranges) errors.push(`${where}.ranges: must be an array`);
    else a.ranges.forEach((r, j) => {
      const range = parseRange(r, `${where}.ranges[${j}]`, out.package?.ecosystem, errors, warnings);
      if (range) out.ranges.push(range);
    });
  }
  const eco = out.package?.ecosystem;
  if (eco && comparatorFor(eco)) {
    const bad = out.versions.filter((v) => compareVersions(eco, v, v) === null);
    if (bad.length > 0) warnings.push(`${where}.versions: ${bad.length} not valid ${eco} versions (matched by exact text only), e.g. ${bad[0]!.slice(0, 60)}`);
  }
  return out;
}

function parseRange(r: unknown, where: string, ecosystem: string | undefined, errors: string[], warnings: string[]): OsvRange | null {
  if (!isObj(r)) {
    errors.push(`${where}: must be an object`);
    return null;
  }
  if (r.type !== 'SEMVER' && r.type !== 'ECOSYSTEM' && r.type !== 'GIT') {
    errors.push(`${where}.type: must be SEMVER, ECOSYSTEM or GIT`);
    return null;
  }
  if (!Array.isArray(r.events) || r.events.length === 0 || r.events.length > MAX.events) {
    errors.push(`${where}.events: must be a non-empty array`);
    return null;
  }
  const events: OsvEvent[] = [];
  for (const e of r.events) {
    const keys = isObj(e) ? Object.keys(e).filter((k) => (EVENT_KEYS as readonly string[]).includes(k)) : [];
    const key = keys[0] as (typeof EVENT_KEYS)[number] | undefined;
    const value = key && isObj(e) ? e[key] : undefined;
    if (keys.length !== 1 || !key || typeof value !== 'string' || value === '') {
      errors.push(`${where}.events: each event needs exactly one of introduced, fixed, last_affected, limit with a version`);
      return null;
    }
    events.push({ [key]: value });
  }
  const range: OsvRange = { type: r.type, events };
  if (typeof r.repo === 'string') range.repo = r.repo;
  if (r.type === 'GIT' && !range.repo) warnings.push(`${where}: GIT range without repo`);
  if (!events.some((e) => e.introduced !== undefined)) warnings.push(`${where}: no introduced event, so no version is affected by it`);
  if (events.some((e) => e.fixed !== undefined) && events.some((e) => e.last_affected !== undefined)) warnings.push(`${where}: has both fixed and last_affected`);
  if (r.type !== 'GIT' && ecosystem) {
    const cmp = rangeComparator(r.type, ecosystem);
    if (!cmp) warnings.push(`${where}: no version order known for ecosystem ${ecosystem}`);
    else {
      const bad = events.map(eventVersion).filter((v) => v !== '0' && v !== '*' && cmp(v, v) === null);
      if (bad.length > 0) warnings.push(`${where}: versions not valid for ${r.type === 'SEMVER' ? 'SemVer' : ecosystem}, range cannot be evaluated: ${bad[0]!.slice(0, 60)}`);
    }
  }
  return range;
}

function eventVersion(e: OsvEvent): string {
  return (e.introduced ?? e.fixed ?? e.last_affected ?? e.limit)!;
}

/** The affected entries that describe this package (ecosystem exact, name per the ecosystem's identity rule). */
export function affectedEntries(record: OsvRecord, ecosystem: string, name: string): OsvAffected[] {
  const wanted = normalizePackageName(ecosystem, name);
  return record.affected.filter((a) => a.package && a.package.ecosystem === ecosystem && normalizePackageName(ecosystem, a.package.name) === wanted);
}

export interface AffectedMatch {
  via: 'versions' | 'range';
  /** The `introduced` event that opened the matching range interval ("0" for from the beginning). */
  introduced?: string;
}

/**
 * The OSV evaluation algorithm: a version is affected if an affected entry for the package lists it
 * in `versions`, or if it falls inside one of its non-GIT ranges. Within a range the events are
 * sorted by the range's version order (introduced "0" first, limit "*" last) and walked: introduced
 * ≤ v turns affected on, fixed ≤ v turns it off (fixed is exclusive), last_affected < v turns it off
 * (last_affected is inclusive); a range with limit events only applies below some limit. GIT ranges
 * are ignored: a lockfile version cannot be placed in a commit graph. Withdrawn records match
 * nothing. A range whose versions the comparator cannot read (or an installed version it cannot
 * read) does not match: it cannot be decided, and guessing would invent findings.
 */
export function matchAffected(record: OsvRecord, ecosystem: string, name: string, version: string): AffectedMatch | null {
  if (record.withdrawn !== undefined) return null;
  for (const a of affectedEntries(record, ecosystem, name)) {
    if (a.versions.some((v) => v === version || compareVersions(ecosystem, v, version) === 0)) return { via: 'versions' };
    for (const range of a.ranges) {
      if (range.type === 'GIT') continue;
      const cmp = rangeComparator(range.type, ecosystem);
      if (!cmp) continue;
      const introduced = evaluateRange(range.events, version, cmp);
      if (introduced !== null) return { via: 'range', introduced };
    }
  }
  return null;
}

export function isAffected(record: OsvRecord, ecosystem: string, name: string, version: string): boolean {
  return matchAffected(record, ecosystem, name, version) !== null;
}

/** Compares an event value with a version: "0" (introduced) is below and "*" (limit) above everything. */
function compareEvent(value: string, version: string, cmp: Comparator, kind: keyof OsvEvent): number | null {
  if (kind === 'introduced' && value === '0') return -1;
  if (kind === 'limit' && value === '*') return 1;
  return cmp(value, version);
}

/** Returns the introduced value that leaves `version` affected, or null if it is not inside the range. */
function evaluateRange(events: OsvEvent[], version: string, cmp: Comparator): string | null {
  if (cmp(version, version) === null) return null;
  const keyed = events.map((e, i) => ({ kind: (Object.keys(e)[0] as keyof OsvEvent), value: eventVersion(e), i }));
  const limits = keyed.filter((e) => e.kind === 'limit');
  if (limits.length > 0) {
    let below = false;
    for (const l of limits) {
      const c = compareEvent(l.value, version, cmp, 'limit');
      if (c === null) return null;
      if (c > 0) below = true;
    }
    if (!below) return null;
  }
  // Sort by version; "0" first, "*" last; ties keep the record's order.
  const rank = (e: { kind: keyof OsvEvent; value: string }): number => (e.kind === 'introduced' && e.value === '0' ? -1 : e.kind === 'limit' && e.value === '*' ? 1 : 0);
  let unreadable = false;
  const sorted = [...keyed].sort((x, y) => {
    const rx = rank(x);
    const ry = rank(y);
    if (rx !== 0 || ry !== 0) return rx - ry || x.i - y.i;
    const c = cmp(x.value, y.value);
    if (c === null) unreadable = true;
    return c || x.i - y.i;
  });
  if (unreadable) return null;
  let affected: string | null = null;
  for (const e of sorted) {
    if (e.kind === 'limit') continue;
    const c = compareEvent(e.value, version, cmp, e.kind);
    if (c === null) return null;
    if (e.kind === 'introduced' && c <= 0) affected = e.value;
    else if (e.kind === 'fixed' && c <= 0) affected = null;
    else if (e.kind === 'last_affected' && c < 0) affected = null;
  }
  return affected;
}

/**
 * Versions above `version` that fix it: every `fixed` event of the package's ranges that is above
 * the installed version and is not itself affected (by another range), smallest first.
 */
export function fixedVersions(record: OsvRecord, ecosystem: string, name: string, version: string): string[] {
  const candidates = new Set<string>();
  for (const a of affectedEntries(record, ecosystem, name)) {
    for (const r of a.ranges) {
      if (r.type === 'GIT') continue;
      for (const e of r.events) if (e.fixed !== undefined && (compareVersions(ecosystem, e.fixed, version) ?? 0) > 0) candidates.add(e.fixed);
    }
  }
  return [...candidates].sort((x, y) => compareVersions(ecosystem, x, y) ?? 0).filter((v) => !isAffected(record, ecosystem, name, v));
}

/** The smallest version that fixes the installed one, or null when no fix is known. */
export function fixedVersion(record: OsvRecord, ecosystem: string, name: string, version: string): string | null {
  return fixedVersions(record, ecosystem, name, version)[0] ?? null;
}

export interface RecordSeverity {
  severity: Severity;
  /** CVSS base score when derived from a vector. */
  score: number | null;
  source: 'cvss_v3' | 'database_specific' | 'alias' | 'default';
  /** With `alias`: the record (naming the same vulnerability) the severity was taken from. */
  from?: string;
}

const NAMED: Record<string, Severity> = { CRITICAL: 'critical', HIGH: 'high', MODERATE: 'medium', MEDIUM: 'medium', LOW: 'low', NONE: 'info', INFO: 'info' };

/**
 * Severity of a record for one affected entry: a CVSS v3.x vector (the entry's, then the record's)
 * is scored and rated; failing that a database's own rating (`database_specific.severity`, e.g.
 * GitHub's "HIGH"/"MODERATE"); failing both, medium — an unrated advisory still names a known flaw.
 * CVSS v2 and v4 vectors are not scored here and fall through to the database rating.
 */
export function recordSeverity(record: OsvRecord, affected?: OsvAffected): RecordSeverity {
  for (const list of [affected?.severity ?? [], record.severity]) {
    for (const s of list) {
      if (s.type !== 'CVSS_V3') continue;
      const score = cvss3BaseScore(s.score);
      if (score !== null) return { severity: severityFromScore(score), score, source: 'cvss_v3' };
    }
  }
  for (const ds of [affected?.database_specific, affected?.ecosystem_specific, record.database_specific]) {
    const named = ds && typeof ds.severity === 'string' ? NAMED[ds.severity.trim().toUpperCase()] : undefined;
    if (named) return { severity: named, score: null, source: 'database_specific' };
  }
  return { severity: 'medium', score: null, source: 'default' };
}

/** First CWE id a record names (GitHub's `database_specific.cwe_ids`), or null. */
export function recordCwe(record: OsvRecord): string | null {
  const ids = record.database_specific?.cwe_ids;
  if (Array.isArray(ids)) {
    const first: unknown = ids[0];
    if (typeof first === 'string' && /^CWE-\d+$/.test(first)) return first;
  }
  return null;
}
