// `aegis scan dast|api|cve TARGET`: scans a running site or API at a URL from CI, with the outputs,
// --fail-on and --baseline of the code scans (./scan.ts).
//
// Local mode (no AEGIS_API_URL, or --local) runs the same scanners the `scan` job runs
// (api/scans/url/run.ts: scanDast, scanApi, scanCve) in this process, through a ScanHttp held to
// TARGET's host. The address policy that keeps a shared server from probing its own network does
// not apply here: the CLI runs on the user's machine, and scanning a dev server on localhost is the
// point. Server mode (AEGIS_API_URL and AEGIS_API_KEY) starts the scan through the API (POST
// /api/v1/scans, /api-scans, /cve-scans), polls it and reads the findings back like a code scan,
// with their fingerprints from GET /api/v1/scans/:id/sarif (so a --baseline made in either mode
// suppresses the same findings in the other). Reports come from the shared formatters
// (scanners/report), which locate URL findings at their URL.
//
// --diff-base is a usage error here (a URL has no git history: use --baseline).
import { readFile } from 'node:fs/promises';
import type { WebFinding, WebScanContext, WebScanOutput } from '../scanners/web/types.ts';
import { sortFindings, type ScanReport } from '../scanners/report/index.ts';
import { policyMark, type ScanPolicy } from '../scanners/web/policy.ts';
import { withoutIgnored } from './scan-policy.ts';
import {
  apiClient,
  awaitServerScan,
  emitReport,
  FAIL_ON,
  oneOf,
  policyOption,
  progressReporter,
  readBaseline,
  withoutBaseline,
  SCAN_FORMATS,
  ScanError,
  toolVersion,
  type ApiScan,
  type FailOn,
  type Format,
  type ScanCommandOptions,
  type ScanIo,
  type URL_SCAN_TYPES,
} from './scan.ts';
import { errorMessage } from '../schemas/json-value.ts';

export type UrlScanType = (typeof URL_SCAN_TYPES)[number];

/** The same bounds as the API's request bodies (api/scans/url/schemas.ts). */
const LIMITS = {
  maxDepth: { min: 0, max: 10 },
  maxRequests: { min: 1, max: 100_000 },
  requestsPerSecond: { min: 0.1, max: 200 },
} as const;
const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
const CVE_ID = /^CVE-\d{4}-\d{4,}$/;

/** What one URL scan is asked to do, checked and normalised from the command line. */
interface UrlScanPlan {
  scanType: UrlScanType;
  target: string;
  maxDepth?: number;
  maxRequests?: number;
  requestsPerSecond?: number;
  headers?: Record<string, string>;
  /** api: the OpenAPI document, a file (its text) or a URL. */
  document?: { kind: 'text'; text: string } | { kind: 'url'; url: string };
  /** cve: what to run (every bundled template when neither was given). */
  cves?: string[];
  tags?: string[];
  /** --policy: sent to the server, and marks findings in local mode as the server would. */
  policy?: ScanPolicy;
}

interface UrlScanResult {
  findings: WebFinding[];
  coverage: { requests: number; items: number; notes: string[] };
}

