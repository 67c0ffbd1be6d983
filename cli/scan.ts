// `aegis scan secrets|sast|sca [PATH]`: scans a directory from CI and reports the findings as text,
// JSON, SARIF or JUnit, failing the run (exit 1) when one reaches --fail-on. `aegis scan
// dast|api|cve TARGET` (a URL) is ./scan-url.ts, with the same outputs, --fail-on and --baseline.
//
// Local mode (no AEGIS_API_URL, or --local) runs the scanners in this process: no server, no
// database. Server mode (AEGIS_API_URL and AEGIS_API_KEY) uploads PATH as a zip archive scan, polls
// it and reads the findings back through the API.
//
// --baseline FILE drops findings whose fingerprint FILE (an earlier --format json report) holds;
// --diff-base REF drops findings already present at git REF (a `git archive` export of REF, scanned
// the same way). Fingerprints are the scanners' own, which do not contain line numbers (see
// scanners/report/sarif.ts and docs/scan-cli.md). Exit: 0 clean, 1 a finding reaches --fail-on,
// 2 usage or scan error.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { readFileSync } from 'node:fs';
import type { CodeScanType, Finding, ScanOutput, Severity } from '../scanners/types.ts';
import { baselineFingerprints, renderJson, renderJunit, renderSarif, renderText, SEVERITY_RANK, sortFindings, type ScanReport } from '../scanners/report/index.ts';
import type { ScanPolicy } from '../scanners/web/policy.ts';
import { colourEnabled } from '../reconciler/cli/colour.ts';
import { readPolicy, withoutIgnored } from './scan-policy.ts';
import { errorMessage } from '../schemas/json-value.ts';

export const CODE_SCAN_TYPES = ['secrets', 'sast', 'sca'] as const;
export const URL_SCAN_TYPES = ['dast', 'api', 'cve'] as const;
export const SCAN_TYPES = [...CODE_SCAN_TYPES, ...URL_SCAN_TYPES] as const;
export const SCAN_FORMATS = ['text', 'json', 'sarif', 'junit'] as const;
export const FAIL_ON = ['critical', 'high', 'medium', 'low', 'none'] as const;
export type Format = (typeof SCAN_FORMATS)[number];
export type FailOn = (typeof FAIL_ON)[number];

export interface ScanCommandOptions {
  format?: string;
  output?: string;
  failOn?: string;
  baseline?: string;
  policy?: string;
  diffBase?: string;
  quiet?: boolean;
  local?: boolean;
  advisories?: string;
  // URL scans (dast, api, cve): ./scan-url.ts.
  openapi?: string;
  cve?: string[];
  tag?: string[];
  maxDepth?: string;
  maxRequests?: string;
  requestsPerSecond?: string;
  header?: string[];
}

/** Options only URL scans take, as they are spelt on the command line. */
export const URL_ONLY_OPTIONS: ReadonlyArray<[key: keyof ScanCommandOptions, flag: string]> = [
  ['openapi', '--openapi'],
  ['cve', '--cve'],
  ['tag', '--tag'],
  ['maxDepth', '--max-depth'],
  ['maxRequests', '--max-requests'],
  ['requestsPerSecond', '--requests-per-second'],
  ['header', '--header'],
];

/** A problem to report with exit status 2 (usage or scan error). */
export class ScanError extends Error {
  override name = 'ScanError';
}

const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
const POLL_MS = 1_000;
const UPLOAD_SKIP_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export function toolVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export const oneOf = <T extends string>(values: readonly T[], value: string, what: string): T => {
  if ((values as readonly string[]).includes(value)) return value as T;
  throw new ScanError(`${what} must be one of ${values.join(', ')} (got ${JSON.stringify(value)})`);
};

export interface ScanIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stderrIsTty: boolean;
}

export const processIo = (): ScanIo => ({
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  stderrIsTty: process.stderr.isTTY === true,
});

