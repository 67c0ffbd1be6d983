// DAST scanner entry: crawl from the target (crawl.ts), run the passive rules over what came back
// (passive.ts), then the active rules on every parameter found and below every directory serving
// files (active.ts), a few at a time. All traffic goes through ctx.http (scope, budget, rate).
//
// Defaults (DAST_DEFAULTS): depth 3; 4 requests in flight; the job should build ScanHttp at
// 20 requests/s (ScanHttp's own default) — polite for a production site — with its default
// budget of 2 000 requests. The crawl may use at most half of the budget left when it starts, so
// the checks always get the other half. Timing proofs sleep 2 s and 1 s.
//
// A used-up budget ends the scan with what it found and a coverage note; ctx.signal aborts it
// (the abort reason is thrown).
//
// One root cause, one finding: active findings of the same rule, through the same kind of
// injection point (the same parameter name and place, or the URL path), with the same evidence
// signature (payload variant, status, media type and what proved it: the file read, the database
// error, the reflection context) on the same origin are one finding — a static handler that
// resolves `..` shows up under every directory it serves, but it is one bug. The finding kept is
// the one nearest the root (shortest path, then alphabetical), so its fingerprint is the one a scan
// that reached only that URL gives; `details.affected_urls` lists every injection URL (at most
// MAX_AFFECTED_URLS) and `details.affected_count` how many there were; verify-fix re-runs the
// kept finding's check. Different parameters, or the same parameter with different evidence, stay
// separate findings; passive findings are not grouped here.
import { createHash } from 'node:crypto';
import { BudgetExhaustedError, OutOfScopeError, RefusedTargetError, type HttpExchange } from '../web/http.ts';
import type { Recheck, WebFinding, WebFindingDetails, WebScanContext, WebScanOutput } from '../web/types.ts';
import {
  checkCmdiTime,
  checkOpenRedirect,
  checkSqliBoolean,
  checkSqliError,
  checkSqliTime,
  checkSsti,
  checkTraversalParam,
  checkTraversalPath,
  checkXss,
  fileSignature,
  looksFileValued,
  sqlError,
  looksUrlValued,
  type ActiveEnv,
  type ActiveHit,
} from './active.ts';
import { baselineRequest, parseCheck, pointName, type DastCheck, type InjectionPoint } from './check.ts';
import { crawl, type CrawledPage } from './crawl.ts';
import { CORS_PROBE_ORIGIN, passiveHits, type PassiveHit } from './passive.ts';
import { BudgetStop, Prober, requestExcerpt, responseExcerpt, runPool } from './probe.ts';
import { dastRule, DAST_RULES, enabledRules, policyFor, unknownPolicyRules, type DastPolicy, type DastRule } from './rules.ts';

export interface DastInput {
  /** Start URL; must be inside the ScanHttp scope. */
  target: string;
  /** Link depth followed from the target (which is depth 0); default 3. */
  maxDepth?: number;
  /** Rule id → warn | fail | ignore; see rules.ts for the defaults. */
  policy?: DastPolicy;
}

export const DAST_DEFAULTS = {
  maxDepth: 3,
  /** The rate the job should give ScanHttp for a DAST scan (requests per second). */
  requestsPerSecond: 20,
  /** Requests in flight at once. */
  concurrency: 4,
  /** Share of the remaining budget the crawl may use. */
  crawlShare: 0.5,
  /** Pages crawled at most, whatever the budget. */
  maxPages: 500,
  /** Timing proofs: seconds slept by the long and the short probe. */
  delays: { long: 2, short: 1 },
} as const;

type PointRule = (env: ActiveEnv, point: InjectionPoint, baseline: HttpExchange, first?: string) => Promise<ActiveHit | null>;

const POINT_RULES: Record<string, PointRule> = {
  'dast-xss-reflected': (env, p) => checkXss(env, p),
  'dast-ssti': (env, p) => checkSsti(env, p),
  'dast-sqli-error': (env, p, b) => checkSqliError(env, p, b),
  'dast-sqli-boolean': checkSqliBoolean,
  'dast-sqli-time': checkSqliTime,
  'dast-cmdi-time': checkCmdiTime,
  'dast-open-redirect': (env, p, _b, first) => checkOpenRedirect(env, p, first),
  'dast-path-traversal': checkTraversalParam,
};