function httpUrl(value: string, what: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ScanError(`${what} ${JSON.stringify(value)} is not a URL (e.g. https://staging.example.com/)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ScanError(`${what} ${JSON.stringify(value)} must be an http or https URL`);
  if (parsed.username || parsed.password) throw new ScanError(`${what} must not carry credentials; send them with --header`);
  return parsed.href.replace(/#.*$/, '');
}

function numberOption(value: string | undefined, flag: string, bounds: { min: number; max: number }, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < bounds.min || n > bounds.max) {
    throw new ScanError(`${flag} must be ${integer ? 'a whole number' : 'a number'} from ${bounds.min} to ${bounds.max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** `--header 'Name: value'`, repeatable. */
function parseHeaders(values: readonly string[]): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const raw of values) {
    const colon = raw.indexOf(':');
    const name = colon > 0 ? raw.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new ScanError(`--header ${JSON.stringify(raw)}: expected "Name: value"`);
    headers[name.toLowerCase()] = raw.slice(colon + 1).trim();
  }
  return headers;
}

/** `--cve A,B --cve C`: comma-separated and repeatable. */
const listOption = (values: readonly string[] | undefined): string[] => (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);

async function planOf(scanType: UrlScanType, targetArg: string | undefined, options: ScanCommandOptions): Promise<UrlScanPlan> {
  if (options.diffBase !== undefined) throw new ScanError('--diff-base applies to code scans (secrets, sast, sca) only: a URL has no git history to compare with; use --baseline');
  if (options.advisories !== undefined) throw new ScanError('--advisories applies to sca scans only');
  if (options.openapi !== undefined && scanType !== 'api') throw new ScanError('--openapi applies to api scans only');
  if ((options.cve !== undefined || options.tag !== undefined) && scanType !== 'cve') throw new ScanError('--cve and --tag apply to cve scans only');
  if (options.maxDepth !== undefined && scanType !== 'dast') throw new ScanError('--max-depth applies to dast scans only');
  if (targetArg === undefined) throw new ScanError(`a ${scanType} scan needs a TARGET URL, e.g. aegis scan ${scanType} https://staging.example.com/`);
  const plan: UrlScanPlan = { scanType, target: httpUrl(targetArg, 'TARGET') };
  const maxDepth = numberOption(options.maxDepth, '--max-depth', LIMITS.maxDepth, true);
  const maxRequests = numberOption(options.maxRequests, '--max-requests', LIMITS.maxRequests, true);
  const requestsPerSecond = numberOption(options.requestsPerSecond, '--requests-per-second', LIMITS.requestsPerSecond, false);
  const headers = parseHeaders(options.header ?? []);
  if (maxDepth !== undefined) plan.maxDepth = maxDepth;
  if (maxRequests !== undefined) plan.maxRequests = maxRequests;
  if (requestsPerSecond !== undefined) plan.requestsPerSecond = requestsPerSecond;
  if (headers) plan.headers = headers;
  if (scanType === 'api') {
    const where = options.openapi;
    if (where === undefined) throw new ScanError('an api scan needs --openapi FILE|URL: the OpenAPI 3.x document of the API at TARGET');
    if (/^https?:\/\//i.test(where)) plan.document = { kind: 'url', url: httpUrl(where, '--openapi') };
    else {
      const text = await readFile(where, 'utf8').catch((err: unknown) => {
        throw new ScanError(`--openapi ${where}: ${errorMessage(err)}`);
      });
      if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES) throw new ScanError(`--openapi ${where}: larger than 5 MiB`);
      const { parseApiDocument } = await import('../scanners/api-scan/scan.ts');
      await parseApiDocument(text).catch((err: unknown) => {
        throw new ScanError(`--openapi ${where}: not a valid OpenAPI document: ${errorMessage(err)}`);
      });
      plan.document = { kind: 'text', text };
    }
  }
  if (scanType === 'cve') {
    const cves = listOption(options.cve).map((c) => c.toUpperCase());
    const tags = listOption(options.tag).map((t) => t.toLowerCase());
    const bad = cves.filter((c) => !CVE_ID.test(c));
    if (bad.length > 0) throw new ScanError(`--cve ${bad.join(', ')}: not a CVE id (CVE-YYYY-NNNN)`);
    const { checkCveSelection } = await import('../scanners/cve/scan.ts');
    const { bundledTemplates } = await import('../scanners/cve/library.ts');
    // Neither given: every bundled template.
    const selection = cves.length === 0 && tags.length === 0 ? { cves: bundledTemplates().map((t) => t.id) } : { ...(cves.length > 0 ? { cves } : {}), ...(tags.length > 0 ? { tags } : {}) };
    const problem = checkCveSelection(selection);
    if (problem) throw new ScanError(problem);
    Object.assign(plan, selection);
  }
  return plan;
}

export async function runUrlScanCommand(scanType: UrlScanType, targetArg: string | undefined, options: ScanCommandOptions, env: NodeJS.ProcessEnv, io: ScanIo): Promise<number> {
  const format: Format = oneOf(SCAN_FORMATS, options.format ?? 'text', '--format');
  const failOn: FailOn = oneOf(FAIL_ON, options.failOn ?? 'high', '--fail-on');
  const plan = await planOf(scanType, targetArg, options);
  const server = !options.local && Boolean(env.AEGIS_API_URL);
  if (server && !env.AEGIS_API_KEY) throw new ScanError('AEGIS_API_URL is set but AEGIS_API_KEY is not (set it, or scan in this process with --local)');
  const progress = !options.quiet && io.stderrIsTty;
  // Read the baseline and the policy first: a bad file should fail before a long scan.
  const baseline = options.baseline ? await readBaseline(options.baseline) : undefined;
  const policy = await policyOption(options);
  if (policy) plan.policy = policy;
  const result = server ? await serverUrlScan(plan, env.AEGIS_API_URL!, env.AEGIS_API_KEY!, io, progress) : await localUrlScan(plan, io, progress);

  const { findings, suppressed } = withoutBaseline(withoutIgnored(dedupe(result.findings), policy), baseline);
  const report: ScanReport = {
    scanType,
    tool: { name: 'aegis', version: toolVersion(), informationUri: 'https://github.com/aegis-security/aegis' },
    target: plan.target,
    findings: sortFindings(findings),
    suppressed: { baseline: suppressed, diff_base: 0 },
    coverage: result.coverage,
    generatedAt: new Date().toISOString(),
  };
  return emitReport(report, format, options, io, failOn, policy);
}

function dedupe(findings: readonly WebFinding[]): WebFinding[] {
  const seen = new Map<string, WebFinding>();
  for (const f of findings) if (!seen.has(f.fingerprint)) seen.set(f.fingerprint, f);
  return [...seen.values()];
}

// ---------------------------------------------------------------- local mode

async function localUrlScan(plan: UrlScanPlan, io: ScanIo, progress: boolean): Promise<UrlScanResult> {
  const { ScanHttp } = await import('../scanners/web/http.ts');
  const signal = new AbortController().signal;
  const parsed = new URL(plan.target);
  const http = new ScanHttp({
    scope: { hosts: [parsed.host.toLowerCase()], pathPrefixes: ['/'] },
    limits: { ...(plan.maxRequests !== undefined ? { maxRequests: plan.maxRequests } : {}), ...(plan.requestsPerSecond !== undefined ? { requestsPerSecond: plan.requestsPerSecond } : {}) },
    ...(plan.headers ? { auth: { headers: plan.headers } } : {}),
    allowPrivate: true,
    signal,
  });
  const onProgress = progressReporter(io, progress, plan.target);
  const ctx: WebScanContext = { http, signal, ...(onProgress ? { onProgress } : {}) };
  let output: WebScanOutput;
  try {
    if (plan.scanType === 'dast') {
      const { scanDast } = await import('../scanners/dast/scan.ts');
      output = await scanDast({ target: plan.target, ...(plan.maxDepth !== undefined ? { maxDepth: plan.maxDepth } : {}), ...(plan.policy ? { policy: plan.policy } : {}) }, ctx);
    } else if (plan.scanType === 'api') {
      const { parseApiDocument, scanApi } = await import('../scanners/api-scan/scan.ts');
      const text = plan.document!.kind === 'text' ? plan.document!.text : await fetchDocument(plan.document!.url);
      const document = await parseApiDocument(text).catch((err: unknown) => {
        throw new ScanError(`--openapi: not a valid OpenAPI document: ${errorMessage(err)}`);
      });
      output = await scanApi({ document, baseUrl: plan.target }, ctx);
    } else {
      const { scanCve } = await import('../scanners/cve/scan.ts');
      output = await scanCve({ target: plan.target, ...(plan.cves ? { cves: plan.cves } : {}), ...(plan.tags ? { tags: plan.tags } : {}) }, ctx);
    }
  } finally {
    await http.close();
  }
  if (progress) io.stderr(`\r\u001b[2Kscanned ${plan.target}\n`);
  // The mark the policy gives a finding (by default high and critical fail, the rest warn), as the job does.
  const findings = output.findings.map((f) => (f.details.policy ? f : { ...f, details: { ...f.details, policy: policyMark(f.rule_id, f.severity, plan.policy) } }));
  return { findings, coverage: output.coverage };
}

async function fetchDocument(url: string): Promise<string> {
  const res = await fetch(url, { headers: { accept: 'application/json, application/yaml, text/yaml, */*' } }).catch((err: unknown) => {
    throw new ScanError(`--openapi ${url}: ${errorMessage(err)}`);
  });
  if (res.status !== 200) throw new ScanError(`--openapi ${url}: answered ${res.status}`);
  const text = await res.text();
  if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES) throw new ScanError(`--openapi ${url}: larger than 5 MiB`);
  return text;
}

