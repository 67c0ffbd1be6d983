// The `config-repo-sync` job: fetch the branch, then reconcile the config directory against the
// API exactly as `aegis apply` would — through the port in config-sync.ts, which the reconciler
// implements over the REST API with the repository's own key, so every write is authorised,
// validated and audited like any client's.
//
// One sync of a repository runs at a time: the job takes the repository's sync lock (its own id in
// sync_job_id; free once the holder has ended) and, finding it taken, fails the attempt so the
// queue retries it shortly. A sync's failure (unreachable repository, invalid config, a refused
// plan) is its result, recorded and not retried: the next push or poll tries again.
//
// Polls run often and mostly find nothing: a poll that sees the last synced commit is a drift check
// (trigger `drift`), and an automatic check whose outcome equals the repository's latest record
// (same commit, result, plan and errors) leaves no new record, only last_checked_at. A plan's
// impact preview is kept on the record but is not part of that comparison: recorded traffic moves
// on between polls, the plan does not.
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import type { ConfigRepoRow, ConfigRepoSyncRow } from '../../platform/db/schema.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { CloneAccess } from '../integrations/connections/clone-access.ts';
import { cloneRepository } from '../../platform/git/clone.ts';
import type { OutboundPolicy } from '../../platform/net/outbound.ts';
import { parseGitSource, redactText } from '../../platform/git/url.ts';
import { withWorkspace } from '../../platform/git/workspace.ts';
import { JobAbortedError, type Job, type JobContext, type JobKindDefinition } from '../../platform/jobs/types.ts';
import type { ConfigSync, ConfigSyncOutcome, ConfigSyncSummary } from '../../schemas/config-sync.ts';
import type { FailureStage, RepoStatus, SyncResult, SyncTrigger } from './schemas.ts';
import { cloneUrlOf, nextPollAt, openSyncKey, toSync, type SyncJobPayload } from './store.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export interface SyncJobOptions {
  db: Db;
  secretBox: SecretBox;
  allowLocalSources: boolean;
  /** The API the sync talks to (the server's own URL; `aegis worker` takes AEGIS_API_URL). */
  apiUrl: string;
  /** Reconciles a checked-out directory (the reconciler's, wired in by the process). */
  configSync: ConfigSync;
  cloneTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Clones through a source-control connection (repositories that name one). */
  cloneAccess?: CloneAccess;
  /** What clones connect under (api/outbound-policy.ts); default: the tenant rule, private targets refused. */
  outbound?: OutboundPolicy;
}

const MAX_LINES = 200;

interface Outcome {
  trigger: SyncTrigger;
  commit: string | null;
  result: SyncResult;
  failureStage: FailureStage | null;
  summary: ConfigSyncSummary | null;
  changes: string[];
  /** The impact preview's lines; null when none was made. */
  impact: string[] | null;
  errors: string[];
  warnings: string[];
}

class SyncFailure extends Error {
  constructor(
    readonly stage: FailureStage,
    message: string,
  ) {
    super(message);
  }
}

/** The clone URL with the connection's token or the worker-held credentials a repository names, if any. */
async function credentialedUrl(repo: ConfigRepoRow, options: SyncJobOptions, env: NodeJS.ProcessEnv): Promise<string> {
  const url = cloneUrlOf(options.secretBox, repo);
  if (repo.connection_id) {
    if (!options.cloneAccess) throw new SyncFailure('fetch', 'this worker cannot clone through connections');
    try {
      return await options.cloneAccess.authenticatedUrl(repo.org_id, repo.connection_id, url);
    } catch (err) {
      // Refused, broken or unreachable alike: recorded as this sync's fetch failure; the next push or poll tries again.
      throw new SyncFailure('fetch', `cannot clone through connection ${repo.connection_id}: ${errorMessage(err)}`);
    }
  }
  if (!repo.credentials_ref) return url;
  const value = env[`AEGIS_GIT_CREDENTIAL_${repo.credentials_ref}`];
  if (!value) throw new SyncFailure('fetch', `credentials ${repo.credentials_ref} are not set on this worker (AEGIS_GIT_CREDENTIAL_${repo.credentials_ref})`);
  const parsed = /^(https?:\/\/)([^/@]+@)?(.*)$/i.exec(url);
  if (!parsed) throw new SyncFailure('fetch', 'credentials_ref applies to https URLs only');
  const [user, token] = value.includes(':') ? [value.slice(0, value.indexOf(':')), value.slice(value.indexOf(':') + 1)] : ['git', value];
  return `${parsed[1]}${encodeURIComponent(user)}:${encodeURIComponent(token)}@${parsed[3]}`;
}

const cap = (lines: string[], max = MAX_LINES) => (lines.length > max ? [...lines.slice(0, max - 1), `… and ${lines.length - max + 1} more`] : lines);
/** A change's impact takes a few lines (its own, the sentence, coverage), and each site one. */
const IMPACT_LINES = 4 * MAX_LINES;

