// Impact preview: replays the traffic record (../traffic/traffic-record.ts) through the pipeline twice, under
// the site's current configuration and under a proposed one, and reports what would change
// (impact-report.ts). Pure: configurations and records in, a report out, nothing stored.
//
// Each record becomes the request the pipeline saw, as far as the record allows: method and path
// always; query, headers and body only when its values were kept (credential headers never are,
// so the API keys' digests stand in for them: an `api_key` rate limit still counts one client as
// one). Each configuration gets its own rate-limit counters, and the clock is the record's arrival
// time, so buckets fill and drain as they did. Records stream through: only aggregates and a few
// examples are kept. Managed rules are answered from what the gateway recorded of every request
// at every paranoia level (RecordedManagedRules), so a level change is exact, not a sample.
import type { IncomingHttpHeaders } from 'node:http';
import { parseIp, type ParsedIp } from '../../schemas/checks/ip.ts';
import { bufferLimit, inspectBody, opaqueBody, type BodyLimits } from '../inspect/body.ts';
import { headerOverrides, requestViews } from '../inspect/method-override.ts';
import { LazyInspectedRequest, type InspectedRequest } from '../inspected-request.ts';
import { mediaType } from '../proxy/request-body.ts';
import { ALLOW, accessStage, contentStage, Evaluation, rateStage, type PipelineDeps, type RequestFacts, type Verdict } from '../pipeline.ts';
import type { AsnDatabase } from '../rules/asn-db.ts';
import { clampLevel, PASSES_EVERY_LEVEL, type ManagedByLevel, type ManagedRuleHit, type ManagedRuleSet } from '../rules/managed/index.ts';
import { bodyReaders, compileSite, type CompiledSite } from '../sites/compile.ts';
import type { SiteConfig } from '../sites/load.ts';
import { MemoryRateState } from '../state/memory-rate-state.ts';
import { GroupTally, type ChangeKind, type ImpactObject, type ImpactObjectKind, type ImpactReport } from './impact-report.ts';
import { RecordList, type RecordedRequests, type RecordRun } from '../traffic/record-batch.ts';
import type { RecordedValues, TrafficRecord } from '../traffic/traffic-record.ts';

export interface ReplayInput {
  current: SiteConfig;
  proposed: SiteConfig;
  /** One site's records in ascending `at` order: whole, or a page of runs at a time as traffic-reader.ts reads them. */
  records: Iterable<TrafficRecord> | AsyncIterable<readonly RecordRun[]>;
  /** Epoch ms; records outside [since, until) are skipped. */
  window: { since: number; until: number };
  /** For ASN and country rules; without it they match nothing. */
  asnDb?: AsnDatabase;
}

/** The gateway's defaults (gateway.ts): a recorded body is re-read within the same bounds. */
const BODY_LIMITS: BodyLimits = { inspectBytes: 128 * 1024, multipartBytes: 8 * 1024 * 1024, maxRatio: 100 };
/** The rate state's sweep compares counters with the wall clock, which is not the replay's: it must never run. */
const NEVER_SWEEP_MS = 2 ** 31 - 1;
const UNSPECIFIED_IP: ParsedIp = { version: 4, value: 0 };
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});
const NOT_CLEARED = (): boolean => false;
/** Records replayed between two turns of the event loop. */
const YIELD_EVERY = 2_000;

type Outcome = 'pass' | 'block' | 'challenge';
const outcomeOf = (action: Verdict['action']): Outcome => (action === 'block' ? 'block' : action === 'challenge' ? 'challenge' : 'pass');

/** What one configuration does with a recorded body: not read, inspected, or refused as too large (the gateway's choice). */
type BodyPlan = 'skip' | 'inspect' | 'too_large';

/** A stateless stage's answer: the verdict that ends evaluation, or the first rule that only logged. */
interface StageAnswer {
  verdict: Verdict | null;
  logged: Verdict | null;
}
/** What a side remembers of a bare request's `METHOD path`. */
interface TargetMemo {
  method: string;
  path: string;
  /** Whether its decision reads counters: a rate limit on the path, or standing denies. */
  counted: boolean;
  /** Stages 5–8, once asked. */
  content: StageAnswer | null;
}
/** Distinct clients and requests a side remembers answers for; past it, the memo starts again. */
const MEMO_LIMIT = 200_000;

