// Code scans over HTTP (spec 4.7): start a SAST, SCA or secrets scan of a git repository or an
// uploaded archive, list and read scans, cancel one, and compare a scan with an earlier one.
// The scan itself runs as a job (./run-scan.ts), on whichever worker claims it.
import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyRequest } from 'fastify';
import { SCAN_TYPES } from '../../schemas/index.ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { badRequest, conflict, notFound, validationFailed } from '../../platform/http/errors.ts';
import { parseEnumList } from '../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../platform/http/schemas.ts';
import { cancelJob } from '../../platform/jobs/queue.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { detectArchiveKind } from './sources/archive.ts';
import { parseGitSource } from '../../platform/git/url.ts';
import { gitTargetRefusal } from '../../platform/git/target-refusal.ts';
import type { OutboundPolicy } from '../../platform/net/outbound.ts';
import type { CloneAccess } from '../integrations/connections/clone-access.ts';
import { diffScans, scanCoverage } from './compare.ts';
import { CodeScanBody, SCAN_STATUSES, ScanCoverageResource, ScanDiffResource, ScanResource } from './schemas.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { createScan, findScan, finishScan, listScans, storedGitSource, toScan, type ScanRow } from './store.ts';

const CODE_SCAN_TYPES = ['sast', 'sca', 'secrets'] as const;
type CodeScanType = (typeof CODE_SCAN_TYPES)[number];
const ARCHIVE_TYPES = ['application/zip', 'application/gzip', 'application/x-gzip', 'application/x-tar', 'application/octet-stream'];
export const MAX_ARCHIVE_BYTES = 50 * 1024 * 1024;

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

export interface ScanRoutesOptions {
  db: Db;
  /** `file://` URLs and local paths as scan targets (AEGIS_ALLOW_LOCAL_SOURCES). */
  allowLocalSources: boolean;
  /** Seals clone URLs that carry credentials. */
  secretBox: SecretBox;
  /** Private repositories cloned through a source-control connection. */
  cloneAccess: CloneAccess;
  /** What clones connect under (api/outbound-policy.ts): a repository on a literal private address is refused here. */
  outbound: OutboundPolicy;
}

