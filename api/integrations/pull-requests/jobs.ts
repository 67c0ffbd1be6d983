// The `pull_request.check` job: reports "Aegis: scanning" on the head commit at once, clones and
// scans head and base, then completes the check with the head's new findings and posts (or edits)
// the one summary comment of the pull request.
//
// A newer head may arrive while a job runs. Every write to the row names the head it is for
// (`where head_sha = …`), so an older job never overwrites the newer head's row, and before each
// post to the provider the job looks again: a superseded job closes its own check run as neutral
// ("superseded") rather than posting a conclusion about code no longer under review, and leaves the
// comment to the newer head's job.
//
// Provider failures: a rate limit waits as long as the provider asks (RetryLaterError); an outage is
// retried with the queue's backoff; a refused credential or request cannot get better by retrying,
// so the row ends `failed` with the reason (a refused credential also puts the connection in
// `error`, in withProviderSession).
import type { Db } from '../../../platform/db/database.ts';
import type { IntegrationRow, PullRequestCheckRow } from '../../../platform/db/schema.ts';
import { ThreadPool } from '../../../platform/jobs/thread-runner.ts';
import { PermanentJobError, RetryLaterError, type Job, type JobContext, type JobHandlers, type JobKindDefinition } from '../../../platform/jobs/types.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError } from '../providers/errors.ts';
import type { CheckInput, ProviderSession, PullRequestRef, SourceControlClient } from '../providers/types.ts';
import { IntegrationUnavailableError, withProviderSession, type IntegrationDeps } from '../connections/sessions.ts';
import { PULL_REQUEST_JOB_KIND, pullRequestSettings, type PullRequestJobPayload } from './events.ts';
import { checkOf, commentOf, compareFindings, IN_PROGRESS_CHECK, summaryOf } from './report.ts';
import { SCAN_THREAD, scanHeadAndBase } from './scan.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import { RefusedCloneError } from '../../../platform/git/clone.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export interface PullRequestJobDeps extends IntegrationDeps {
  publicUrl: () => string;
  allowLocalSources: boolean;
  /** What clones connect under (api/outbound-policy.ts); default: the tenant rule, private targets refused. */
  outbound?: OutboundPolicy;
  cloneTimeoutMs?: number;
  /** Start a scan thread and compile the rules now rather than at the first check (AEGIS_WARM_SCAN_THREADS). */
  warmThreads?: boolean;
}

/** Pull requests one worker checks at once: each scans two trees, in up to two threads. */
const CONCURRENCY = 2;
const SUPERSEDED: CheckInput = { name: IN_PROGRESS_CHECK.name, status: 'completed', conclusion: 'neutral', title: 'Superseded by a newer commit', summary: 'A newer commit was pushed to this pull request; Aegis checks that one instead.', annotations: [] };

/** Time spent per phase, in ms, kept in the row's summary (and logged): where a check's time goes. */
interface Timings {
  provider_ms: number;
  clone_ms: number;
  scan_ms: number;
  total_ms: number;
}

