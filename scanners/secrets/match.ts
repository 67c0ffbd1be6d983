// Matching one text (a file, or the added lines of a commit) against a rule set: keyword prefilter,
// then each gated rule's regex over the raw bytes (RE2 reads Buffers as UTF-8 without a copy, and
// offsets stay in bytes), then the cheap-to-costly checks on each candidate. Lines and columns are
// computed only for what survives.
import type { Finding } from '../types.ts';
import { shannonEntropy } from './entropy.ts';
import { fingerprint, redactedPreview, secretDigest } from './redact.ts';
import type { CompiledRule, RuleSet } from './rules.ts';

/** Markers that suppress hits on their line (ours, and gitleaks' so existing annotations keep working). */
export const IGNORE_MARKERS: readonly string[] = ['aegis:ignore', 'gitleaks:allow'];

export interface Hit {
  readonly rule: CompiledRule;
  readonly matchStart: number;
  readonly matchEnd: number;
  readonly secretStart: number;
  readonly secretEnd: number;
  readonly secret: string;
  readonly entropy: number;
  /** Extra details of this hit's finding (e.g. `encoding` for a secret found in a decoded value). */
  readonly details?: Record<string, unknown>;
}

/** Per-thread buffers reused across files. */
export interface MatchScratch {
  found: Uint8Array;
  ruleOn: Uint8Array;
}

export function createScratch(set: RuleSet): MatchScratch {
  return { found: new Uint8Array(set.keywordRules.length), ruleOn: new Uint8Array(set.rules.length) };
}

const NL = 10;
/** Bytes before a match that a rule's `preceded_by` pattern sees. */
const LOOKBEHIND = 64;

const isWordByte = (b: number | undefined): boolean =>
  b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f);

/** RE2's ASCII `\b` at a byte offset. */
function atWordBoundary(buf: Buffer, offset: number): boolean {
  return isWordByte(offset > 0 ? buf[offset - 1] : undefined) !== isWordByte(buf[offset]);
}

function lineStartOf(buf: Buffer, offset: number): number {
  return offset > 0 ? buf.lastIndexOf(NL, offset - 1) + 1 : 0;
}

function lineEndOf(buf: Buffer, offset: number): number {
  const i = buf.indexOf(NL, offset);
  return i < 0 ? buf.length : i;
}

function hasIgnoreMarker(buf: Buffer, from: number, to: number): boolean {
  for (const marker of IGNORE_MARKERS) {
    const i = buf.indexOf(marker, from, 'latin1');
    if (i >= 0 && i + marker.length <= to) return true;
  }
  return false;
}

interface GroupIndices {
  [index: number]: [number, number] | undefined;
  length: number;
  groups?: Record<string, [number, number] | undefined>;
}

/**
 * The secret's byte range: the first participating named group whose name starts with `secret`
 * (`secret`, `secret_bare`, … — RE2 forbids repeating a name across alternatives), else group 1,
 * else the whole match.
 */
function secretRange(indices: GroupIndices): [number, number] | undefined {
  const named = indices.groups;
  if (named !== undefined) {
    let declared = false;
    for (const name in named) {
      if (!name.startsWith('secret')) continue;
      declared = true;
      const r = named[name];
      if (r !== undefined) return r;
    }
    if (declared) return undefined;
  }
  return indices.length > 1 ? indices[1] : indices[0];
}

function isAllowlisted(set: RuleSet, rule: CompiledRule, secret: string, buf: Buffer, matchStart: number, matchEnd: number): boolean {
  const lower = secret.toLowerCase();
  for (const w of rule.stopwords) if (lower.includes(w)) return true;
  for (const w of set.globalStopwords) if (lower.includes(w)) return true;
  for (const re of set.globalRegexes) if (re.test(secret)) return true;
  for (const re of rule.allowSecret) if (re.test(secret)) return true;
  if (rule.allowMatch.length > 0) {
    const match = buf.subarray(matchStart, matchEnd);
    for (const re of rule.allowMatch) if (re.test(match)) return true;
  }
  if (rule.allowLine.length > 0) {
    const line = buf.subarray(lineStartOf(buf, matchStart), lineEndOf(buf, matchEnd));
    for (const re of rule.allowLine) if (re.test(line)) return true;
  }
  return false;
}

function namedGroups(buf: Buffer, indices: GroupIndices): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, range] of Object.entries(indices.groups ?? {})) out[name] = range ? buf.toString('utf8', range[0], range[1]) : undefined;
  return out;
}