export const scanRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ScanRoutesOptions }> = async (app, { db, allowLocalSources, secretBox, cloneAccess, outbound }) => {
  const tags = ['Scans'];
  app.addContentTypeParser(ARCHIVE_TYPES, { parseAs: 'buffer', bodyLimit: MAX_ARCHIVE_BYTES }, async (_request: FastifyRequest, body: Buffer) => body);

  const start = async (request: FastifyRequest, scanType: CodeScanType, input: Buffer | { target: string; config?: { ref?: string; history?: boolean }; connection?: string }, query: { ref?: string; history?: boolean }) => {
    const { orgId, actor } = principalOf(request);
    let scan: ScanRow | null;
    if (Buffer.isBuffer(input)) {
      const format = detectArchiveKind(input);
      if (!format) throw validationFailed('the upload is not a zip, tar or tar.gz archive', { fields: [{ field: 'body', message: 'is not a zip, tar or tar.gz archive' }] });
      const sha256 = createHash('sha256').update(input).digest('hex');
      const config = { ...(query.history !== undefined ? { history: query.history } : {}) };
      scan = await db.transaction().execute(async (trx) => {
        const created = await createScan(trx, { orgId, scanType, target: `archive:${sha256}`, source: { kind: 'archive', format, sha256, bytes: input.length }, config, triggeredBy: actor.id, archive: input });
        await auditRequest(trx, request, { action: 'scan.created', target: { type: 'scan', id: created!.id }, metadata: { scan_type: scanType, source: 'archive', bytes: input.length } });
        return created;
      });
    } else {
      const parsed = parseGitSource(input.target, input.config?.ref, { allowLocal: allowLocalSources });
      if (!parsed.ok) {
        const field = parsed.field === 'url' ? 'target' : 'config.ref';
        throw validationFailed(`request body is invalid: ${field} ${parsed.reason}`, { fields: [{ field, message: parsed.reason }] });
      }
      const { source } = parsed;
      const refused = gitTargetRefusal(source.url, outbound);
      if (refused) throw validationFailed(`request body is invalid: target ${refused}`, { fields: [{ field: 'target', message: refused }] });
      const connection = input.connection;
      if (connection !== undefined) await cloneAccess.checkRequest(orgId, connection, source.url);
      scan = await db.transaction().execute(async (trx) => {
        const created = await createScan(trx, {
          orgId,
          scanType,
          target: source.target,
          source: { ...storedGitSource(source, secretBox), ...(connection !== undefined ? { connection } : {}) },
          config: input.config ?? {},
          triggeredBy: actor.id,
        });
        // The target without credentials: a URL can carry an access token.
        await auditRequest(trx, request, { action: 'scan.created', target: { type: 'scan', id: created!.id }, metadata: { scan_type: scanType, source: 'git', target: source.target } });
        return created;
      });
    }
    // The job was enqueued inside the transaction, so workers learn of it only now that it committed.
    announceEnqueued(db);
    return toScan(scan!);
  };

  for (const scanType of CODE_SCAN_TYPES) {
    const label = { sast: 'SAST', sca: 'SCA', secrets: 'secrets' }[scanType];
    app.post(
      `/api/v1/${scanType}/scans`,
      {
        config: { auth: 'scans:write' },
        schema: {
          tags,
          summary: `Start a ${label} scan`,
          description:
            'Scans a git repository (JSON body: `target` and optional `config.ref`) or an uploaded archive (`application/zip`, `application/gzip` for tar.gz, ' +
            '`application/x-tar`; at most 50 MiB; `ref` does not apply, `history` may be given in the query). Answers 202 with the queued scan; poll ' +
            '`GET /api/v1/scans/:id` for its progress.',
          consumes: ['application/json', ...ARCHIVE_TYPES],
          querystring: { type: 'object', properties: { history: { type: 'boolean', description: 'Secrets scans of an archive: not applicable (archives carry no history).' } } },
          body: {
            content: {
              'application/json': { schema: CodeScanBody },
              ...Object.fromEntries(ARCHIVE_TYPES.map((t) => [t, { schema: {} }])),
            },
          },
          response: { 202: ScanResource },
        },
      },
      async (request, reply) => {
        // The body schema is keyed by content type, so a request without one arrives unvalidated.
        if (!Buffer.isBuffer(request.body) && (typeof request.body !== 'object' || request.body === null)) {
          throw validationFailed('request body is required: a JSON object or an archive', { fields: [{ field: 'body', message: 'is required' }] });
        }
        const scan = await start(request, scanType, request.body as Buffer | { target: string; config?: { ref?: string; history?: boolean } }, request.query as { history?: boolean });
        return reply.code(202).send(scan);
      },
    );
  }

  app.get(
    '/api/v1/scans',
    {
      config: { auth: 'scans:read' },
      schema: {
        tags,
        summary: 'List scans',
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            scan_type: filterParam('Filter by scan type (comma-separated).'),
            status: filterParam('Filter by status (comma-separated).'),
            target: { type: 'string', maxLength: 2048, description: 'Only scans of this target (as scans report it).' },
            schedule_id: { type: 'string', maxLength: 64, description: 'Only scans started by this schedule.' },
          },
        },
        response: { 200: listResponseSchema(ScanResource) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listScans(db, {
        orgId: principalOf(request).orgId,
        after: decodeCursor(request.query.cursor),
        limit,
        scanTypes: parseEnumList('scan_type', request.query.scan_type, SCAN_TYPES),
        statuses: parseEnumList('status', request.query.status, SCAN_STATUSES),
        target: request.query.target,
        scheduleId: request.query.schedule_id,
      });
      return toPage(rows, limit, toScan);
    },
  );

  app.get(
    '/api/v1/scans/:id',
    { config: { auth: 'scans:read' }, schema: { tags, summary: 'Get a scan', params: idParams, response: { 200: ScanResource } } },
    async (request) => {
      const scan = await findScan(db, principalOf(request).orgId, request.params.id);
      if (!scan) throw notFound('scan');
      return toScan(scan);
    },
  );

  app.delete(
    '/api/v1/scans/:id',
    {
      config: { auth: 'scans:write' },
      schema: {
        tags,
        summary: 'Cancel a scan',
        description: 'A queued scan is canceled at once; a running one is stopped within about a second (its worker is told through the job queue). A scan that has already ended is a 409.',
        params: idParams,
        response: { 200: ScanResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const scan = await db.transaction().execute(async (trx) => {
        const found = await findScan(trx, orgId, request.params.id);
        if (!found) throw notFound('scan');
        if (!(await finishScan(trx, found.id, { status: 'canceled' }))) throw conflict(`scan has already ended (${found.status})`, { status: found.status });
        if (found.job_id) await cancelJob(trx, found.job_id);
        await auditRequest(trx, request, { action: 'scan.canceled', target: { type: 'scan', id: found.id }, metadata: { scan_type: found.scan_type, was: found.status } });
        return (await findScan(trx, orgId, found.id))!;
      });
      return toScan(scan);
    },
  );

  app.get(
    '/api/v1/scans/:id/diff',
    {
      config: { auth: 'scans:read' },
      schema: {
        tags,
        summary: 'Compare a scan with a baseline',
        description:
          'Findings `new` (seen by this scan, not by the baseline), `fixed` (seen by the baseline, not by this scan) and `unchanged`, by fingerprint. ' +
          'The baseline is `?baseline=SCAN_ID` (same organisation, type and target) or else the previous completed scan of the same target.',
        params: idParams,
        querystring: { type: 'object', properties: { baseline: { type: 'string', maxLength: 64 } } },
        response: { 200: ScanDiffResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const scan = await findScan(db, orgId, request.params.id);
      if (!scan) throw notFound('scan');
      let baseline: ScanRow | undefined;
      if (request.query.baseline) {
        baseline = await findScan(db, orgId, request.query.baseline);
        if (!baseline) throw notFound('baseline scan');
        if (baseline.scan_type !== scan.scan_type || baseline.target !== scan.target) throw badRequest('the baseline must be a scan of the same type and target', { field: 'baseline' });
      }
      return diffScans(db, scan, baseline);
    },
  );

  app.get(
    '/api/v1/scans/:id/coverage',
    {
      config: { auth: 'scans:read' },
      schema: { tags, summary: 'What a scan covered', description: 'Code scans: files scanned and skipped (with the reason). URL scans: requests sent and pages, operations or templates covered. With what limited the scan (`notes`), once it has completed.', params: idParams, response: { 200: ScanCoverageResource } },
    },
    async (request) => {
      const scan = await findScan(db, principalOf(request).orgId, request.params.id);
      if (!scan) throw notFound('scan');
      return scanCoverage(scan);
    },
  );
};