// Families run in this order on each parameter; within one, rules run in order until one proves
// the flaw (an error-based SQL injection is not probed again for booleans and timings).
const FAMILIES: Array<{ rules: string[]; applies?: (p: InjectionPoint) => boolean }> = [
  { rules: ['dast-xss-reflected'] },
  { rules: ['dast-ssti'] },
  { rules: ['dast-sqli-error', 'dast-sqli-boolean', 'dast-sqli-time'] },
  { rules: ['dast-cmdi-time'] },
  { rules: ['dast-open-redirect'], applies: looksUrlValued },
  { rules: ['dast-path-traversal'], applies: looksFileValued },
];

/** Injection URLs listed in one grouped finding's details.affected_urls. */
export const MAX_AFFECTED_URLS = 20;

/** A finding's root-cause key (findings with equal keys are one bug) and the URL its payloads went to. */
interface RootCause {
  key: string;
  url: string;
}

/** What proved the hit, without what differs from one URL to the next (markers, paths). */
function evidenceSignature(hit: ActiveHit): string {
  const body = hit.exchange.body;
  switch (hit.rule) {
    case 'dast-path-traversal':
      return fileSignature(body)?.file ?? '';
    case 'dast-sqli-error': {
      const err = sqlError(body);
      return err ? `${err.db}: ${err.text.replace(/\d+/g, '0')}` : '';
    }
    case 'dast-xss-reflected':
      // The markup around the reflection: the same template reflects the same way.
      return hit.evidence.replace(/aegisxss[0-9a-f]+/gi, 'X');
    default:
      return '';
  }
}