/**
 * Candidates of every rule gated by a keyword present in `buf`, after entropy, allowlists,
 * validators and inline-ignore markers; overlapping hits resolved (specific rules beat generic
 * ones, then the longer secret, then the earlier rule). Also returns every accepted secret range
 * (before overlap resolution) so evidence can blank them all.
 */
export function findHits(buf: Buffer, set: RuleSet, path: string, scratch: MatchScratch): { hits: Hit[]; redact: Hit[] } {
  const { found, ruleOn } = scratch;
  found.fill(0);
  let any = set.matcher.scan(buf, found) !== 0;
  ruleOn.fill(0);
  if (any) for (let k = 0; k < found.length; k++) if (found[k] === 1) for (const r of set.keywordRules[k]!) ruleOn[r] = 1;
  for (const r of set.pathOnlyRules) {
    if (!set.rules[r]!.onlyPaths.some((re) => re.test(path))) continue;
    ruleOn[r] = 1;
    any = true;
  }
  if (!any) return { hits: [], redact: [] };
  let markers: boolean | undefined;
  const accepted: Hit[] = [];
  for (const rule of set.rules) {
    if (ruleOn[rule.index] === 0) continue;
    if (rule.onlyPaths.length > 0 && !rule.onlyPaths.some((re) => re.test(path))) continue;
    if (rule.allowPaths.length > 0 && rule.allowPaths.some((re) => re.test(path))) continue;
    const re = rule.regex;
    re.lastIndex = 0;
    for (;;) {
      const m = re.exec(buf);
      if (m === null) break;
      const indices = (m as unknown as { indices: GroupIndices }).indices;
      const [matchStart, matchEnd] = indices[0]!;
      if (matchEnd === matchStart) re.lastIndex = matchEnd + 1; // cannot happen for validated rules; never loop
      if (rule.leadingBoundary && !atWordBoundary(buf, matchStart)) {
        re.lastIndex = matchStart + 1; // a match starting further in may still qualify
        continue;
      }
      if (rule.precededBy !== undefined && !rule.precededBy.test(buf.subarray(Math.max(0, matchStart - LOOKBEHIND), matchStart))) {
        re.lastIndex = matchStart + 1;
        continue;
      }
      const range = secretRange(indices);
      if (range === undefined || range[1] <= range[0]) continue;
      const [secretStart, secretEnd] = range;
      const secret = buf.toString('utf8', secretStart, secretEnd);
      const entropy = shannonEntropy(secret);
      if (entropy < rule.entropy) continue;
      if (isAllowlisted(set, rule, secret, buf, matchStart, matchEnd)) continue;
      if (rule.validator !== undefined) {
        const input = { secret, match: buf.toString('utf8', matchStart, matchEnd), groups: namedGroups(buf, indices) };
        if (!rule.validator(input)) continue;
      }
      markers ??= hasIgnoreMarker(buf, 0, buf.length);
      if (markers && hasIgnoreMarker(buf, lineStartOf(buf, matchStart), lineEndOf(buf, Math.max(matchStart, secretEnd - 1)))) continue;
      accepted.push({ rule, matchStart, matchEnd, secretStart, secretEnd, secret, entropy });
    }
  }
  if (accepted.length <= 1) return { hits: accepted, redact: accepted };
  const sorted = [...accepted].sort((a, b) => a.secretStart - b.secretStart || b.secretEnd - a.secretEnd);
  const kept: Hit[] = [];
  for (const h of sorted) {
    const last = kept[kept.length - 1];
    if (last !== undefined && h.secretStart < last.secretEnd) {
      if (better(h, last)) kept[kept.length - 1] = h;
    } else kept.push(h);
  }
  return { hits: kept, redact: accepted };
}

function better(a: Hit, b: Hit): boolean {
  if (a.rule.generic !== b.rule.generic) return !a.rule.generic;
  const la = a.secretEnd - a.secretStart;
  const lb = b.secretEnd - b.secretStart;
  if (la !== lb) return la > lb;
  return a.rule.index < b.rule.index;
}

const EVIDENCE_SIDE = 80;
const EVIDENCE_MAX = 200;

/** Moves a byte offset forward/backward off UTF-8 continuation bytes. */
function charBoundary(buf: Buffer, offset: number, forward: boolean): number {
  let i = offset;
  while (i > 0 && i < buf.length && (buf[i]! & 0xc0) === 0x80) i += forward ? 1 : -1;
  return i;
}

