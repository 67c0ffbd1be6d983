// /api/v1/config-repos: the git repositories the platform follows (list, get, create, update,
// delete; admin), their sync records, and manual syncs. The webhook secret is write-only: generated
// and returned once when not given, never shown after. Syncs themselves are jobs (./sync-job.ts).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { checkRef, parseGitSource, type GitSource } from '../../platform/git/url.ts';
import { gitTargetRefusal } from '../../platform/git/target-refusal.ts';
import type { OutboundPolicy } from '../../platform/net/outbound.ts';
import { conflict, notFound, validationFailed } from '../../platform/http/errors.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { listResponseSchema, pageQueryProperties } from '../../platform/http/schemas.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import type { CloneAccess } from '../integrations/connections/clone-access.ts';
import { ConfigRepoCreate, ConfigRepoCreated, ConfigRepoResource, ConfigRepoUpdate, REPO_STATUSES, SYNC_RESULTS, SYNC_TRIGGERS, SyncResource } from './schemas.ts';
import { DEFAULT_IMPACT_WINDOW, impactWindowProblem } from '../../schemas/impact-window.ts';
import { cloneUrlOf, defaultSource, deleteRepo, findRepo, findSync, insertRepo, listRepos, listSyncs, requestSync, toConfigRepo, toSync, updateRepo } from './store.ts';

export interface ConfigRepoRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  allowLocalSources: boolean;
  /** poll_interval_seconds when a repository does not set it. */
  defaultPollSeconds: number;
  /** Checks the source-control connection a repository clones through. */
  cloneAccess: CloneAccess;
  /** What syncs clone under (api/outbound-policy.ts): a repository on a literal private address is refused here. */
  outbound: OutboundPolicy;
}

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;
const syncParams = { type: 'object', required: ['id', 'syncId'], properties: { id: { type: 'string', maxLength: 64 }, syncId: { type: 'string', maxLength: 64 } } } as const;

const invalidField = (field: string, message: string) => validationFailed(`request body is invalid: ${field} ${message}`, { fields: [{ field, message }] });

function checkSource(url: string, allowLocal: boolean, outbound: OutboundPolicy): GitSource {
  const parsed = parseGitSource(url, undefined, { allowLocal });
  if (!parsed.ok) throw invalidField('url', parsed.reason);
  const refused = gitTargetRefusal(parsed.source.url, outbound);
  if (refused) throw invalidField('url', refused);
  return parsed.source;
}

function checkBranch(branch: string): void {
  const problem = checkRef(branch);
  if (problem) throw invalidField('branch', problem);
}

/**
 * Relative to the repository root and inside it, as Argo CD users write it: `.` and `./` mean the
 * root, `./sub/` means `sub`, empty and `.` segments fall away. Stored canonical (`''` for the root)
 * so that the default source and change detection see one spelling. Only `..` segments and absolute
 * paths are refused.
 */
function canonicalRepoPath(path: string): string {
  if (path.startsWith('/')) throw invalidField('path', 'must be relative to the repository root, e.g. "." or "config/prod"');
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw invalidField('path', "must stay inside the repository: '..' segments are not allowed");
  return segments.join('/');
}

/**
 * A repository's credentials come from one place: the URL, a worker-held `credentials_ref`, or a
 * connection; with a connection, the URL must be a credential-free HTTPS URL on its provider.
 */
function checkOneCredentialSource(connection: string | null, credentialsRef: string | null): void {
  if (connection !== null && credentialsRef !== null) throw invalidField('connection', 'cannot be combined with credentials_ref: give one source of credentials (set the other to null)');
}

/**
 * The impact settings as they will be: a window the reconciler reads (`24h`), and a gate on newly
 * blocked requests only with a preview to check it against.
 */
function checkImpact(window: string | null, maxNewBlocks: number | null): void {
  const problem = window === null ? null : impactWindowProblem(window);
  if (problem) throw invalidField('impact_window', problem);
  if (window === null && maxNewBlocks !== null) throw invalidField('max_new_blocks', 'needs the impact preview: set impact_window too (or max_new_blocks to null)');
}

/** The audit trail never names credentials: the stored URL has none. */
const auditMetadata = (row: { url: string; branch: string; path: string }) => ({ url: row.url, branch: row.branch, path: row.path });