export async function scanCommand(type: string, path: string | undefined, options: ScanCommandOptions, env: NodeJS.ProcessEnv = process.env, io: ScanIo = processIo()): Promise<number> {
  try {
    return await runScanCommand(type, path, options, env, io);
  } catch (err) {
    io.stderr(`aegis scan: ${errorMessage(err)}\n`);
    return 2;
  }
}

/** A way to scan a directory: in this process, or through the API. */
type Scanner = (dir: string, label: string) => Promise<ScanOutput>;

async function runScanCommand(typeArg: string, pathArg: string | undefined, options: ScanCommandOptions, env: NodeJS.ProcessEnv, io: ScanIo): Promise<number> {
  const anyType = oneOf(SCAN_TYPES, typeArg, 'the scan type');
  if ((URL_SCAN_TYPES as readonly string[]).includes(anyType)) {
    return (await import('./scan-url.ts')).runUrlScanCommand(anyType as (typeof URL_SCAN_TYPES)[number], pathArg, options, env, io);
  }
  const scanType = anyType as CodeScanType;
  const path = pathArg ?? '.';
  const format: Format = oneOf(SCAN_FORMATS, options.format ?? 'text', '--format');
  const failOn: FailOn = oneOf(FAIL_ON, options.failOn ?? 'high', '--fail-on');
  for (const [key, flag] of URL_ONLY_OPTIONS) if (options[key] !== undefined) throw new ScanError(`${flag} applies to URL scans (dast, api, cve) only`);
  const root = resolve(path);
  const st = await stat(root).catch(() => undefined);
  if (!st?.isDirectory()) throw new ScanError(`${path} is not a directory`);

  const server = !options.local && Boolean(env.AEGIS_API_URL);
  if (server && !env.AEGIS_API_KEY) throw new ScanError('AEGIS_API_URL is set but AEGIS_API_KEY is not (set it, or scan in this process with --local)');
  if (server && options.advisories) io.stderr('aegis scan: --advisories applies to local scans only; the server uses its imported advisories\n');
  const progress = !options.quiet && io.stderrIsTty;
  const scanner: Scanner = server
    ? serverScanner(scanType, env.AEGIS_API_URL!, env.AEGIS_API_KEY!, io, progress)
    : await localScanner(scanType, options, io, progress);

  // Read the baseline and the policy first: a bad file should fail before a long scan.
  const baseline = options.baseline ? await readBaseline(options.baseline) : undefined;
  const policy = await policyOption(options);
  const output = await scanner(root, path);
  let findings = withoutIgnored(output.findings, policy);
  let diffSuppressed = 0;
  if (options.diffBase !== undefined) {
    const before = await withRefExport(root, options.diffBase, (dir) => scanner(dir, `${path} at ${options.diffBase}`));
    const known = new Set(before.findings.map((f) => f.fingerprint));
    const kept = findings.filter((f) => !known.has(f.fingerprint));
    diffSuppressed = findings.length - kept.length;
    findings = kept;
  }
  const afterBaseline = withoutBaseline(findings, baseline);
  findings = afterBaseline.findings;
  const report: ScanReport = {
    scanType,
    tool: { name: 'aegis', version: toolVersion(), informationUri: 'https://github.com/aegis-security/aegis' },
    target: path,
    findings: sortFindings(dedupe(findings)),
    suppressed: { baseline: afterBaseline.suppressed, diff_base: diffSuppressed },
    coverage: output.coverage,
    generatedAt: new Date().toISOString(),
  };
  return emitReport(report, format, options, io, failOn, policy);
}