async function loadRow(db: Db, id: string): Promise<PullRequestCheckRow | undefined> {
  return db.selectFrom('pull_request_checks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Still this head's row? (A push meanwhile moved it on.) */
async function isCurrent(db: Db, id: string, headSha: string): Promise<boolean> {
  const row = await db.selectFrom('pull_request_checks').select('head_sha').where('id', '=', id).executeTakeFirst();
  return row?.head_sha === headSha;
}

type RowChange = Partial<Pick<PullRequestCheckRow, 'status' | 'conclusion' | 'check_id' | 'comment_id' | 'error'>> & { summary?: Record<string, unknown> };

/** Updates the row only while it is still about `headSha`; returns whether it was. */
async function updateRow(db: Db, id: string, headSha: string, change: RowChange): Promise<boolean> {
  const { summary, ...rest } = change;
  const result = await db
    .updateTable('pull_request_checks')
    .set({ ...rest, ...(summary ? { summary: JSON.stringify(summary) } : {}), updated_at: new Date() })
    .where('id', '=', id)
    .where('head_sha', '=', headSha)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}


/** A provider client call, timed into `timings.provider_ms`. */
function timed<T>(timings: Timings, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  return call().finally(() => {
    timings.provider_ms += performance.now() - started;
  });
}

interface RunDeps extends PullRequestJobDeps {
  threads: ThreadPool;
}

async function runCheck(deps: RunDeps, job: Job<PullRequestJobPayload>, ctx: JobContext, integration: IntegrationRow, row: PullRequestCheckRow): Promise<Record<string, unknown>> {
  const { event } = job.payload;
  const settings = pullRequestSettings(integration);
  const started = performance.now();
  const timings: Timings = { provider_ms: 0, clone_ms: 0, scan_ms: 0, total_ms: 0 };
  const pr: PullRequestRef = { repository: event.projectId ?? event.repository, number: event.number, headSha: event.headSha };

  return withProviderSession(deps, integration, async (session: ProviderSession, connector) => {
    const client: SourceControlClient | undefined = connector.sourceControl;
    if (!client) throw new PermanentJobError(`${connector.name} does not support pull-request checks`);
    await updateRow(deps.db, row.id, event.headSha, { status: 'scanning', error: null });

    // The check run of an earlier attempt on this head is reused (the row forgets it on a new head).
    let checkId = row.check_id;
    if (checkId) await timed(timings, () => client.updateCheck(session, pr, checkId!, IN_PROGRESS_CHECK));
    else {
      checkId = await timed(timings, () => client.createCheck(session, pr, IN_PROGRESS_CHECK));
      await updateRow(deps.db, row.id, event.headSha, { check_id: checkId });
    }

    const cloneUrl = client.authenticatedCloneUrl(session, event.cloneUrl);
    const scanned = await scanHeadAndBase(
      { db: deps.db, threads: deps.threads },
      {
        head: { url: cloneUrl, ref: event.headSha },
        base: { url: cloneUrl, ref: event.baseSha || event.baseRef },
        scanTypes: settings.scan_types,
        allowLocalSources: deps.allowLocalSources,
        ...(deps.outbound ? { outbound: deps.outbound } : {}),
        cloneTimeoutMs: deps.cloneTimeoutMs ?? 300_000,
        signal: ctx.signal,
      },
    );
    timings.clone_ms = Math.max(scanned.head.cloneMs, scanned.base.cloneMs);
    timings.scan_ms = Math.max(scanned.head.scanMs, scanned.base.scanMs);
    const comparison = compareFindings(scanned.head.findings, scanned.base.findings);

    if (!(await isCurrent(deps.db, row.id, event.headSha))) {
      await timed(timings, () => client.updateCheck(session, pr, checkId!, SUPERSEDED));
      ctx.log.info({ pull_request_check: row.id, head_sha: event.headSha }, 'pull request check superseded by a newer head');
      return { pull_request_check_id: row.id, superseded: true };
    }
    const check = checkOf(comparison, settings);
    await timed(timings, () => client.updateCheck(session, pr, checkId!, check));

    // The stored comment id, read now: an earlier head's job may have posted the comment meanwhile.
    const current = await loadRow(deps.db, row.id);
    if (current?.head_sha !== event.headSha) return { pull_request_check_id: row.id, superseded: true };
    const commentId = await timed(timings, () => client.upsertComment(session, pr, commentOf(comparison, settings, event.headSha), current.comment_id));

    timings.total_ms = performance.now() - started;
    const rounded = Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)]));
    const summary = { ...summaryOf(comparison), head_commit: scanned.head.commit, base_commit: scanned.base.commit, scan_types: settings.scan_types, fail_on: settings.fail_on, timings: rounded };
    const stored = await ctx.completeWith(async (trx) => {
      const result = await trx
        .updateTable('pull_request_checks')
        .set({ status: 'completed', conclusion: check.conclusion ?? null, check_id: checkId, comment_id: commentId, summary: JSON.stringify(summary), error: null, updated_at: new Date() })
        .where('id', '=', row.id)
        .where('head_sha', '=', event.headSha)
        .executeTakeFirst();
      if (result.numUpdatedRows > 0n) return true;
      // A newer head took the row while the comment was posted: keep the comment id for its job.
      await trx.updateTable('pull_request_checks').set({ comment_id: commentId }).where('id', '=', row.id).where('comment_id', 'is', null).execute();
      return false;
    });
    ctx.log.info({ pull_request_check: row.id, head_sha: event.headSha, conclusion: check.conclusion, new_findings: comparison.added.length, ...rounded }, 'pull request check completed');
    return { pull_request_check_id: row.id, conclusion: check.conclusion, new_findings: comparison.added.length, stored };
  });
}

