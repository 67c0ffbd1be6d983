// The `scan` job: fetch the source into a private workspace, run the scanner (SAST and secrets in
// a worker thread, SCA here: it mostly waits on advisory lookups; URL scans send their requests
// from here through api/scans/url, without a workspace), then store the findings and end
// the scan in one transaction that commits only while this attempt still holds the job's lease —
// a scan retried elsewhere after a lost lease is never recorded twice.
//
// Failures are retried by the queue (a network blip while cloning); the scan is marked failed when
// the last attempt fails, or at once for an error retrying cannot fix. Cancellation (DELETE
// /scans/:id) marks the scan canceled and aborts the job's signal, which stops git and the thread.
import type { Db } from '../../platform/db/database.ts';
import { runInThread, ThreadPool } from '../../platform/jobs/thread-runner.ts';
import { PermanentJobError, type Job, type JobContext, type JobKindDefinition } from '../../platform/jobs/types.ts';
import { DbAdvisoryStore } from '../advisories/store.ts';
import { scanSca } from '../../scanners/sca/scan.ts';
import type { ScanOutput } from '../../scanners/types.ts';
import { extractArchive, type ArchiveKind } from './sources/archive.ts';
import { cloneRepository, RefusedCloneError } from '../../platform/git/clone.ts';
import { tenantPolicy, type OutboundPolicy } from '../../platform/net/outbound.ts';
import { withWorkspace } from '../../platform/git/workspace.ts';
import { recordFindings } from './record-findings.ts';
import { announceDeliveries, recordEvents, type NewEvent } from '../../platform/events/event-store.ts';
import { runUrlScan } from './url/run.ts';
import { isUrlSource } from './url/source.ts';
import type { CodeScanInput } from './scan-thread.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { cloneUrlOf, finishScan, getScanById, markRunning, setProgress, toScan, type ScanJobPayload, type ScanRow } from './store.ts';

import { CloneConnectionError, type CloneAccess } from '../integrations/connections/clone-access.ts';
import { ProviderAuthError } from '../integrations/providers/errors.ts';
import { IntegrationUnavailableError } from '../integrations/connections/sessions.ts';
import { errorMessage } from '../../schemas/json-value.ts';

const SCAN_THREAD = new URL('./scan-thread.ts', import.meta.url);
const PROGRESS_WRITE_MS = 1_000;

export interface ScanJobOptions {
  db: Db;
  allowLocalSources: boolean;
  /** URL scans may reach private addresses (AEGIS_ALLOW_PRIVATE_TARGETS). */
  allowPrivateTargets: boolean;
  /** What clones connect under (api/outbound-policy.ts); default: the tenant rule of allowPrivateTargets. */
  outbound?: OutboundPolicy;
  /** Opens the sealed clone URL of a repository that needs credentials. */
  secretBox: SecretBox;
  cloneTimeoutMs?: number;
  /** Load the scanners in a scan thread now rather than at the first scan. */
  warmThreads?: boolean;
  /** Clones through a source-control connection (scans that name one). */
  cloneAccess?: CloneAccess;
}

interface GitSource {
  kind: 'git';
  url: string;
  ref: string | null;
  /** A source-control connection whose token clones the repository. */
  connection?: string;
}
interface ArchiveSource {
  kind: 'archive';
  format: ArchiveKind;
}

export async function fetchSource(db: Db, scan: ScanRow, dir: string, options: ScanJobOptions, signal: AbortSignal): Promise<Record<string, unknown>> {
  const source = scan.source as unknown as GitSource | ArchiveSource;
  if (source.kind === 'archive') {
    const row = await db.selectFrom('scan_archives').select('content').where('scan_id', '=', scan.id).executeTakeFirst();
    if (!row) throw new PermanentJobError('the uploaded archive is no longer stored');
    const extracted = await extractArchive(Buffer.from(row.content), source.format, dir);
    return { archive_files: extracted.files, archive_skipped: extracted.skipped };
  }
  const history = scan.scan_type === 'secrets' && scan.config.history === true;
  try {
    const cloned = await cloneRepository(
      { kind: 'git', url: await cloneUrl(scan, source, options), ref: source.ref, target: scan.target },
      dir,
      { signal, timeoutMs: options.cloneTimeoutMs ?? 300_000, depth: history ? null : 1, allowLocal: options.allowLocalSources, outbound: options.outbound ?? tenantPolicy({ allowPrivateTargets: options.allowPrivateTargets }) },
    );
    return { commit: cloned.commit };
  } catch (err) {
    // The outbound policy refused a connection (a private address, a redirect or DNS answer leading
    // to one): the same refusal on every attempt.
    if (err instanceof RefusedCloneError) throw new PermanentJobError(err.message);
    throw err;
  }
}

async function cloneUrl(scan: ScanRow, source: GitSource, options: ScanJobOptions): Promise<string> {
  if (source.connection === undefined) return cloneUrlOf(scan, options.secretBox);
  if (!options.cloneAccess) throw new PermanentJobError('this worker cannot clone through connections');
  try {
    return await options.cloneAccess.authenticatedUrl(scan.org_id, source.connection, source.url);
  } catch (err) {
    // A deleted, broken or refused connection will not mend by retrying; a provider that is down might.
    if (err instanceof CloneConnectionError || err instanceof ProviderAuthError || err instanceof IntegrationUnavailableError) throw new PermanentJobError(`cannot clone through connection ${source.connection}: ${err.message}`);
    throw err;
  }
}