/** Writes the report in its format to --output (with a one-line summary on stderr) or stdout; the exit status. */
export async function emitReport(report: ScanReport, format: Format, options: ScanCommandOptions, io: ScanIo, failOn: FailOn, policy?: ScanPolicy): Promise<number> {
  const toFile = options.output !== undefined;
  const rendered =
    format === 'json'
      ? renderJson(report)
      : format === 'sarif'
        ? renderSarif(report)
        : format === 'junit'
          ? renderJunit(report)
          : renderText(report, { quiet: options.quiet === true, colour: !toFile && colourEnabled(process.stdout) });
  if (toFile) {
    await writeFile(options.output!, rendered);
    const code = (CODE_SCAN_TYPES as readonly string[]).includes(report.scanType);
    const suppressed = `${report.suppressed.baseline} in baseline${code ? `, ${report.suppressed.diff_base} already at diff base` : ''}`;
    if (!options.quiet) io.stderr(`aegis scan ${report.scanType}: ${report.findings.length} finding(s) reported (${suppressed}); ${format} written to ${options.output}\n`);
  } else io.stdout(rendered);
  return exitFor(report.findings, failOn, policy);
}

/** 1 when a reported finding fails the run, else 0: the policy's mark for its rule, else --fail-on. */
export function exitFor(findings: readonly Pick<Finding, 'severity' | 'rule_id'>[], failOn: FailOn, policy?: ScanPolicy): number {
  const threshold = failOn === 'none' ? Infinity : SEVERITY_RANK[failOn as Severity];
  const fails = (f: Pick<Finding, 'severity' | 'rule_id'>): boolean => {
    const mark = policy?.[f.rule_id];
    return mark === undefined ? SEVERITY_RANK[f.severity] >= threshold : mark === 'fail';
  };
  return findings.some(fails) ? 1 : 0;
}

/** --policy FILE, read and checked (a usage error names the file). */
export async function policyOption(options: ScanCommandOptions): Promise<ScanPolicy | undefined> {
  if (options.policy === undefined) return undefined;
  try {
    return await readPolicy(options.policy);
  } catch (err) {
    throw new ScanError(`--policy ${options.policy}: ${errorMessage(err)}`);
  }
}

function dedupe(findings: readonly Finding[]): Finding[] {
  const seen = new Map<string, Finding>();
  for (const f of findings) if (!seen.has(f.fingerprint)) seen.set(f.fingerprint, f);
  return [...seen.values()];
}

/** The findings whose fingerprint the --baseline file does not hold, and how many it held. */
export function withoutBaseline<F extends { fingerprint: string }>(findings: readonly F[], baseline: ReadonlySet<string> | undefined): { findings: F[]; suppressed: number } {
  if (!baseline) return { findings: [...findings], suppressed: 0 };
  const kept = findings.filter((f) => !baseline.has(f.fingerprint));
  return { findings: kept, suppressed: findings.length - kept.length };
}

export async function readBaseline(file: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ScanError(`--baseline ${file}: ${errorMessage(err)}`);
  }
  try {
    return baselineFingerprints(text);
  } catch (err) {
    throw new ScanError(`--baseline ${file}: ${errorMessage(err)}`);
  }
}

// ---------------------------------------------------------------- local mode

export function progressReporter(io: ScanIo, enabled: boolean, label: string): ((fraction: number) => void) | undefined {
  if (!enabled) return undefined;
  return (fraction) => io.stderr(`\r\u001b[2Kscanning ${label}: ${Math.round(fraction * 100)}%`);
}