/** Closes a check run left `in_progress` by a job that cannot finish; best effort (the provider may be what failed). */
async function closeCheckAfterFailure(deps: IntegrationDeps, integration: IntegrationRow, payload: PullRequestJobPayload, reason: string): Promise<void> {
  const row = await loadRow(deps.db, payload.pull_request_check_id);
  if (!row?.check_id || row.head_sha !== payload.event.headSha) return;
  const { event } = payload;
  const pr: PullRequestRef = { repository: event.projectId ?? event.repository, number: event.number, headSha: event.headSha };
  const check: CheckInput = { name: IN_PROGRESS_CHECK.name, status: 'completed', conclusion: 'neutral', title: 'Aegis could not scan this commit', summary: reason.slice(0, 1000), annotations: [] };
  await withProviderSession(deps, integration, (session, connector) => connector.sourceControl?.updateCheck(session, pr, row.check_id!, check) ?? Promise.resolve()).catch(() => undefined);
}

/** The `pull_request.check` kind. Scan threads are kept between checks, as the scan job does. */
export function pullRequestJobHandlers(deps: PullRequestJobDeps): JobHandlers {
  const threads = new ThreadPool(SCAN_THREAD, { idleMs: 60_000 });
  // Two threads: a check scans head and base side by side, and a cold thread costs seconds.
  if (deps.warmThreads) for (let i = 0; i < 2; i++) threads.run('warmUp', null).catch(() => undefined);
  const runDeps: RunDeps = { ...deps, threads };
  const definition: JobKindDefinition<PullRequestJobPayload> = {
    concurrency: CONCURRENCY,
    async run(job, ctx) {
      const { payload } = job;
      if (typeof payload.pull_request_check_id !== 'string' || typeof payload.event?.headSha !== 'string') throw new PermanentJobError('malformed pull_request.check payload');
      const row = await loadRow(deps.db, payload.pull_request_check_id);
      // Gone (the connection was deleted) or moved on to a newer head, whose own job checks it.
      if (!row || row.head_sha !== payload.event.headSha) return { skipped: row ? 'superseded' : 'gone' };
      const integration = await deps.db.selectFrom('integrations').selectAll().where('id', '=', row.integration_id).executeTakeFirst();
      if (!integration) return { skipped: 'gone' };
      const fail = async (err: unknown): Promise<void> => {
        const reason = errorMessage(err);
        await updateRow(deps.db, row.id, payload.event.headSha, { status: 'failed', error: reason });
        if (!(err instanceof ProviderAuthError)) await closeCheckAfterFailure(deps, integration, payload, reason);
      };
      try {
        return await runCheck(runDeps, job, ctx, integration, row);
      } catch (err) {
        if (ctx.signal.aborted) throw err; // lease lost or shutdown: the queue runs it again
        const last = job.attempts >= job.max_attempts;
        if (err instanceof ProviderRateLimitError) {
          if (last) await fail(err);
          throw new RetryLaterError(err.message, err.retryAfterMs);
        }
        // A clone the outbound policy refused is refused again on every attempt.
        if (err instanceof ProviderAuthError || err instanceof ProviderRequestError || err instanceof IntegrationUnavailableError || err instanceof PermanentJobError || err instanceof RefusedCloneError) {
          await fail(err);
          throw err instanceof PermanentJobError ? err : new PermanentJobError(errorMessage(err));
        }
        // An outage or a failed clone: retried with backoff; the last attempt leaves the row failed.
        if (last) await fail(err);
        throw err;
      }
    },
  };
  return { [PULL_REQUEST_JOB_KIND]: definition as unknown as JobKindDefinition };
}