export const configRepoRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ConfigRepoRoutesOptions }> = async (app, { db, secretBox, allowLocalSources, defaultPollSeconds, cloneAccess, outbound }) => {
  const tags = ['Config repositories'];

  app.get(
    '/api/v1/config-repos',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'List config repositories',
        querystring: { type: 'object', properties: { ...pageQueryProperties, status: { type: 'string', enum: REPO_STATUSES } } },
        response: { 200: listResponseSchema(ConfigRepoResource) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listRepos(db, { orgId: principalOf(request).orgId, after: decodeCursor(request.query.cursor), limit, status: request.query.status });
      return toPage(rows, limit, toConfigRepo);
    },
  );

  app.get(
    '/api/v1/config-repos/:id',
    { config: { auth: 'admin' }, schema: { tags, summary: 'Get a config repository', params: idParams, response: { 200: ConfigRepoResource } } },
    async (request) => {
      const row = await findRepo(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('config repository');
      return toConfigRepo(row);
    },
  );

  app.post(
    '/api/v1/config-repos',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Register a config repository',
        description:
          'Registers a git repository to follow. An API key (`config-repo <name>`, scope admin) is made for its syncs. Without `webhook_secret`, one is generated and returned in this response only. The first sync is queued at once.',
        body: ConfigRepoCreate,
        response: { 201: ConfigRepoCreated },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const source = checkSource(body.url, allowLocalSources, outbound);
      const branch = body.branch ?? 'main';
      checkBranch(branch);
      const path = canonicalRepoPath(body.path ?? '');
      const ownership = body.source ?? defaultSource(source, path);
      const connection = body.connection ?? null;
      checkOneCredentialSource(connection, body.credentials_ref ?? null);
      const impactWindow = body.impact_window === undefined ? DEFAULT_IMPACT_WINDOW : body.impact_window;
      checkImpact(impactWindow, body.max_new_blocks ?? null);
      if (connection !== null) await cloneAccess.checkRequest(principal.orgId, connection, source.url);
      const created = await db.transaction().execute(async (trx) => {
        const clash = await trx
          .selectFrom('config_repos')
          .select(['name', 'source'])
          .where('org_id', '=', principal.orgId)
          .where((eb) => eb.or([eb('name', '=', body.name), eb('source', '=', ownership)]))
          .executeTakeFirst();
        if (clash?.name === body.name) throw conflict(`a config repository named "${body.name}" exists`, { field: 'name' });
        if (clash) throw conflict(`another config repository already uses the source id "${ownership}"; two repositories must not own the same objects (set a different \`source\`)`, { field: 'source' });
        const result = await insertRepo(trx, secretBox, {
          orgId: principal.orgId,
          name: body.name,
          source,
          ownership,
          branch,
          path,
          auto_sync: body.auto_sync ?? true,
          prune: body.prune ?? true,
          self_heal: body.self_heal ?? false,
          deny_weakening: body.deny_weakening ?? false,
          max_changes: body.max_changes ?? 5,
          max_change_percent: body.max_change_percent ?? 25,
          impact_window: impactWindow,
          max_new_blocks: body.max_new_blocks ?? null,
          poll_interval_seconds: body.poll_interval_seconds ?? defaultPollSeconds,
          credentials_ref: body.credentials_ref ?? null,
          connection_id: connection,
          webhookSecret: body.webhook_secret,
          createdBy: principal.actor.id,
        });
        await auditRequest(trx, request, { action: 'config_repo.created', target: { type: 'config_repo', id: result.row.id }, metadata: auditMetadata(result.row) });
        return result;
      });
      return reply.code(201).send({ ...toConfigRepo(created.row), ...(created.generatedSecret ? { webhook_secret: created.generatedSecret } : {}) });
    },
  );

  app.patch(
    '/api/v1/config-repos/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Update a config repository',
        description: 'Changes the fields given. A new `url`, `branch` or `path` resets the status and fetches at once; a new `connection` fetches at once. `webhook_secret` replaces the secret (write-only). The source id cannot change.',
        params: idParams,
        body: ConfigRepoUpdate,
        response: { 200: ConfigRepoResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const { url, webhook_secret: webhookSecret, connection, ...settings } = request.body;
      const source = url !== undefined ? checkSource(url, allowLocalSources, outbound) : undefined;
      if (settings.branch !== undefined) checkBranch(settings.branch);
      const path = settings.path !== undefined ? canonicalRepoPath(settings.path) : undefined;
      // The stored repository, read once for the checks that need it.
      let stored: ReturnType<typeof findRepo> | undefined;
      const current = async () => (await (stored ??= findRepo(db, orgId, request.params.id))) ?? Promise.reject(notFound('config repository'));
      if (settings.impact_window !== undefined || settings.max_new_blocks !== undefined) {
        // Checked as they will be: a gate needs the window the repository keeps, or the one given.
        const before = settings.impact_window === undefined || settings.max_new_blocks === undefined ? await current() : undefined;
        checkImpact(settings.impact_window !== undefined ? settings.impact_window : before!.impact_window, settings.max_new_blocks !== undefined ? settings.max_new_blocks : before!.max_new_blocks);
      }
      if (connection !== undefined || source !== undefined || settings.credentials_ref !== undefined) {
        // Checked against the repository as it will be: a new URL must suit the connection it keeps.
        const before = await current();
        const connectionId = connection !== undefined ? connection : before.connection_id;
        checkOneCredentialSource(connectionId, settings.credentials_ref !== undefined ? settings.credentials_ref : before.credentials_ref);
        if (connectionId !== null && (connection !== undefined || source !== undefined)) await cloneAccess.checkRequest(orgId, connectionId, source?.url ?? cloneUrlOf(secretBox, before));
      }
      const row = await db.transaction().execute(async (trx) => {
        if (settings.name !== undefined) {
          const clash = await trx.selectFrom('config_repos').select('id').where('org_id', '=', orgId).where('name', '=', settings.name).where('id', '!=', request.params.id).executeTakeFirst();
          if (clash) throw conflict(`a config repository named "${settings.name}" exists`, { field: 'name' });
        }
        const after = await updateRepo(trx, secretBox, orgId, request.params.id, {
          ...settings,
          ...(connection !== undefined ? { connection_id: connection } : {}),
          ...(path !== undefined ? { path } : {}),
          ...(source ? { source } : {}),
          ...(webhookSecret !== undefined ? { webhookSecret } : {}),
        });
        if (!after) throw notFound('config repository');
        await auditRequest(trx, request, {
          action: 'config_repo.updated',
          target: { type: 'config_repo', id: after.id },
          metadata: { fields: Object.keys(request.body).sort(), ...auditMetadata(after) },
        });
        return after;
      });
      return toConfigRepo(row);
    },
  );

  app.delete(
    '/api/v1/config-repos/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Delete a config repository',
        description: 'Stops following the repository and revokes its sync key. The objects it made stay (they keep their ownership labels).',
        params: idParams,
        response: { 204: { type: 'null', description: 'Deleted.' } },
      },
    },
    async (request, reply) => {
      await db.transaction().execute(async (trx) => {
        const deleted = await deleteRepo(trx, principalOf(request).orgId, request.params.id);
        if (!deleted) throw notFound('config repository');
        await auditRequest(trx, request, { action: 'config_repo.deleted', target: { type: 'config_repo', id: deleted.id }, metadata: auditMetadata(deleted) });
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/config-repos/:id/sync',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Sync a config repository now',
        description:
          'Queues a sync (trigger `manual`) and returns its record; follow it at `…/syncs/:syncId`. `force=true` applies past the change thresholds, the weakening rule and `max_new_blocks` — for a sync that was `refused`, after reviewing its plan.',
        params: idParams,
        querystring: { type: 'object', properties: { force: { type: 'boolean', default: false } } },
        response: { 202: SyncResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const force = request.query.force === true;
      const record = await db.transaction().execute(async (trx) => {
        const repo = await findRepo(trx, orgId, request.params.id);
        if (!repo) throw notFound('config repository');
        const { syncId } = await requestSync(trx, repo, { trigger: 'manual', force, withRecord: true });
        await auditRequest(trx, request, { action: 'config_repo.sync_requested', target: { type: 'config_repo', id: repo.id }, metadata: { force, sync_id: syncId } });
        return findSync(trx, orgId, repo.id, syncId!);
      });
      announceEnqueued(db);
      return reply.code(202).send(toSync(record!));
    },
  );

  app.get(
    '/api/v1/config-repos/:id/syncs',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "List a config repository's syncs",
        description: 'Newest first. Automatic checks that found nothing new (no new commit, no drift, the same outcome as the latest record) leave no record.',
        params: idParams,
        querystring: { type: 'object', properties: { ...pageQueryProperties, trigger: { type: 'string', enum: SYNC_TRIGGERS }, result: { type: 'string', enum: SYNC_RESULTS } } },
        response: { 200: listResponseSchema(SyncResource) },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const repo = await findRepo(db, orgId, request.params.id);
      if (!repo) throw notFound('config repository');
      const limit = pageLimit(request.query);
      const rows = await listSyncs(db, { orgId, repoId: repo.id, after: decodeCursor(request.query.cursor), limit, trigger: request.query.trigger, result: request.query.result });
      return toPage(rows, limit, toSync);
    },
  );

  app.get(
    '/api/v1/config-repos/:id/syncs/:syncId',
    { config: { auth: 'admin' }, schema: { tags, summary: 'Get a sync record', params: syncParams, response: { 200: SyncResource } } },
    async (request) => {
      const row = await findSync(db, principalOf(request).orgId, request.params.id, request.params.syncId);
      if (!row) throw notFound('sync');
      return toSync(row);
    },
  );
};