/** Runs a code scan's scanner: SCA here, SAST and secrets in a scan thread (of `threads` when given: warm ones). */
export async function runScanner(db: Db, scan: ScanRow, root: string, signal: AbortSignal, progress: (f: number) => void, threads?: ThreadPool): Promise<ScanOutput> {
  if (scan.scan_type === 'sca') return scanSca({ root, signal, onProgress: progress }, new DbAdvisoryStore(db));
  if (scan.scan_type !== 'sast' && scan.scan_type !== 'secrets') throw new PermanentJobError(`scan type ${scan.scan_type} is not a code scan`);
  const input: CodeScanInput = { scanType: scan.scan_type, root, history: scan.config.history === true };
  if (threads) return threads.run<ScanOutput>('runCodeScan', input, { signal, onProgress: progress });
  return runInThread<ScanOutput, CodeScanInput>({ module: SCAN_THREAD, exportName: 'runCodeScan', input, signal, onProgress: progress });
}

/** `scan.started`, `scan.completed` or `scan.failed` for the scan as it now is. */
const scanEvent = (type: 'scan.started' | 'scan.completed' | 'scan.failed', row: ScanRow): NewEvent => ({ orgId: row.org_id, type, object: toScan(row) });

/** Ends the scan as failed, with its event, in one transaction. */
async function failScan(db: Db, id: string, error: string): Promise<void> {
  const deliveries = await db.transaction().execute(async (trx) => {
    const row = await finishScan(trx, id, { status: 'failed', error });
    return row ? (await recordEvents(trx, [scanEvent('scan.failed', row)])).deliveries : 0;
  });
  announceDeliveries(db, deliveries);
}

export function scanJobKind(options: ScanJobOptions): JobKindDefinition<ScanJobPayload, { scan_id: string; findings: number } | null> {
  const { db } = options;
  // Scan threads are kept between scans: starting one and loading the scanners costs more than
  // scanning a small repository.
  const threads = new ThreadPool(SCAN_THREAD, { idleMs: 60_000 });
  if (options.warmThreads) threads.warm('warmUp');
  return {
    concurrency: 2,
    async run(job: Job<ScanJobPayload>, ctx: JobContext) {
      // The scheduler's default runner enqueues schedule payloads; scans come only through createScan.
      if (typeof job.payload.scan_id !== 'string') throw new PermanentJobError('a scan job needs a scan_id: start scans through createScan');
      const scan = await getScanById(db, job.payload.scan_id);
      if (!scan) return null;
      const start = await db.transaction().execute(async (trx) => {
        const running = await markRunning(trx, scan.id);
        const deliveries = running?.first ? (await recordEvents(trx, [scanEvent('scan.started', running.row)])).deliveries : 0;
        return { running: running !== undefined, deliveries };
      });
      announceDeliveries(db, start.deliveries);
      if (!start.running) return null; // deleted or canceled before it started
      let lastWrite = 0;
      const progress = (fraction: number) => {
        ctx.progress(fraction);
        const now = Date.now();
        if (now - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = now;
        setProgress(db, scan.id, Math.min(0.99, fraction)).catch((err: unknown) => ctx.log.warn({ err, scan_id: scan.id }, 'scan: progress not saved'));
      };
      try {
        const { output, fetched } = isUrlSource(scan.source)
          ? { output: await runUrlScan(scan, { db, secretBox: options.secretBox, allowPrivateTargets: options.allowPrivateTargets }, ctx.signal, progress), fetched: {} }
          : await withWorkspace(async (dir) => {
              const fetched = await fetchSource(db, scan, dir, options, ctx.signal);
              return { fetched, output: await runScanner(db, scan, dir, ctx.signal, progress, threads) };
            });
        const failedPolicy = output.findings.filter((f) => f.details.policy === 'fail').length;
        const recorded = await ctx.completeWith(async (trx) => {
          const recorded = await recordFindings(trx, scan, output.findings);
          const summary = { ...recorded.summary, new: recorded.created, fixed: recorded.fixed, ...(isUrlSource(scan.source) ? { failed_policy: failedPolicy } : {}) };
          const finished = await finishScan(trx, scan.id, { status: 'completed', summary, coverage: { ...output.coverage, ...fetched } });
          // Findings first, then the scan that found them: receivers see them in that order where order holds.
          return recordEvents(trx, [...recorded.events, ...(finished ? [scanEvent('scan.completed', finished)] : [])]);
        });
        announceDeliveries(db, recorded.deliveries);
        return { scan_id: scan.id, findings: output.findings.length };
      } catch (err) {
        if (ctx.signal.aborted) throw err; // canceled (the scan is already marked) or lease lost / shutdown (retried)
        const last = err instanceof PermanentJobError || job.attempts >= job.max_attempts;
        if (last) {
          await failScan(db, scan.id, errorMessage(err));
        }
        throw err;
      }
    },
  };
}

/**
 * Scans whose job ended without them (a worker that died on the last attempt leaves the job dead
 * and the scan running): marked failed. Run from housekeeping.
 */
export async function failOrphanedScans(db: Db): Promise<number> {
  const failed = await db.transaction().execute(async (trx) => {
    const rows = await trx
      .updateTable('scans')
      .set({ status: 'failed', error: 'the scan job ended without finishing the scan (worker lost)', finished_at: new Date() })
      .where('status', 'in', ['queued', 'running'])
      .where('job_id', 'in', (eb) => eb.selectFrom('jobs').select('id').where('state', 'in', ['dead', 'failed', 'canceled']))
      .returningAll()
      .execute();
    const recorded = await recordEvents(trx, rows.map((row) => scanEvent('scan.failed', row)));
    return { count: rows.length, deliveries: recorded.deliveries };
  });
  announceDeliveries(db, failed.deliveries);
  return failed.count;
}