function fromReconcile(trigger: SyncTrigger, commit: string, outcome: ConfigSyncOutcome, repoId: string): Outcome {
  const base = { trigger, commit, summary: outcome.summary, changes: cap(outcome.changes), impact: outcome.impactLines ? cap(outcome.impactLines, IMPACT_LINES) : null, warnings: cap(outcome.warnings) };
  switch (outcome.result) {
    case 'invalid':
      return { ...base, result: 'failed', failureStage: 'validate', summary: null, errors: cap(outcome.errors) };
    case 'failed':
      return { ...base, result: 'failed', failureStage: outcome.applied ? 'apply' : 'plan', errors: cap(outcome.errors) };
    case 'refused':
      return {
        ...base,
        result: 'refused',
        failureStage: null,
        errors: cap([...outcome.errors, `Review the plan, then POST /api/v1/config-repos/${repoId}/sync?force=true (or raise the limit that refused it: max_changes / max_change_percent, max_new_blocks).`]),
      };
    default:
      return { ...base, result: outcome.result, failureStage: null, errors: [] };
  }
}

function repoStatus(outcome: Outcome, repo: ConfigRepoRow): { status: RepoStatus; message: string | null } {
  const n = outcome.changes.length;
  switch (outcome.result) {
    case 'applied':
    case 'unchanged':
      return { status: 'synced', message: null };
    case 'planned':
      return {
        status: 'out_of_sync',
        message:
          outcome.trigger === 'drift'
            ? `drift: ${n} change(s) would restore ${outcome.commit?.slice(0, 12) ?? 'the config'}; ${repo.auto_sync ? 'self_heal is off' : 'auto_sync is off'}`
            : `${n} change(s) waiting: auto_sync is off`,
      };
    case 'refused':
      return { status: 'out_of_sync', message: outcome.errors[0] ?? 'refused' };
    case 'failed':
      return { status: 'error', message: `${outcome.failureStage ?? 'sync'} failed: ${outcome.errors[0] ?? 'unknown error'}` };
  }
}

/**
 * Errors as compared between records. A plan refused by max_new_blocks names the counts it went
 * past, which grow with recorded traffic while the plan (same checksum) stays the same: a refusal
 * is the same news whatever the counts.
 */
const comparedErrors = (result: string | null, errors: readonly string[]): string => JSON.stringify(result === 'refused' ? errors.map((e) => e.replace(/\d[\d ]*/g, '#')) : errors);

/** Same commit, result, plan and errors as the latest record: nothing new to tell (the impact preview's counts are not news). */
function repeats(outcome: Outcome, latest: ConfigRepoSyncRow | undefined): boolean {
  if (!latest || latest.status !== 'completed') return false;
  const checksum = (latest.summary as { checksum?: string | null } | null)?.checksum ?? null;
  return (
    latest.commit_sha === outcome.commit &&
    latest.result === outcome.result &&
    checksum === (outcome.summary?.checksum ?? null) &&
    comparedErrors(latest.result, latest.errors) === comparedErrors(outcome.result, outcome.errors)
  );
}