function rootCauseKey(hit: ActiveHit, url: string, method: string, where: string, parameter: string): string {
  const type = (hit.exchange.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return JSON.stringify([hit.rule, new URL(url).origin, method, where, parameter, hit.variant, hit.exchange.status, type, evidenceSignature(hit)]);
}

/** Merges findings with the same root cause into the one nearest the root (see the header). */
function groupByRootCause(findings: readonly WebFinding[], causes: ReadonlyMap<string, RootCause>): WebFinding[] {
  const groups = new Map<string, WebFinding[]>();
  const out: WebFinding[] = [];
  for (const f of findings) {
    const cause = causes.get(f.fingerprint);
    if (!cause) {
      out.push(f);
      continue;
    }
    const group = groups.get(cause.key);
    if (group) group.push(f);
    else groups.set(cause.key, [f]);
  }
  const urlOf = (f: WebFinding): string => causes.get(f.fingerprint)!.url;
  for (const group of groups.values()) {
    if (group.length === 1) {
      out.push(group[0]!);
      continue;
    }
    const order = (a: WebFinding, b: WebFinding): number => {
      const pa = new URL(urlOf(a)).pathname;
      const pb = new URL(urlOf(b)).pathname;
      return pa.length - pb.length || (urlOf(a) < urlOf(b) ? -1 : urlOf(a) > urlOf(b) ? 1 : 0);
    };
    const sorted = [...group].sort(order);
    const urls = [...new Set(sorted.map(urlOf))];
    const kept = sorted[0]!;
    out.push({ ...kept, details: { ...kept.details, affected_urls: urls.slice(0, MAX_AFFECTED_URLS), affected_count: urls.length } });
  }
  return out;
}

function fingerprint(ruleId: string, method: string, path: string, parameter: string): string {
  return createHash('sha256').update(`${ruleId}\n${method}\n${path}\n${parameter}`).digest('hex');
}

function pathOf(url: string): string {
  return new URL(url).pathname;
}

interface FindingArgs {
  rule: DastRule;
  policy: DastPolicy | undefined;
  url: string;
  method: string;
  parameter?: string;
  /** What the fingerprint is built from besides the rule (method defaults to the request's). */
  key: { method?: string; path: string; parameter: string };
  evidence: string;
  check: DastCheck;
  attack?: WebFindingDetails['attack'];
  exchange: HttpExchange;
  proof?: string;
}

function makeFinding(a: FindingArgs): WebFinding {
  const action = policyFor(a.rule, a.policy);
  const details: WebFindingDetails = {
    check: { ...a.check },
    ...(a.attack ? { attack: a.attack } : {}),
    request: requestExcerpt(a.exchange),
    response: responseExcerpt(a.exchange, a.proof),
    policy: action === 'fail' ? 'fail' : 'warn',
    description: a.rule.description,
  };
  return {
    rule_id: a.rule.id,
    title: a.rule.title,
    severity: a.rule.severity,
    cwe: a.rule.cwe,
    location: { kind: 'url', url: a.url, method: a.method, ...(a.parameter !== undefined ? { parameter: a.parameter } : {}) },
    evidence: a.evidence.length > 300 ? `${a.evidence.slice(0, 299)}…` : a.evidence,
    fingerprint: fingerprint(a.rule.id, a.key.method ?? a.method, a.key.path, a.key.parameter),
    details,
  };
}

function pointFinding(hit: ActiveHit, point: InjectionPoint, policy: DastPolicy | undefined): WebFinding {
  const rule = dastRule(hit.rule);
  const name = pointName(point);
  const url = baselineRequest(point).url;
  const path = pathOf(url);
  return makeFinding({
    rule,
    policy,
    url,
    method: point.method,
    parameter: name,
    key: { path, parameter: name },
    evidence: hit.evidence,
    check: { rule: rule.id, method: point.method, url: point.url, params: point.params, in: point.in, parameter: name, index: point.index, variant: hit.variant },
    attack: { class: rule.attack!, method: point.method, path, parameter: name, in: point.in },
    exchange: hit.exchange,
    ...(hit.proof !== undefined ? { proof: hit.proof } : {}),
  });
}

function dirOf(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1)}`;
}

function pathFinding(hit: ActiveHit, page: CrawledPage, policy: DastPolicy | undefined): WebFinding {
  const rule = dastRule(hit.rule);
  const dir = pathOf(dirOf(page.request.url));
  return makeFinding({
    rule,
    policy,
    url: page.request.url,
    method: 'GET',
    key: { path: dir, parameter: '*' },
    evidence: hit.evidence,
    check: { rule: rule.id, method: 'GET', url: page.request.url, params: [], in: 'path', variant: hit.variant },
    // The whole path below `path` is the injection point.
    attack: { class: rule.attack!, method: 'GET', path: dir, parameter: '*', in: 'path' },
    exchange: hit.exchange,
    ...(hit.proof !== undefined ? { proof: hit.proof } : {}),
  });
}

function passiveFinding(hit: PassiveHit, page: CrawledPage, policy: DastPolicy | undefined): WebFinding {
  const rule = dastRule(hit.rule);
  const req = page.request;
  const host = new URL(req.url).host;
  return makeFinding({
    rule,
    policy,
    url: baselineRequest(req).url,
    method: req.method,
    ...(hit.scope === 'site' || hit.subject === undefined ? {} : { parameter: hit.subject }),
    // Site-wide findings are one per host (and header or cookie), whichever page showed them first.
    key: hit.scope === 'site' ? { method: '*', path: `${host}/*`, parameter: hit.subject ?? '' } : { path: pathOf(req.url), parameter: hit.subject ?? '' },
    evidence: hit.evidence,
    check: { rule: rule.id, method: req.method, url: req.url, params: req.params, in: req.in, ...(hit.subject !== undefined ? { subject: hit.subject } : {}) },
    exchange: page.exchange,
    ...(hit.proof !== undefined ? { proof: hit.proof } : {}),
  });
}

function throttled(onProgress: ((f: number) => void) | undefined): (f: number, force?: boolean) => void {
  let last = 0;
  return (f, force = false) => {
    const now = Date.now();
    if (!onProgress || (!force && now - last < 250)) return;
    last = now;
    onProgress(Math.min(1, Math.max(0, f)));
  };
}

// GET pages whose last path segment is a file: the directory above may resolve paths naively.
function fileDirectories(pages: readonly CrawledPage[]): CrawledPage[] {
  const seen = new Set<string>();
  const out: CrawledPage[] = [];
  for (const page of pages) {
    if (page.request.method !== 'GET') continue;
    const path = pathOf(page.request.url);
    // The start page's own directory is always probed: a single-page app links to no file-like
    // URL, yet its static handler is where traversal usually lives.
    if (page.request.depth > 0 && !/\/[^/]+\.[a-z0-9]{1,5}$/i.test(path)) continue;
    const dir = dirOf(page.request.url);
    if (seen.has(dir)) continue;
    seen.add(dir);
    out.push(page);
  }
  return out;
}

type Task = { kind: 'point'; point: InjectionPoint; baseline: HttpExchange } | { kind: 'path'; page: CrawledPage };

export async function scanDast(input: DastInput, ctx: WebScanContext): Promise<WebScanOutput> {
  const { http, signal } = ctx;
  signal.throwIfAborted();
  const maxDepth = input.maxDepth ?? DAST_DEFAULTS.maxDepth;
  if (!Number.isInteger(maxDepth) || maxDepth < 0) throw new Error(`maxDepth must be a non-negative integer, got ${maxDepth}`);
  if (!http.inScope(input.target)) throw new OutOfScopeError(`target ${input.target} is outside the scan scope`);
  const enabled = enabledRules(input.policy);
  const prober = new Prober(http, signal);
  const env: ActiveEnv = { prober, delays: { ...DAST_DEFAULTS.delays } };
  const progress = throttled(ctx.onProgress);
  const notes: string[] = [];
  const findings = new Map<string, WebFinding>();
  const causes = new Map<string, RootCause>();
  const add = (f: WebFinding, cause?: RootCause): void => {
    if (findings.has(f.fingerprint)) return;
    findings.set(f.fingerprint, f);
    if (cause) causes.set(f.fingerprint, cause);
  };

  // ---- crawl
  const maxPages = Math.min(DAST_DEFAULTS.maxPages, Math.max(1, Math.floor(http.remaining * DAST_DEFAULTS.crawlShare)));
  const crawled = await crawl(input.target, prober, {
    maxDepth,
    maxPages,
    concurrency: DAST_DEFAULTS.concurrency,
    headers: enabled.has('dast-cors-misconfig') ? { origin: CORS_PROBE_ORIGIN } : {},
    inScope: (url) => http.inScope(url),
    onLevel: (depth) => progress((0.3 * depth) / (maxDepth + 1)),
  });
  const pages = crawled.pages;
  if (pages.length === 0 && !prober.budgetHit) {
    if (prober.lastError instanceof RefusedTargetError) throw prober.lastError;
    throw new Error(`the target could not be fetched: ${prober.lastFailure || 'no response'}`);
  }

  // ---- passive
  for (const page of pages) for (const hit of passiveHits(page.exchange, enabled)) add(passiveFinding(hit, page, input.policy));

  // ---- active
  const tasks: Task[] = [];
  const anyPointRule = FAMILIES.some((f) => f.rules.some((r) => enabled.has(r)));
  if (anyPointRule) {
    for (const page of pages) {
      const r = page.request;
      for (let index = 0; index < r.params.length; index++) tasks.push({ kind: 'point', point: { method: r.method, url: r.url, params: r.params, in: r.in, index }, baseline: page.exchange });
    }
  }
  if (enabled.has('dast-path-traversal')) for (const page of fileDirectories(pages)) tasks.push({ kind: 'path', page });
  let done = 0;
  if (!prober.budgetHit) {
    try {
      await runPool(tasks, DAST_DEFAULTS.concurrency, async (task) => {
        if (task.kind === 'path') {
          const dir = dirOf(task.page.request.url);
          const hit = await checkTraversalPath(env, dir, task.page.exchange);
          if (hit) add(pathFinding(hit, task.page, input.policy), { key: rootCauseKey(hit, dir, 'GET', 'path', '*'), url: dir });
        } else {
          for (const family of FAMILIES) {
            if (family.applies && !family.applies(task.point)) continue;
            for (const ruleId of family.rules) {
              if (!enabled.has(ruleId)) continue;
              const hit = await POINT_RULES[ruleId]!(env, task.point, task.baseline);
              if (hit) {
                const url = baselineRequest(task.point).url;
                add(pointFinding(hit, task.point, input.policy), { key: rootCauseKey(hit, url, task.point.method, task.point.in, pointName(task.point)), url });
                break;
              }
            }
          }
        }
        done++;
        progress(0.3 + (0.7 * done) / tasks.length);
      });
    } catch (err) {
      if (!(err instanceof BudgetStop)) throw err;
    }
  }
  progress(1, true);

  // ---- coverage
  if (prober.budgetHit) {
    notes.push(`request budget of ${http.limits.maxRequests} reached: scan incomplete (${pages.length} pages crawled, ${done} of ${tasks.length} parameters and directories tested)`);
  }
  if (crawled.pageCapHit) notes.push(`crawl stopped at ${maxPages} pages (at most half the request budget goes to crawling)`);
  if (crawled.outOfScope > 0) notes.push(`${crawled.outOfScope} out-of-scope URLs found in links, forms or redirects were not requested`);
  if (crawled.beyondDepth > 0) notes.push(`${crawled.beyondDepth} in-scope URLs deeper than maxDepth ${maxDepth} were not crawled`);
  if (crawled.skipped > 0) notes.push(`${crawled.skipped} multipart forms or logout links were skipped`);
  if (prober.failures > 0) notes.push(`${prober.failures} requests failed (last: ${prober.lastFailure})`);
  const ignored = [...DAST_RULES.keys()].filter((id) => !enabled.has(id));
  if (ignored.length > 0) notes.push(`rules ignored by policy: ${ignored.join(', ')}`);
  const unknown = unknownPolicyRules(input.policy);
  if (unknown.length > 0) notes.push(`policy names rules DAST does not have: ${unknown.join(', ')}`);

  const sorted = groupByRootCause([...findings.values()], causes).sort(
    (a, b) => a.rule_id.localeCompare(b.rule_id) || a.location.url.localeCompare(b.location.url) || (a.location.parameter ?? '').localeCompare(b.location.parameter ?? ''),
  );
  return { findings: sorted, coverage: { requests: prober.sent, items: pages.length, notes } };
}

/**
 * Runs again exactly the rule that produced a finding, on the same request and parameter (the
 * recorded payload variant first, then the rule's other variants), with a fresh baseline.
 */