async function localScanner(scanType: CodeScanType, options: ScanCommandOptions, io: ScanIo, progress: boolean): Promise<Scanner> {
  const signal = new AbortController().signal;
  const done = (label: string): void => {
    if (progress) io.stderr(`\r\u001b[2Kscanned ${label}\n`);
  };
  if (scanType === 'secrets') {
    const { scanSecrets } = await import('../scanners/secrets/index.ts');
    return async (root, label) => {
      const out = await scanSecrets({ root, signal, onProgress: progressReporter(io, progress, label) });
      done(label);
      return out;
    };
  }
  if (scanType === 'sast') {
    const { scanSast } = await import('../scanners/sast/scan.ts');
    return async (root, label) => {
      const out = await scanSast({ root, signal, onProgress: progressReporter(io, progress, label) });
      done(label);
      return out;
    };
  }
  if (!options.advisories) {
    throw new ScanError('no advisories given: a local SCA scan needs --advisories DIR|ZIP (OSV records, e.g. https://osv-vulnerabilities.storage.googleapis.com/npm/all.zip), or AEGIS_API_URL to scan on a server');
  }
  const { loadOsvDirectory, loadOsvZip, MemoryAdvisorySource } = await import('../scanners/sca/advisory-source.ts');
  const { scanSca } = await import('../scanners/sca/scan.ts');
  const where = options.advisories;
  const info = await stat(where).catch(() => undefined);
  if (!info) throw new ScanError(`--advisories ${where}: no such file or directory`);
  const loaded = info.isDirectory() ? await loadOsvDirectory(where) : await loadOsvZip(where);
  if (!options.quiet) for (const problem of loaded.errors) io.stderr(`aegis scan: advisories: skipped ${problem.file}: ${problem.message}\n`);
  if (loaded.records.length === 0) throw new ScanError(`--advisories ${where}: no OSV advisories found`);
  const source = new MemoryAdvisorySource(loaded.records);
  return async (root, label) => {
    const out = await scanSca({ root, signal, onProgress: progressReporter(io, progress, label) }, source);
    done(label);
    return out;
  };
}

// ---------------------------------------------------------------- --diff-base

function git(args: string[], cwd: string): Promise<string> {
  return new Promise((done, fail) => {
    execFile('git', args, { cwd, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) fail(new ScanError(`git ${args[0]}: ${(stderr || error.message).trim()}`));
      else done(stdout);
    });
  });
}

/** Runs `fn` on an export of git REF (the same subdirectory as `root`), in a temporary directory. */
async function withRefExport<T>(root: string, ref: string, fn: (dir: string) => Promise<T>): Promise<T> {
  if (ref === '' || ref.startsWith('-')) throw new ScanError(`--diff-base ${JSON.stringify(ref)} is not a git ref`);
  const top = (await git(['rev-parse', '--show-toplevel'], root).catch(() => {
    throw new ScanError(`--diff-base needs ${root} to be inside a git repository`);
  })).trim();
  const commit = (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], top).catch(() => {
    throw new ScanError(`--diff-base ${ref}: no such commit in ${top}`);
  })).trim();
  const sub = relative(await realpath(top), await realpath(root));
  const tmp = await mkdtemp(join(tmpdir(), 'aegis-diff-base-'));
  try {
    const tar = join(tmp, 'base.tar');
    const tree = join(tmp, 'tree');
    await git(['archive', '--format=tar', '-o', tar, commit, '--', ...(sub ? [sub.split(sep).join('/')] : [])], top);
    const { extractArchive } = await import('../api/scans/sources/archive.ts');
    await extractArchive(await readFile(tar), 'tar', tree);
    await rm(tar);
    const dir = sub ? join(tree, sub) : tree;
    // A subdirectory that did not exist at REF: nothing was there, every finding is new.
    if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
      const { mkdir } = await import('node:fs/promises');
      await mkdir(dir, { recursive: true });
    }
    return await fn(dir);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- server mode

export interface ApiScan {
  id: string;
  status: string;
  progress: number;
  error: string | null;
}
interface ApiVulnerability {
  id: string;
  rule_id: string;
  title: string;
  severity: Severity;
  cwe: string | null;
  location: unknown;
  evidence: string;
  details: Record<string, unknown>;
}

/** A call to the API; a non-2xx answer is a ScanError. `body`: raw bytes with their type, or JSON. */
export type ApiCall = (method: string, path: string, body?: { type: string; data: Buffer } | { json: unknown }) => Promise<unknown>;

