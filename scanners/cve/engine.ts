// Runs one compiled template against one target through the scan's ScanHttp (the only way traffic
// leaves). Requests run in order, paths in order; extractor values become `{{name}}` for what
// follows. A request whose variables could not all be filled in (its extractor found nothing) is
// skipped, not sent half-formed. Matching follows nuclei: matchers-condition and condition default
// to `or`, `negative` inverts a matcher, `stop-at-first-match` ends the template at its first match,
// `req-condition` matches once over all of a request's responses (`body_1`, `status_2`, …).
import { randomBytes } from 'node:crypto';
import RE2 from 're2';
import { BudgetExhaustedError, OutOfScopeError, RefusedTargetError, splitUrl, type HttpExchange, type ScanHttp } from '../web/http.ts';
import type { WebFindingDetails } from '../web/types.ts';
import { PLACEHOLDER, type CompiledExtractor, type CompiledMatcher, type CompiledPattern, type CompiledRequest, type CveTemplate, type PartName, type PartRef } from './template.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export interface RunContext {
  http: ScanHttp;
  signal: AbortSignal;
}

export interface TemplateMatch {
  /** Index of the template's request (`http[i]`) that matched. */
  request: number;
  method: string;
  /** The URL of the (last) request that matched, as sent. */
  url: string;
  /** Path and query with only the stable variables filled in (no `{{randstr}}` value): for fingerprints. */
  stablePath: string;
  /** Request line(s) and what each matcher saw. */
  evidence: string;
  /** Just the matcher observations (`regex root:… in body: "root:x:0:0:"`). */
  matched: string[];
  /** Request as sent (template headers only: never the scan's credentials). */
  requestExcerpt: string;
  /** Status, headers and the part of the body around the first hit. */
  responseExcerpt: string;
  attack?: NonNullable<WebFindingDetails['attack']>;
}

export interface TemplateRun {
  templateId: string;
  matches: TemplateMatch[];
  /** Values of extractors that are not `internal`, by name. */
  extracted: Record<string, string[]>;
  /** Requests sent by this run. */
  requests: number;
  /** `GET /path → 200` for every exchange, in order (what a recheck that did not reproduce saw). */
  exchanges: string[];
  /** Skipped requests and transport errors. */
  notes: string[];
  /** The scan's request budget ran out during this run (later templates should not start). */
  budgetExhausted: boolean;
}

const MAX_VALUES = 10;
const MAX_VALUE_CHARS = 500;
const EXCERPT_CHARS = 200;

/** The built-in variables for a target: BaseURL is the target without query or trailing slash. */
export function templateVariables(target: string, randstr: string = randomString()): Record<string, string> {
  const { origin, host, pathname } = splitUrl(target);
  return { BaseURL: `${origin}${pathname.replace(/\/+$/, '')}`, RootURL: origin, Hostname: host, randstr };
}

/** Lower-case letters and digits: safe in a path, a header, JSON and a regex alike. */
function randomString(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(20)].map((b) => alphabet[b % alphabet.length]).join('');
}

const RE2_SPECIAL = /[\\^$.|?*+()[\]{}]/g;

/** Fills in `{{name}}`; unknown names stay as written so the caller can tell. */
function fill(text: string, vars: Readonly<Record<string, string>>, forRegex = false): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = vars[name];
    if (value === undefined) return whole;
    return forRegex ? value.replace(RE2_SPECIAL, '\\$&') : value;
  });
}

function unresolved(text: string): string | null {
  const m = new RegExp(PLACEHOLDER.source).exec(text);
  return m ? m[1]! : null;
}

// Patterns with variables are compiled per run; global copies for extraction are kept per pattern.
const globalCopies = new WeakMap<CompiledPattern, RE2>();

function patternFor(p: CompiledPattern, vars: Readonly<Record<string, string>>): RE2 {
  return p.re ?? new RE2(fill(p.source, vars, true), p.caseInsensitive ? 'iu' : 'u');
}