/**
 * The lines of a hit, at most EVIDENCE_SIDE bytes either side of the secret, with every accepted
 * secret range in view replaced by its preview.
 */
function evidence(buf: Buffer, hit: Hit, redact: readonly Hit[]): string {
  const from = lineStartOf(buf, hit.matchStart);
  const to = lineEndOf(buf, Math.max(hit.matchStart, hit.secretEnd - 1));
  const ws = charBoundary(buf, Math.max(from, hit.secretStart - EVIDENCE_SIDE), true);
  const we = charBoundary(buf, Math.min(to, hit.secretEnd + EVIDENCE_SIDE), false);
  const ranges = redact.filter((r) => r.secretStart < we && r.secretEnd > ws).sort((a, b) => a.secretStart - b.secretStart);
  let out = ws > from ? '…' : '';
  let pos = ws;
  for (const r of ranges) {
    const s = Math.max(r.secretStart, pos);
    if (r.secretEnd <= pos) continue;
    out += buf.toString('utf8', pos, s) + redactedPreview(r.secret);
    pos = Math.min(r.secretEnd, we);
  }
  if (pos < we) out += buf.toString('utf8', pos, we);
  if (we < to) out += '…';
  out = out.replace(/\r/g, '');
  return out.length > EVIDENCE_MAX ? `${out.slice(0, EVIDENCE_MAX - 1)}…` : out;
}

export interface RenderContext {
  /** Relative path, forward slashes. */
  path: string;
  commit?: string;
  /** For history chunks: 0-based line of the chunk → line in the file. */
  lineMap?: readonly number[];
  hashKey?: string | Buffer;
  /** Extra details on every finding (e.g. commit time). */
  details?: Record<string, unknown>;
}

/** Findings for the hits of one text; one per fingerprint (repeats counted in `occurrences`). */
export function renderFindings(buf: Buffer, hits: readonly Hit[], redact: readonly Hit[], ctx: RenderContext): Finding[] {
  const ordered = [...hits].sort((a, b) => a.matchStart - b.matchStart);
  const byFingerprint = new Map<string, Finding>();
  let pos = 0;
  let line = 0; // 0-based line at `pos`
  const lineAt = (offset: number): number => {
    while (pos < offset) {
      const nl = buf.indexOf(NL, pos);
      if (nl < 0 || nl >= offset) {
        pos = offset;
        break;
      }
      line++;
      pos = nl + 1;
    }
    return line;
  };
  const fileLine = (zeroBased: number): number => (ctx.lineMap ? (ctx.lineMap[zeroBased] ?? zeroBased + 1) : zeroBased + 1);
  for (const hit of ordered) {
    const startLine = lineAt(hit.matchStart);
    const column = buf.toString('utf8', lineStartOf(buf, hit.matchStart), hit.matchStart).length + 1;
    // Counting forward from the start keeps `lineAt` monotonic for the next hit.
    let endLine = startLine;
    for (let i = buf.indexOf(NL, hit.matchStart); i >= 0 && i < hit.secretEnd - 1; i = buf.indexOf(NL, i + 1)) endLine++;
    const digest = secretDigest(hit.secret, ctx.hashKey);
    const fp = fingerprint(hit.rule.id, ctx.path, digest);
    const previous = byFingerprint.get(fp);
    if (previous !== undefined) {
      previous.details.occurrences = (previous.details.occurrences as number) + 1;
      continue;
    }
    const location: Finding['location'] = { kind: 'file', path: ctx.path, line: fileLine(startLine), column };
    if (endLine !== startLine) location.end_line = fileLine(endLine);
    if (ctx.commit !== undefined) location.commit = ctx.commit;
    const details: Record<string, unknown> = {
      secret_sha256: digest,
      preview: redactedPreview(hit.secret),
      entropy: Math.round(hit.entropy * 100) / 100,
      occurrences: 1,
      ...ctx.details,
      ...hit.details,
    };
    if (ctx.hashKey !== undefined) details.secret_hash_keyed = true;
    byFingerprint.set(fp, {
      rule_id: hit.rule.id,
      title: hit.rule.title,
      severity: hit.rule.severity,
      cwe: hit.rule.cwe,
      location,
      evidence: evidence(buf, hit, redact),
      fingerprint: fp,
      details,
    });
  }
  return [...byFingerprint.values()];
}