export function apiClient(baseUrl: string, apiKey: string): ApiCall {
  return async (method, path, body) => {
    const payload = body === undefined ? undefined : 'json' in body ? { type: 'application/json', data: Buffer.from(JSON.stringify(body.json)) } : body;
    const res = await fetch(new URL(path, baseUrl), {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(payload ? { 'content-type': payload.type } : {}) },
      ...(payload ? { body: new Uint8Array(payload.data) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new ScanError(`${method} ${path}: the API answered ${res.status}: ${text.slice(0, 500)}`);
    return text ? (JSON.parse(text) as unknown) : null;
  };
}

/**
 * Polls a scan the API has queued until it ends, then reads its findings back (every page of
 * GET /vulnerabilities?scan_id=) with their fingerprints from GET /scans/:id/sarif (code and URL
 * scans alike: the scanner's fingerprints, as a local scan gives them), and its coverage.
 */
export async function awaitServerScan(api: ApiCall, started: ApiScan, label: string, io: ScanIo, progress: boolean): Promise<{ scan: ApiScan; findings: Finding<unknown>[]; coverage: Record<string, unknown> | null }> {
  let scan = started;
  while (scan.status === 'queued' || scan.status === 'running') {
    if (progress) io.stderr(`\r\u001b[2Kscanning ${label} on the server (${scan.id}): ${scan.status} ${Math.round(scan.progress * 100)}%`);
    await new Promise((r) => setTimeout(r, POLL_MS));
    scan = (await api('GET', `/api/v1/scans/${encodeURIComponent(scan.id)}`)) as ApiScan;
  }
  if (progress) io.stderr(`\r\u001b[2Kscan ${scan.id} ${scan.status}\n`);
  if (scan.status !== 'completed') throw new ScanError(`scan ${scan.id} ${scan.status}${scan.error ? `: ${scan.error}` : ''}`);
  // Fingerprints come with the SARIF log (the vulnerability resource does not carry them).
  const sarifPath = `/api/v1/scans/${encodeURIComponent(scan.id)}/sarif`;
  const sarif = (await api('GET', sarifPath)) as {
    runs: { results: { partialFingerprints?: Record<string, string>; properties?: Record<string, unknown> }[] }[];
  } | null;
  const fingerprints = new Map<string, string>();
  for (const r of sarif?.runs[0]?.results ?? []) {
    const id = r.properties?.['aegis/vulnerability_id'];
    const fp = r.partialFingerprints?.primaryLocationLineHash;
    if (typeof id === 'string' && typeof fp === 'string') fingerprints.set(id, fp);
  }
  const findings: Finding<unknown>[] = [];
  let cursor: string | null = null;
  do {
    const page = (await api('GET', `/api/v1/vulnerabilities?scan_id=${encodeURIComponent(scan.id)}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as {
      data: ApiVulnerability[];
      pagination: { next: string | null };
    };
    for (const v of page.data) {
      findings.push({ rule_id: v.rule_id, title: v.title, severity: v.severity, cwe: v.cwe, location: v.location, evidence: v.evidence, details: v.details, fingerprint: fingerprints.get(v.id) ?? v.id });
    }
    cursor = page.pagination.next;
  } while (cursor);
  const coverage = (await api('GET', `/api/v1/scans/${encodeURIComponent(scan.id)}/coverage`).catch(() => null)) as Record<string, unknown> | null;
  return { scan, findings, coverage };
}

function serverScanner(scanType: CodeScanType, baseUrl: string, apiKey: string, io: ScanIo, progress: boolean): Scanner {
  const api = apiClient(baseUrl, apiKey);
  return async (root, label) => {
    const { zipDirectory } = await import('./zip-writer.ts');
    const archive = await zipDirectory(root, { skipDirs: UPLOAD_SKIP_DIRS, maxBytes: MAX_UPLOAD_BYTES });
    const started = (await api('POST', `/api/v1/${scanType}/scans`, { type: 'application/zip', data: archive })) as ApiScan;
    const { findings, coverage } = await awaitServerScan(api, started, label, io, progress);
    const files = coverage as ScanOutput['coverage'] | null;
    return { findings: findings as Finding[], coverage: files && typeof files.files_scanned === 'number' ? files : { files_scanned: 0, bytes_scanned: 0, skipped: [] } };
  };
}
