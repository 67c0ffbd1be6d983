// Runs a URL scan (the `scan` job hands scans with a `url` source here): builds the guarded HTTP
// client from the stored source, calls the scanner of the scan's type, and applies the scan policy
// to what it found. Also re-runs one finding's check for verify-fix, with the client of the scan
// that found it.
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import { PermanentJobError } from '../../../platform/jobs/types.ts';
import type { ScanRow } from '../store.ts';
import { parseApiDocument, recheckApi, scanApi } from '../../../scanners/api-scan/scan.ts';
import { CveSelectionError, recheckCve, scanCve } from '../../../scanners/cve/scan.ts';
import { recheckDast, scanDast } from '../../../scanners/dast/scan.ts';
import { policyMark, type ScanPolicy } from '../../../scanners/web/policy.ts';
import { RefusedTargetError, ScanHttp } from '../../../scanners/web/http.ts';
import type { Recheck, WebFinding, WebScanContext, WebScanOutput } from '../../../scanners/web/types.ts';
import { isUrlSource, scanHttpFor, urlTarget, type UrlSource } from './source.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export interface UrlScanOptions {
  db: Db;
  secretBox: SecretBox;
  allowPrivateTargets: boolean;
}

interface UrlScanConfig {
  max_depth?: number;
  policy?: ScanPolicy;
  cves?: string[];
  tags?: string[];
  document_url?: string;
}

/**
 * Drops findings of ignored rules and marks the rest warn or fail — for the scanners that do not
 * mark their findings themselves (DAST does, with the same policyMark).
 */
export function applyPolicy(findings: WebFinding[], policy: ScanPolicy = {}): WebFinding[] {
  return findings
    .map((f) => ({ finding: f, mark: f.details.policy ?? policyMark(f.rule_id, f.severity, policy) }))
    .filter(({ mark }) => mark !== 'ignore')
    .map(({ finding, mark }) => (finding.details.policy === mark ? finding : { ...finding, details: { ...finding.details, policy: mark } }));
}

/** The OpenAPI document of an API scan: uploaded with it, or fetched from its URL under the same address policy. */
async function apiDocument(db: Db, scan: ScanRow, config: UrlScanConfig, options: UrlScanOptions, signal: AbortSignal): Promise<unknown> {
  let text: string;
  if (config.document_url) {
    const { parsed } = urlTarget(config.document_url, 'document_url');
    const http = new ScanHttp({ scope: { hosts: [parsed.host], pathPrefixes: [parsed.pathname] }, limits: { maxRequests: 1, maxBodyBytes: 5 * 1024 * 1024 }, allowPrivate: options.allowPrivateTargets, signal });
    try {
      const res = await http.send({ method: 'GET', url: config.document_url, headers: { accept: 'application/json, application/yaml, text/yaml, */*' } });
      if (res.status !== 200) throw new PermanentJobError(`fetching the OpenAPI document answered ${res.status}`);
      if (res.truncated) throw new PermanentJobError('the OpenAPI document is larger than 5 MiB');
      text = res.body;
    } finally {
      await http.close();
    }
  } else {
    const row = await db.selectFrom('scan_archives').select('content').where('scan_id', '=', scan.id).executeTakeFirst();
    if (!row) throw new PermanentJobError('the uploaded OpenAPI document is no longer stored');
    text = Buffer.from(row.content).toString('utf8');
  }
  try {
    return await parseApiDocument(text);
  } catch (err) {
    throw new PermanentJobError(`the OpenAPI document is invalid: ${errorMessage(err)}`);
  }
}

function sourceOf(scan: Pick<ScanRow, 'source'>): UrlSource {
  if (!isUrlSource(scan.source)) throw new PermanentJobError('not a URL scan');
  return scan.source;
}

async function withHttp<T>(scan: Pick<ScanRow, 'source' | 'target'>, options: UrlScanOptions, signal: AbortSignal, run: (ctx: WebScanContext) => Promise<T>, onProgress?: (f: number) => void): Promise<T> {
  const http = scanHttpFor(sourceOf(scan), scan.target, { box: options.secretBox, allowPrivateTargets: options.allowPrivateTargets, signal });
  try {
    return await run({ http, signal, ...(onProgress ? { onProgress } : {}) });
  } catch (err) {
    // A target on a refused address stays refused: retrying the job cannot help.
    if (err instanceof RefusedTargetError) throw new PermanentJobError(err.message);
    throw err;
  } finally {
    await http.close();
  }
}

export async function runUrlScan(scan: ScanRow, options: UrlScanOptions, signal: AbortSignal, onProgress: (f: number) => void): Promise<WebScanOutput> {
  const source = sourceOf(scan);
  const config = scan.config as UrlScanConfig;
  const document = scan.scan_type === 'api' ? await apiDocument(options.db, scan, config, options, signal) : undefined;
  const output = await withHttp(
    scan,
    options,
    signal,
    (ctx) => {
      switch (scan.scan_type) {
        case 'dast':
          return scanDast({ target: source.url, maxDepth: config.max_depth ?? 3, ...(config.policy ? { policy: config.policy } : {}) }, ctx);
        case 'api':
          return scanApi({ document, baseUrl: source.url, ...(config.policy ? { policy: config.policy } : {}) }, ctx);
        case 'cve':
          // The bundled library may have changed since the scan was asked for: nothing left to run is final.
          return scanCve({ target: source.url, ...(config.cves ? { cves: config.cves } : {}), ...(config.tags ? { tags: config.tags } : {}) }, ctx).catch((err: unknown) => {
            throw err instanceof CveSelectionError ? new PermanentJobError(err.message) : err;
          });
        default:
          throw new PermanentJobError(`scan type ${scan.scan_type} is not a URL scan`);
      }
    },
    onProgress,
  );
  return { ...output, findings: applyPolicy(output.findings, config.policy) };
}

/** Re-runs the check behind one finding of a URL scan (verify-fix), through that scan's client. */
export async function recheckUrlFinding(scan: Pick<ScanRow, 'scan_type' | 'source' | 'target'>, check: Record<string, unknown>, options: UrlScanOptions, signal: AbortSignal): Promise<Recheck> {
  return withHttp(scan, options, signal, (ctx) => {
    switch (scan.scan_type) {
      case 'dast':
        return recheckDast(check, ctx);
      case 'api':
        return recheckApi(check, ctx);
      case 'cve':
        return recheckCve(check, ctx);
      default:
        throw new PermanentJobError(`scan type ${scan.scan_type} is not a URL scan`);
    }
  });
}