function globalPatternFor(p: CompiledPattern, vars: Readonly<Record<string, string>>): RE2 {
  const flags = p.caseInsensitive ? 'giu' : 'gu';
  if (!p.re) return new RE2(fill(p.source, vars, true), flags);
  let re = globalCopies.get(p);
  if (!re) globalCopies.set(p, (re = new RE2(p.source, flags)));
  re.lastIndex = 0;
  return re;
}

/** `name: value` lines (lower-case names as ScanHttp gives them), each Set-Cookie on its own line. */
function headerText(ex: HttpExchange): string {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(ex.headers)) {
    if (name === 'set-cookie') continue;
    lines.push(`${name}: ${value}`);
  }
  for (const c of ex.setCookies) lines.push(`set-cookie: ${c}`);
  return lines.join('\n');
}

function partText(ex: HttpExchange, part: PartName): string {
  switch (part) {
    case 'body':
      return ex.body;
    case 'header':
      return headerText(ex);
    case 'all':
      return `${headerText(ex)}\n\n${ex.body}`;
    case 'status':
      return String(ex.status);
  }
}

function clip(text: string, max = EXCERPT_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Where a hit was, so the response excerpt can show it. */
interface Hit {
  note: string;
  response: number;
  part: PartName;
  at: number | null;
}

interface MatcherOutcome {
  ok: boolean;
  hits: Hit[];
}

function partLabel(ref: PartRef): string {
  return ref.index === null ? ref.part : `${ref.part}_${ref.index}`;
}

function evaluateMatcher(m: CompiledMatcher, responses: readonly HttpExchange[], current: number, vars: Readonly<Record<string, string>>): MatcherOutcome {
  const index = m.part.index === null ? current : m.part.index - 1;
  const ex = responses[index]!;
  const label = partLabel(m.part);
  const results: { ok: boolean; hit: Hit }[] = [];
  if (m.type === 'status') {
    for (const v of m.values) results.push({ ok: ex.status === v, hit: { note: `${label} is ${ex.status}`, response: index, part: 'status', at: null } });
  } else if (m.type === 'size') {
    const size = Buffer.byteLength(partText(ex, m.part.part));
    for (const v of m.values) results.push({ ok: size === v, hit: { note: `${label} is ${size} bytes`, response: index, part: m.part.part, at: null } });
  } else if (m.type === 'word') {
    const text = partText(ex, m.part.part);
    const hay = m.caseInsensitive ? text.toLowerCase() : text;
    for (const raw of m.words) {
      const word = fill(raw, vars);
      const at = hay.indexOf(m.caseInsensitive ? word.toLowerCase() : word);
      results.push({ ok: at >= 0, hit: { note: at >= 0 ? `word ${JSON.stringify(clip(word))} in ${label}` : `no word ${JSON.stringify(clip(word))} in ${label}`, response: index, part: m.part.part, at: at >= 0 ? at : null } });
    }
  } else {
    const text = partText(ex, m.part.part);
    for (const p of m.patterns) {
      const found = patternFor(p, vars).exec(text);
      results.push({
        ok: found !== null,
        hit: {
          note: found ? `regex ${clip(p.source, 120)} in ${label}: ${JSON.stringify(clip(found[0]))}` : `no match for regex ${clip(p.source, 120)} in ${label}`,
          response: index,
          part: m.part.part,
          at: found ? found.index : null,
        },
      });
    }
  }
  const raw = m.condition === 'and' ? results.every((r) => r.ok) : results.some((r) => r.ok);
  const ok = m.negative ? !raw : raw;
  // A negative matcher's evidence is what was absent; a positive one's is what was found.
  const hits = results.filter((r) => (m.negative ? !r.ok : r.ok)).map((r) => ({ ...r.hit, note: m.name ? `${m.name}: ${r.hit.note}` : r.hit.note }));
  return { ok, hits: m.negative ? hits.map((h) => ({ ...h, at: null })) : hits };
}

function evaluate(req: CompiledRequest, responses: readonly HttpExchange[], current: number, vars: Readonly<Record<string, string>>): MatcherOutcome {
  if (req.matchers.length === 0) return { ok: false, hits: [] };
  const outcomes = req.matchers.map((m) => evaluateMatcher(m, responses, current, vars));
  const ok = req.matchersCondition === 'and' ? outcomes.every((o) => o.ok) : outcomes.some((o) => o.ok);
  return { ok, hits: outcomes.filter((o) => o.ok).flatMap((o) => o.hits) };
}

function extract(x: CompiledExtractor, ex: HttpExchange, vars: Readonly<Record<string, string>>): string[] {
  const values: string[] = [];
  const add = (v: string | undefined) => {
    if (v === undefined || v === '' || values.length >= MAX_VALUES) return;
    const clipped = v.slice(0, MAX_VALUE_CHARS);
    if (!values.includes(clipped)) values.push(clipped);
  };
  if (x.type === 'kval') {
    for (const key of x.keys) {
      add(ex.headers[key.replace(/_/g, '-').toLowerCase()]);
      for (const cookie of ex.setCookies) {
        const eq = cookie.indexOf('=');
        if (eq > 0 && cookie.slice(0, eq).trim() === key) add(cookie.slice(eq + 1).split(';')[0]!.trim());
      }
    }
    return values;
  }
  const text = partText(ex, x.part.part);
  for (const p of x.patterns) {
    const re = globalPatternFor(p, vars);
    let m: RegExpExecArray | null;
    while (values.length < MAX_VALUES && (m = re.exec(text)) !== null) {
      add(m[x.group]);
      if (m[0] === '') re.lastIndex++;
    }
  }
  return values;
}

function requestLine(method: string, url: string): string {
  return `${method} ${splitUrl(url).target}`;
}

function requestExcerpt(method: string, url: string, headers: Record<string, string>, body: string | undefined): string {
  const lines = [`${requestLine(method, url)} HTTP/1.1`, `host: ${splitUrl(url).host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${clip(v, 300)}`)];
  return body === undefined ? lines.join('\n') : `${lines.join('\n')}\n\n${clip(body, 500)}`;
}