/**
 * A side's managed rules answered from the record: the rule the gateway found deciding at the
 * side's paranoia level when it judged the request at every level (TrafficRecord.managedByLevel),
 * with the live exclusions. A request recorded without that (managed rules were off) is read by
 * the rules themselves, on what the record kept.
 */
class RecordedManagedRules implements ManagedRuleSet {
  /** The verdicts of the request being evaluated; null when it was not judged. Set before each content stage. */
  recorded: ManagedByLevel | null = null;
  /** One hit per rule (the record keeps which rule decided, not its score). */
  readonly #hits = new Map<string, ManagedRuleHit>();

  constructor(
    private readonly level: number,
    private readonly rules: ManagedRuleSet,
  ) {}

  match(request: InspectedRequest): ManagedRuleHit | null {
    if (this.recorded === null) return this.rules.match(request);
    const ruleId = this.recorded[this.level - 1] ?? null;
    if (ruleId === null) return null;
    let hit = this.#hits.get(ruleId);
    if (hit === undefined) this.#hits.set(ruleId, (hit = Object.freeze({ ruleId, score: 0, signals: Object.freeze([ruleId]) })));
    return hit;
  }
}

/**
 * One configuration under replay: compiled once, with counters of its own and the replay's clock.
 * Only rate limits read counters: what the address rules say of a client, and what the content
 * rules say of a bare request (method and path alone), is the same every time, so those answers
 * are remembered — most of a record is the same clients asking for the same paths.
 */
class Side {
  readonly state = new MemoryRateState(NEVER_SWEEP_MS);
  readonly deps: PipelineDeps;
  readonly site: CompiledSite;
  readonly #recorded: RecordedManagedRules | null;
  readonly #byClient = new Map<string, StageAnswer>();
  /** Bare targets, by whether the request was judged at every level (its managed answer differs). */
  readonly #byTarget = new Map<string, TargetMemo>();
  readonly #byJudgedTarget = new Map<string, TargetMemo>();

  /** `recordedLevel`: answer managed rules from the record at this level (RecordedManagedRules); null to read requests. */
  constructor(site: CompiledSite, asnDb: AsnDatabase | undefined, clock: () => number, recordedLevel: number | null) {
    this.#recorded = recordedLevel !== null && site.managed ? new RecordedManagedRules(recordedLevel, site.managed) : null;
    this.site = this.#recorded ? { ...site, managed: this.#recorded } : site;
    // MemoryRateState does not fail; should another store, under-reporting silently would mislead.
    this.deps = { state: this.state, asnDb, now: clock, onStateError: (err) => { throw err; } };
  }

  bodyPlan(method: string, path: string, headers: IncomingHttpHeaders, contentType: string, bytes: Buffer): BodyPlan {
    const readers = bodyReaders(this.site, method, path, headerOverrides(method, headers));
    if (!readers.specific && !readers.managed) return 'skip';
    if (bytes.length <= bufferLimit(contentType, BODY_LIMITS)) return 'inspect';
    return readers.specific || !opaqueBody(contentType, bytes) ? 'too_large' : 'skip';
  }