async function takeLock(db: Db, repoId: string, jobId: string): Promise<ConfigRepoRow | undefined> {
  return db
    .updateTable('config_repos')
    .set({ sync_job_id: jobId })
    .where('id', '=', repoId)
    .where((eb) =>
      eb.or([
        eb('sync_job_id', 'is', null),
        eb('sync_job_id', '=', jobId),
        eb.not(eb.exists(eb.selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'config_repos.sync_job_id').where('jobs.state', 'in', ['queued', 'running']))),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
}

async function fetchAndReconcile(options: SyncJobOptions, repo: ConfigRepoRow, payload: SyncJobPayload, ctx: JobContext): Promise<Outcome> {
  let commit: string | null = null;
  let trigger = payload.trigger;
  try {
    return await withWorkspace(async (dir) => {
      const url = await credentialedUrl(repo, options, options.env ?? process.env);
      const parsed = parseGitSource(url, repo.branch, { allowLocal: options.allowLocalSources });
      if (!parsed.ok) throw new SyncFailure('fetch', `invalid repository ${parsed.field}: ${parsed.reason}`);
      const checkout = join(dir, 'repo');
      try {
        commit = (await cloneRepository(parsed.source, checkout, { signal: ctx.signal, timeoutMs: options.cloneTimeoutMs ?? 120_000, allowLocal: options.allowLocalSources, ...(options.outbound ? { outbound: options.outbound } : {}) })).commit;
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw new SyncFailure('fetch', redactText(errorMessage(err), url));
      }
      // A poll that finds the commit already synced is a drift check.
      if (trigger === 'poll' && commit === repo.last_synced_commit) trigger = 'drift';
      const configDir = join(checkout, repo.path);
      const isDir = await stat(configDir).then((s) => s.isDirectory(), () => false);
      if (!isDir) throw new SyncFailure('validate', `the path "${repo.path}" is not a directory at commit ${commit}`);
      const outcome = await options.configSync({
        apiUrl: options.apiUrl,
        apiKey: openSyncKey(options.secretBox, repo),
        userAgent: 'aegis-config-sync/1',
        path: configDir,
        source: repo.source,
        prune: repo.prune,
        // A person asking (manual) applies; pushes and polls only when auto_sync is on, drift only with self-heal.
        apply: trigger === 'manual' || (repo.auto_sync && (trigger !== 'drift' || repo.self_heal)),
        force: payload.force === true,
        thresholds: { floor: repo.max_changes, percent: repo.max_change_percent },
        denyWeakening: repo.deny_weakening,
        impact: repo.impact_window === null ? null : { window: repo.impact_window, maxNewBlocks: repo.max_new_blocks },
      });
      return fromReconcile(trigger, commit, outcome, repo.id);
    });
  } catch (err) {
    if (err instanceof JobAbortedError || ctx.signal.aborted) throw err;
    const stage = err instanceof SyncFailure ? err.stage : 'plan';
    const message = errorMessage(err);
    return { trigger, commit, result: 'failed', failureStage: stage, summary: null, changes: [], impact: null, errors: [message], warnings: [] };
  }
}

async function runSync(options: SyncJobOptions, job: Job<SyncJobPayload>, ctx: JobContext): Promise<{ sync_id: string | null; result: SyncResult | 'skipped' }> {
  const { db } = options;
  const payload = job.payload;
  const exists = await db.selectFrom('config_repos').select('id').where('id', '=', payload.repo_id).executeTakeFirst();
  if (!exists) return { sync_id: null, result: 'skipped' }; // deleted since (its records went with it)
  const repo = await takeLock(db, payload.repo_id, job.id);
  if (!repo) throw new Error('another sync of this repository is running; this one waits for it');
  const startedAt = new Date();
  if (payload.sync_id) await db.updateTable('config_repo_syncs').set({ status: 'running', started_at: startedAt }).where('id', '=', payload.sync_id).execute();

  const outcome = await fetchAndReconcile(options, repo, payload, ctx);
  const { status, message } = repoStatus(outcome, repo);
  const done = await ctx.completeWith(async (trx) => {
    const latest = await trx.selectFrom('config_repo_syncs').selectAll().where('repo_id', '=', repo.id).where('status', '=', 'completed').orderBy('id', 'desc').limit(1).executeTakeFirst();
    const quiet = !payload.sync_id && ((outcome.trigger === 'drift' && outcome.result === 'unchanged') || repeats(outcome, latest));
    let syncId: string | null = payload.sync_id ?? null;
    const record = {
      trigger: outcome.trigger,
      status: 'completed',
      result: outcome.result,
      failure_stage: outcome.failureStage,
      commit_sha: outcome.commit,
      summary: outcome.summary ? JSON.stringify(outcome.summary) : null,
      changes: JSON.stringify(outcome.changes),
      impact: outcome.impact ? JSON.stringify(outcome.impact) : null,
      errors: JSON.stringify(outcome.errors),
      warnings: JSON.stringify(outcome.warnings),
      started_at: startedAt,
      finished_at: sql<Date>`now()`,
    };
    let written: ConfigRepoSyncRow | undefined;
    if (syncId) {
      written = await trx.updateTable('config_repo_syncs').set(record).where('id', '=', syncId).returningAll().executeTakeFirst();
    } else if (!quiet) {
      syncId = `sync_${job.id.slice(4)}`;
      written = await trx.insertInto('config_repo_syncs').values({ id: syncId, org_id: repo.org_id, repo_id: repo.id, job_id: job.id, forced: payload.force === true, ...record }).returningAll().executeTakeFirst();
    }
    // A quiet drift check leaves no record and raises no event.
    const events = written ? await recordEvents(trx, [{ orgId: repo.org_id, type: outcome.result === 'failed' ? 'config_repo.sync.failed' : 'config_repo.sync.completed', object: toSync(written) }]) : undefined;
    const synced = status === 'synced';
    await trx
      .updateTable('config_repos')
      .set({
        status,
        status_message: message,
        ...(synced ? { last_synced_commit: outcome.commit, last_synced_at: sql<Date>`now()` } : {}),
        last_checked_at: sql<Date>`now()`,
        // Any sync resets the poll clock: the next check is a full interval later.
        next_poll_at: nextPollAt(repo.poll_interval_seconds),
        sync_job_id: null,
      })
      .where('id', '=', repo.id)
      .where('sync_job_id', '=', job.id)
      .execute();
    return { sync_id: syncId, result: outcome.result, deliveries: events?.deliveries ?? 0 };
  });
  announceDeliveries(db, done.deliveries);
  return { sync_id: done.sync_id, result: done.result };
}

export function configSyncJobKind(options: SyncJobOptions): JobKindDefinition<SyncJobPayload> {
  return {
    concurrency: 2,
    // Retries are for waiting on the repository's lock; short steps.
    backoff: { baseMs: 250, maxMs: 3_000 },
    run: (job, ctx) => runSync(options, job, ctx),
  };
}