function responseExcerpt(ex: HttpExchange, hits: readonly Hit[], index: number): string {
  const head = [`HTTP ${ex.status}`, ...Object.entries(ex.headers).filter(([k]) => k !== 'set-cookie').map(([k, v]) => `${k}: ${clip(v, 200)}`)];
  if (ex.setCookies.length > 0) head.push(`set-cookie: [${ex.setCookies.length} cookie(s)]`);
  const bodyHit = hits.find((h) => h.response === index && h.part === 'body' && h.at !== null);
  const from = bodyHit ? Math.max(0, bodyHit.at! - 100) : 0;
  const body = ex.body.slice(from, from + 600);
  return `${head.join('\n')}\n\n${from > 0 ? '…' : ''}${body}${from + 600 < ex.body.length ? '…' : ''}`;
}

/** A request as sent, for evidence. */
interface Sent {
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  status: number;
}

/** Whether an error is the transport failing for this one request (keep going) or the scan's end. */
function isFatal(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted || err instanceof BudgetExhaustedError || err instanceof RefusedTargetError;
}

export async function runTemplate(template: CveTemplate, target: string, ctx: RunContext, options: { randstr?: string } = {}): Promise<TemplateRun> {
  const vars: Record<string, string> = templateVariables(target, options.randstr);
  const stableVars = { BaseURL: vars.BaseURL!, RootURL: vars.RootURL!, Hostname: vars.Hostname! };
  const run: TemplateRun = { templateId: template.id, matches: [], extracted: {}, requests: 0, exchanges: [], notes: [], budgetExhausted: false };

  for (const [ri, req] of template.requests.entries()) {
    const responses: HttpExchange[] = [];
    const sent: Sent[] = [];
    for (const [pi, pathTemplate] of req.paths.entries()) {
      ctx.signal.throwIfAborted();
      const url = fill(pathTemplate, vars);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, fill(v, vars)]));
      const body = req.body === undefined ? undefined : fill(req.body, vars);
      const missing = unresolved(url) ?? Object.values(headers).map(unresolved).find((v) => v !== null) ?? (body === undefined ? null : unresolved(body));
      if (missing !== null) {
        run.notes.push(`${template.id}: skipped ${req.method} ${pathTemplate}: nothing was extracted for {{${missing}}}`);
        continue;
      }
      let ex: HttpExchange;
      try {
        ex = await ctx.http.send({ method: req.method, url, headers, ...(body === undefined ? {} : { body }) });
      } catch (err) {
        if (err instanceof BudgetExhaustedError) {
          run.budgetExhausted = true;
          run.notes.push(`${template.id}: stopped, ${err.message}`);
          return run;
        }
        if (isFatal(err, ctx.signal)) throw err;
        const what = err instanceof OutOfScopeError ? 'out of scope' : errorMessage(err);
        run.notes.push(`${template.id}: ${requestLine(req.method, url)} not sent or failed: ${what}`);
        continue;
      }
      run.requests++;
      run.exchanges.push(`${requestLine(req.method, url)} → ${ex.status}`);
      responses[pi] = ex;
      sent[pi] = { url, headers, body, status: ex.status };

      for (const x of req.extractors) {
        if (x.part.index !== null && x.part.index !== pi + 1) continue;
        const values = extract(x, ex, vars);
        if (values.length === 0) continue;
        if (x.named) vars[x.name] = values[0]!;
        if (!x.internal) run.extracted[x.name] = [...new Set([...(run.extracted[x.name] ?? []), ...values])].slice(0, MAX_VALUES);
      }

      if (req.reqCondition) continue;
      const outcome = evaluate(req, responses, pi, vars);
      if (!outcome.ok) continue;
      run.matches.push(makeMatch(req, ri, [sent[pi]!], ex, outcome.hits, pi, stableVars, pathTemplate));
      if (req.stopAtFirstMatch) return run;
    }

    if (req.reqCondition && req.matchers.length > 0) {
      const missing = req.paths.findIndex((_, i) => responses[i] === undefined);
      if (missing >= 0) {
        run.notes.push(`${template.id}: http[${ri}] not matched: path ${missing + 1} got no response`);
        continue;
      }
      const last = req.paths.length - 1;
      const outcome = evaluate(req, responses, last, vars);
      if (outcome.ok) {
        run.matches.push(makeMatch(req, ri, sent, responses[last]!, outcome.hits, last, stableVars, req.paths[last]!));
        if (req.stopAtFirstMatch) return run;
      }
    }
  }
  return run;
}

function makeMatch(
  req: CompiledRequest,
  ri: number,
  sent: readonly Sent[],
  ex: HttpExchange,
  hits: readonly Hit[],
  responseIndex: number,
  stableVars: Record<string, string>,
  pathTemplate: string,
): TemplateMatch {
  const lastSent = sent[sent.length - 1]!;
  const lines = sent.map((s) => `${requestLine(req.method, s.url)} → ${s.status}`);
  const matched = hits.map((h) => h.note);
  const evidence = clip([...lines, ...matched].join('\n'), 1500);
  const url = lastSent.url;
  const match: TemplateMatch = {
    request: ri,
    method: req.method,
    url,
    stablePath: splitUrl(fill(pathTemplate, stableVars)).target,
    evidence,
    matched,
    requestExcerpt: sent.map((s) => requestExcerpt(req.method, s.url, s.headers, s.body)).join('\n\n---\n\n'),
    responseExcerpt: clip(responseExcerpt(ex, hits, responseIndex), 2000),
  };
  if (req.attack) match.attack = { class: req.attack.class, method: req.method, path: splitUrl(url).pathname, parameter: req.attack.parameter, in: req.attack.in };
  return match;
}