  /** The pipeline's decision (pipeline.ts decide), stage by stage, for a request that kept values or keys. */
  decide(request: LazyInspectedRequest, clientIp: string, parsedIp: ParsedIp, managed: ManagedByLevel | null): Promise<Verdict> | Verdict {
    const site = this.site;
    if (!site.hasRules) return ALLOW;
    const access = this.#access(request, clientIp, parsedIp);
    if (access.verdict) return access.verdict;
    const finish = (logged: Verdict | null): Verdict => finishWith(this.#content(request, clientIp, parsedIp, managed), logged);
    if (!this.#counted(request.path)) return finish(access.logged);
    return this.#rate(request, clientIp, parsedIp, access.logged).then((limited) => (limited instanceof Evaluation ? finish(limited.logged) : limited));
  }

  /**
   * The same for a bare request (its method, path and client alone), whose content answer is
   * remembered by `target`. `judged`: managed rules were judged at every level and passed it (a
   * request some level flags is never bare: record-batch.ts).
   */
  decideBare(target: string, judged: boolean, clientIp: string, parsedIp: ParsedIp): Promise<Verdict> | Verdict {
    const site = this.site;
    if (!site.hasRules) return ALLOW;
    const memos = judged ? this.#byJudgedTarget : this.#byTarget;
    let memo = memos.get(target);
    if (memo === undefined) {
      const space = target.indexOf(' ');
      const path = target.slice(space + 1);
      if (memos.size >= MEMO_LIMIT) memos.clear();
      memos.set(target, (memo = { method: target.slice(0, space), path, counted: this.#counted(path), content: null }));
    }
    const access = this.#access(memo, clientIp, parsedIp);
    if (access.verdict) return access.verdict;
    const managed = judged ? PASSES_EVERY_LEVEL : null;
    if (!memo.counted) return finishWith((memo.content ??= this.#content(bareRequest(memo.method, memo.path), clientIp, parsedIp, managed)), access.logged);
    const known = memo;
    const request = bareRequest(known.method, known.path);
    return this.#rate(request, clientIp, parsedIp, access.logged).then((limited) => (limited instanceof Evaluation ? finishWith((known.content ??= this.#content(request, clientIp, parsedIp, managed)), limited.logged) : limited));
  }

  /** Stages 1–2, remembered by client. */
  #access(request: { method: string; path: string }, clientIp: string, parsedIp: ParsedIp): StageAnswer {
    let access = this.#byClient.get(clientIp);
    if (access === undefined) {
      const full = request instanceof LazyInspectedRequest ? request : bareRequest(request.method, request.path);
      const evaluation = new Evaluation(this.site, { request: full, clientIp, parsedIp, hasClearance: NOT_CLEARED });
      access = remember(this.#byClient, clientIp, { verdict: accessStage(this.site, evaluation.facts, this.deps, evaluation), logged: evaluation.logged });
    }
    return access;
  }

  /** Whether a request on this path reads counters: a rate limit on it, or standing denies. */
  #counted(path: string): boolean {
    return this.site.escalating.length > 0 || this.site.rateLimitsByPath.candidates(path).length > 0;
  }

  /** Stages 3–4: the verdict that ends evaluation, or the evaluation to go on with. */
  async #rate(request: LazyInspectedRequest, clientIp: string, parsedIp: ParsedIp, logged: Verdict | null): Promise<Verdict | Evaluation> {
    const evaluation = new Evaluation(this.site, { request, clientIp, parsedIp, hasClearance: NOT_CLEARED });
    evaluation.logged = logged;
    return (await rateStage(this.site, evaluation.facts, this.deps, requestViews(request), evaluation)) ?? evaluation;
  }

  /** Stages 5–8 on their own evaluation; `managed`: the request's recorded managed-rule verdicts. */
  #content(request: LazyInspectedRequest, clientIp: string, parsedIp: ParsedIp, managed: ManagedByLevel | null): StageAnswer {
    if (this.#recorded) this.#recorded.recorded = managed;
    const evaluation = new Evaluation(this.site, { request, clientIp, parsedIp, hasClearance: NOT_CLEARED });
    return { verdict: contentStage(this.site, request, requestViews(request), evaluation), logged: evaluation.logged };
  }
}

/** The decision once the counters had their say: content's verdict, else what was logged first, else allow. */
const finishWith = (content: StageAnswer, logged: Verdict | null): Verdict => content.verdict ?? logged ?? content.logged ?? ALLOW;

function remember(memo: Map<string, StageAnswer>, key: string, answer: StageAnswer): StageAnswer {
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, answer);
  return answer;
}

/** What the pipeline sees of a bare request: method and path, no query, headers or body. */
const bareRequest = (method: string, path: string): LazyInspectedRequest => new LazyInspectedRequest(method, path, '', NO_HEADERS, '');

/** The request headers as the record allows: kept values (if any) and the API keys' digests in credential headers. */
function headersOf(record: TrafficRecord): IncomingHttpHeaders {
  const keys = record.apiKeys;
  if (keys.length === 0) return record.values?.headers ?? NO_HEADERS;
  const headers: IncomingHttpHeaders = record.values ? { ...record.values.headers } : {};
  // rules/rate-limits.ts reads at most two keys: a bearer token and X-Api-Key.
  if (keys[0] !== undefined) headers['x-api-key'] = keys[0];
  if (keys[1] !== undefined) headers.authorization = `Bearer ${keys[1]}`;
  return headers;
}

/**
 * The headers a recorded body is re-read with: the body is kept decoded, as UTF-8 text, and in the
 * media type the record names (traffic/capture.ts keeps a multipart body's fields as a form), so
 * no Content-Encoding or Content-Length, no other charset, and a Content-Type that agrees.
 */
function bodyHeaders(headers: IncomingHttpHeaders, contentType: string): IncomingHttpHeaders {
  const out = { ...headers };
  delete out['content-encoding'];
  delete out['content-length'];
  const declared = out['content-type'];
  if (contentType === '') {
    delete out['content-type'];
    return out;
  }
  out['content-type'] = declared !== undefined && mediaType(declared) === contentType ? declared.replace(/;\s*charset\s*=\s*("?)[^";\s]*\1/i, '') : contentType;
  return out;
}

/**
 * Whether some rule of the site reads what only records with values keep: parameters, bodies, a
 * header identity. `managedFromRecord`: managed rules were answered from every request's record.
 */
function readsValues(site: CompiledSite, managedFromRecord: boolean): boolean {
  return site.patches !== null || (site.managed !== null && !managedFromRecord) || site.schema !== null || site.rateLimits.some((rule) => rule.identity.kind === 'header');
}

/** Whether the verdicts of this object read only what every record keeps. */
function valueFree(kind: ImpactObjectKind, id: string | null, sites: readonly CompiledSite[], managedFromRecord: boolean): boolean {
  switch (kind) {
    case 'ip_access':
      return true;
    case 'managed':
      return managedFromRecord;
    case 'rate_limit':
    case 'escalation':
      // A header identity falls back to the address when the header was not kept.
      return !sites.some((site) => site.rateLimits.some((rule) => rule.id === id && rule.identity.kind === 'header'));
    case 'mode':
      // A new mode changes what every rule does, value-reading ones included.
      return !sites.some((site) => readsValues(site, managedFromRecord));
    default:
      return false;
  }
}

function classify(current: Outcome, proposed: Outcome): ChangeKind | 'softened' | null {
  if (current === proposed) return null;
  if (proposed === 'block') return 'newly_blocked';
  if (proposed === 'challenge') return current === 'pass' ? 'newly_challenged' : 'softened';
  return 'newly_allowed';
}

function isAsync<T, P>(source: Iterable<T> | AsyncIterable<P>): source is AsyncIterable<P> {
  return Symbol.asyncIterator in source;
}

/**
 * The paranoia level each side answers managed rules at from the record, or null where it reads
 * the requests instead: the gateway judged every level with the live configuration's exclusions
 * and path case, so a side with other exclusions (or rules the live site has off) cannot use it.
 */
function recordedLevels(current: SiteConfig, proposed: SiteConfig): [number | null, number | null] {
  const live = current.site.managed_rules;
  const level = (config: SiteConfig): number | null => {
    const settings = config.site.managed_rules;
    if (!live?.enabled || !settings?.enabled || config.site.path_case !== current.site.path_case) return null;
    return JSON.stringify(settings.exclusions ?? []) === JSON.stringify(live.exclusions ?? []) ? clampLevel(settings.paranoia_level) : null;
  };
  return [level(current), level(proposed)];
}

export async function replayImpact(input: ReplayInput): Promise<ImpactReport> {
  const [currentSite, proposedSite] = await Promise.all([compileSite(input.current), compileSite(input.proposed)]);
  const sites = [currentSite, proposedSite] as const;
  let clock = input.window.since;
  const now = (): number => clock;
  const [currentLevel, proposedLevel] = recordedLevels(input.current, input.proposed);
  const current = new Side(currentSite, input.asnDb, now, currentLevel);
  const proposed = new Side(proposedSite, input.asnDb, now, proposedLevel);
  /** Whether each side with managed rules answers them from the record (exact once every request was judged). */
  const managedRecorded = (currentSite.managed === null || currentLevel !== null) && (proposedSite.managed === null || proposedLevel !== null);
  const wantsFile = (name: string): boolean => (currentSite.patches?.names(name) ?? false) || (proposedSite.patches?.names(name) ?? false);

  const total = new GroupTally();
  const objects = new Map<string, { object: ImpactObject; tally: GroupTally }>();
  let records = 0;
  let withValues = 0;
  let unchanged = 0;
  let softened = 0;
  let differs = 0;
  let otherSites = 0;
  /** Requests recorded without their managed-rule verdict at every level (managed rules were off then). */
  let unjudged = 0;
  /** Clients repeat: each address is parsed once per replay. */
  const parsedIps = new Map<string, ParsedIp>();

  const groupFor = (kind: ImpactObjectKind, id: string | null): GroupTally => {
    const key = `${kind}\u0000${id ?? ''}`;
    let entry = objects.get(key);
    if (!entry) objects.set(key, (entry = { object: { kind, id }, tally: new GroupTally() }));
    return entry.tally;
  };

  /** The request each side sees when the record kept a body: one shared object unless the sides read the body differently. */
  const requestsWithBody = async (record: TrafficRecord, values: RecordedValues, body: string): Promise<[LazyInspectedRequest, LazyInspectedRequest]> => {
    const withBody = bodyHeaders(headersOf(record), values.contentType);
    const bytes = Buffer.from(body, 'utf8');
    const plans = [current, proposed].map((side) => side.bodyPlan(record.method, record.path, withBody, values.contentType, bytes));
    const build = async (plan: BodyPlan): Promise<LazyInspectedRequest> => {
      const request = new LazyInspectedRequest(record.method, record.path, values.query, withBody, values.contentType);
      request.bodyState = plan === 'too_large' ? 'too_large' : 'not_inspected';
      if (plan === 'inspect') {
        // A record holds one value per header, so the raw headers cannot repeat Content-Type.
        request.setBody(await inspectBody(bytes, { headers: withBody, rawHeaders: [] }, values.contentType, BODY_LIMITS, request.collector, wantsFile));
      }
      return request;
    };
    const first = await build(plans[0]!);
    return plans[0] === plans[1] ? [first, first] : [first, await build(plans[1]!)];
  };

  /** Request i of a run replayed; a promise only when a side had to wait (a body to inspect, counters). */
  const step = (requests: RecordedRequests, i: number): void | Promise<void> => {
    const at = requests.at(i);
    if (at < input.window.since || at >= input.window.until) return;
    if (requests.siteId !== currentSite.id) {
      otherSites++;
      return;
    }
    records++;
    clock = at;
    const clientIp = requests.clientIp(i);
    let parsedIp = parsedIps.get(clientIp);
    if (parsedIp === undefined) parsedIps.set(clientIp, (parsedIp = parseIp(clientIp) ?? UNSPECIFIED_IP));
    const judged = requests.judged(i);
    if (!judged) unjudged++;
    if (requests.bare(i)) {
      // Most requests: nothing but method, path and client; built whole only if the change touches them.
      const target = requests.target(i);
      const before = current.decideBare(target, judged, clientIp, parsedIp);
      const after = proposed.decideBare(target, judged, clientIp, parsedIp);
      if (before instanceof Promise || after instanceof Promise) return Promise.all([before, after]).then(([b, a]) => tally(requests, i, b, a));
      return tally(requests, i, before, after);
    }
    const record = requests.record(i);
    withValues += record.values !== null ? 1 : 0;
    const values = record.values;
    if (values !== null && values.body !== null && values.body !== '') {
      return requestsWithBody(record, values, values.body).then(([currentRequest, proposedRequest]) => judge(record, parsedIp, currentRequest, proposedRequest));
    }
    const request = new LazyInspectedRequest(record.method, record.path, values?.query ?? '', headersOf(record), values?.contentType ?? '');
    return judge(record, parsedIp, request, request);
  };

  /** A request that kept values: each side decides in turn (a body may have been read differently). */
  const judge = async (record: TrafficRecord, parsedIp: ParsedIp, currentRequest: LazyInspectedRequest, proposedRequest: LazyInspectedRequest): Promise<void> => {
    const before = await current.decide(currentRequest, record.clientIp, parsedIp, record.managedByLevel);
    const after = await proposed.decide(proposedRequest, record.clientIp, parsedIp, record.managedByLevel);
    tally(new RecordList([record]), 0, before, after);
  };

  /** Counts request i of `requests`; its whole record is built only if its verdict changed. */
  const tally = (requests: RecordedRequests, i: number, before: Verdict, after: Verdict): void => {
    const was = outcomeOf(before.action);
    if (was !== outcomeOf(requests.action(i))) differs++;
    const change = classify(was, outcomeOf(after.action));
    if (change === null || change === 'softened') {
      unchanged++;
      if (change === 'softened') softened++;
      return;
    }
    // The same rule decided both ways: only the mode can have turned its verdict.
    const byMode = currentSite.mode !== proposedSite.mode && before.ruleKind !== null && before.ruleKind === after.ruleKind && before.ruleId === after.ruleId;
    const responsible = change === 'newly_allowed' ? before : after;
    // A block or challenge always names its rule kind; `?? 'mode'` only satisfies the type.
    const group = byMode ? groupFor('mode', null) : groupFor(responsible.ruleKind ?? 'mode', responsible.ruleId);
    const record = requests.record(i);
    group.tallies[change].add(record);
    total.tallies[change].add(record);
  };

  try {
    // A replay of millions of requests runs in the API's process, beside the gateway on a single
    // server: it lets the event loop turn every few thousand, so requests keep being answered.
    let sinceYield = 0;
    const replayRun = async ({ requests, from, to }: RecordRun): Promise<void> => {
      for (let i = from; i < to; i++) {
        // Only a request that had to wait is awaited: most are decided without a microtask.
        const pending = step(requests, i);
        if (pending) await pending;
        if (++sinceYield === YIELD_EVERY) {
          sinceYield = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    };
    if (isAsync(input.records)) {
      for await (const page of input.records) for (const run of page) await replayRun(run);
    } else {
      const list = new RecordList([...input.records]);
      await replayRun({ requests: list, from: 0, to: list.length });
    }
  } finally {
    await Promise.all([current.state.close(), proposed.state.close()]);
  }

  const ranked = [...objects.values()].sort((a, b) => b.tally.requests - a.tally.requests || a.object.kind.localeCompare(b.object.kind) || (a.object.id ?? '').localeCompare(b.object.id ?? ''));
  const managedFromRecord = managedRecorded && unjudged === 0;
  // The total (zero changes included) is exact only when neither configuration reads values.
  const totals = total.group(records, withValues, !sites.some((site) => readsValues(site, managedFromRecord)));

  return {
    window: { since: new Date(input.window.since).toISOString(), until: new Date(input.window.until).toISOString() },
    mode: { current: currentSite.mode, proposed: proposedSite.mode },
    totals: { ...totals, unchanged, softened },
    objects: ranked.map(({ object, tally }) => ({ object, ...tally.group(records, withValues, valueFree(object.kind, object.id, sites, managedFromRecord)) })),
    differs_from_recorded: differs,
    warnings: replayWarnings(sites, input.asnDb !== undefined, otherSites),
  };
}

function replayWarnings(sites: readonly [CompiledSite, CompiledSite], hasAsnDb: boolean, otherSites: number): string[] {
  const warnings: string[] = [];
  sites.forEach((site, i) => {
    const side = i === 0 ? 'current' : 'proposed';
    for (const warning of site.warnings) warnings.push(`${side}: ${warning}`);
    if (site.ipAccess?.needsAsn && !hasAsnDb) warnings.push(`${side}: ASN and country rules were not replayed: no ASN database`);
  });
  if (otherSites > 0) warnings.push(`${otherSites} records of another site were skipped`);
  return warnings;
}