export async function recheckDast(raw: Record<string, unknown>, ctx: WebScanContext): Promise<Recheck> {
  const check = parseCheck(raw);
  const rule = dastRule(check.rule);
  const prober = new Prober(ctx.http, ctx.signal);
  const env: ActiveEnv = { prober, delays: { ...DAST_DEFAULTS.delays } };
  const where = `${check.method} ${pathOf(check.url)}${check.parameter !== undefined ? ` (${check.parameter})` : ''}`;
  try {
    const base = baselineRequest(check);
    const baseline = await prober.send(rule.id === 'dast-cors-misconfig' ? { ...base, headers: { ...base.headers, origin: CORS_PROBE_ORIGIN } } : base);
    if (!baseline) return { reproduced: false, evidence: `${where}: request failed (${prober.lastFailure}); nothing to compare` };
    let hit: { evidence: string } | undefined;
    if (rule.kind === 'passive') {
      hit = passiveHits(baseline, new Set([rule.id])).find((h) => check.subject === undefined || h.subject === check.subject);
    } else if (check.in === 'path') {
      hit = (await checkTraversalPath(env, dirOf(check.url), baseline, check.variant)) ?? undefined;
    } else {
      const index = check.index ?? check.params.findIndex(([k]) => k === check.parameter);
      const name = check.params[index]?.[0];
      if (name === undefined || (check.parameter !== undefined && name !== check.parameter)) throw new Error(`DAST check: parameter ${check.parameter} not among params`);
      const run = POINT_RULES[rule.id];
      if (!run) throw new Error(`DAST check: ${rule.id} is not an injection rule`);
      hit = (await run(env, { method: check.method, url: check.url, params: check.params, in: check.in, index }, baseline, check.variant)) ?? undefined;
    }
    return hit ? { reproduced: true, evidence: hit.evidence } : { reproduced: false, evidence: `${rule.title} not reproduced at ${where}: baseline ${baseline.status}, no proof in ${prober.sent} requests` };
  } catch (err) {
    // A verify-fix that ran out of requests proves nothing either way.
    if (err instanceof BudgetStop) throw new BudgetExhaustedError(`request budget used up before the ${rule.id} recheck finished`);
    throw err;
  }
}