// ---------------------------------------------------------------- server mode

async function serverUrlScan(plan: UrlScanPlan, baseUrl: string, apiKey: string, io: ScanIo, progress: boolean): Promise<UrlScanResult> {
  const api = apiClient(baseUrl, apiKey);
  const common = {
    ...(plan.maxRequests !== undefined ? { max_requests: plan.maxRequests } : {}),
    ...(plan.requestsPerSecond !== undefined ? { requests_per_second: plan.requestsPerSecond } : {}),
    ...(plan.headers ? { auth: { headers: plan.headers } } : {}),
    ...(plan.policy ? { policy: plan.policy } : {}),
  };
  let started: ApiScan;
  if (plan.scanType === 'dast') {
    started = (await api('POST', '/api/v1/scans', { json: { target: plan.target, ...(plan.maxDepth !== undefined ? { max_depth: plan.maxDepth } : {}), ...common } })) as ApiScan;
  } else if (plan.scanType === 'api') {
    const document = plan.document!.kind === 'text' ? { document: plan.document!.text } : { document_url: plan.document!.url };
    started = (await api('POST', '/api/v1/api-scans', { json: { base_url: plan.target, ...document, ...common } })) as ApiScan;
  } else {
    started = (await api('POST', '/api/v1/cve-scans', { json: { target: plan.target, ...(plan.cves ? { cves: plan.cves } : {}), ...(plan.tags ? { tags: plan.tags } : {}), ...common } })) as ApiScan;
  }
  const { findings, coverage } = await awaitServerScan(api, started, plan.target, io, progress);
  const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const notes = Array.isArray(coverage?.notes) ? coverage.notes.filter((n): n is string => typeof n === 'string') : [];
  return { findings: findings as WebFinding[], coverage: { requests: num(coverage?.requests), items: num(coverage?.items), notes } };
}
