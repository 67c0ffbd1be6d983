// URL scans over HTTP (spec 4.7, 4.8): start a DAST scan (POST /api/v1/scans), an API scan driven
// by an OpenAPI document (POST /api/v1/api-scans) or a CVE-targeted scan (POST /api/v1/cve-scans).
// Each answers 202 with the queued scan; reading, listing, cancelling and diffing scans are the
// scans module's routes, shared with code scans.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyRequest } from 'fastify';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { validationFailed } from '../../platform/http/errors.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { ScanResource } from './schemas.ts';
import { createScan, toScan } from './store.ts';
import { checkCveSelection } from '../../scanners/cve/scan.ts';
import { parseApiDocument } from '../../scanners/api-scan/scan.ts';
import { ApiScanBody, CveScanBody, DastScanBody, type CommonScanInput } from './url/schemas.ts';
import { prepareUrlSource, urlTarget } from './url/source.ts';
import { checkSandboxHosts, sandboxScopeOf } from '../sandbox/target-policy.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export interface UrlScanRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  allowPrivateTargets: boolean;
  /** Aegis's public URL: test-mode scans may probe the demo target under it. */
  publicUrl: () => string;
}

const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;

const invalid = (field: string, message: string) => validationFailed(`request body is invalid: ${field} ${message}`, { fields: [{ field, message }] });

/** What a scan keeps as its `config`: everything but the credentials (sealed in the source). */
function runConfig(body: CommonScanInput & Record<string, unknown>, drop: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'auth' && !drop.includes(key)));
}

export const urlScanRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: UrlScanRoutesOptions }> = async (app, { db, secretBox, allowPrivateTargets, publicUrl }) => {
  const tags = ['Scans'];

  const start = async (request: FastifyRequest, scanType: 'dast' | 'api' | 'cve', url: string, urlField: string, body: CommonScanInput & Record<string, unknown>, config: Record<string, unknown>, document?: Buffer) => {
    const { orgId, actor } = principalOf(request);
    const sandbox = await sandboxScopeOf(db, orgId, publicUrl());
    const { target, source } = prepareUrlSource(url, body, { allowPrivateTargets, box: secretBox, field: urlField, sandbox });
    const scan = await db.transaction().execute(async (trx) => {
      const created = await createScan(trx, { orgId, scanType, target, source, config, triggeredBy: actor.id, ...(document ? { archive: document } : {}) });
      await auditRequest(trx, request, { action: 'scan.created', target: { type: 'scan', id: created!.id }, metadata: { scan_type: scanType, source: 'url', target } });
      return created!;
    });
    // The job was enqueued inside the transaction, so workers learn of it only now that it committed.
    announceEnqueued(db);
    return toScan(scan);
  };

  app.post(
    '/api/v1/scans',
    {
      config: { auth: 'scans:write' },
      schema: {
        tags,
        summary: 'Start a DAST scan',
        description:
          'Crawls the target within its scope (links and forms, up to `max_depth`), runs the passive checks on every answer and the active checks (reflected XSS, SQL injection, open redirect, path traversal, command and template injection) on every parameter, within `max_requests` at `requests_per_second`. Private, loopback and link-local addresses are refused unless the server runs with AEGIS_ALLOW_PRIVATE_TARGETS=true.',
        body: DastScanBody,
        response: { 202: ScanResource },
      },
    },
    async (request, reply) => {
      const body = request.body;
      return reply.code(202).send(await start(request, 'dast', body.target, 'target', body, runConfig(body, ['target', 'scope', 'max_requests', 'requests_per_second'])));
    },
  );

  app.post(
    '/api/v1/api-scans',
    {
      config: { auth: 'scans:write' },
      bodyLimit: MAX_DOCUMENT_BYTES + 64 * 1024,
      schema: {
        tags,
        summary: 'Start an API scan',
        description:
          'Exercises every operation of an OpenAPI 3.x document (`document`, or `document_url` fetched when the scan runs) against `base_url`: valid requests from the schemas and examples, then checks for server errors, answers that do not match the declared schema, operations answering without their declared authentication, injection in parameters and access to another object\'s id.',
        body: ApiScanBody,
        response: { 202: ScanResource },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if ((body.document === undefined) === (body.document_url === undefined)) throw invalid('document', 'give exactly one of `document` and `document_url`');
      let document: Buffer | undefined;
      if (body.document !== undefined) {
        const text = typeof body.document === 'string' ? body.document : JSON.stringify(body.document);
        if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES) throw invalid('document', 'is larger than 5 MiB');
        try {
          await parseApiDocument(text);
        } catch (err) {
          throw invalid('document', `is not a valid OpenAPI document: ${errorMessage(err)}`);
        }
        document = Buffer.from(text);
      } else {
        const { parsed } = urlTarget(body.document_url!, 'document_url');
        const sandbox = await sandboxScopeOf(db, principalOf(request).orgId, publicUrl());
        if (sandbox) checkSandboxHosts(sandbox, [parsed.host], 'document_url');
      }
      const config = runConfig(body, ['base_url', 'document', 'scope', 'max_requests', 'requests_per_second']);
      return reply.code(202).send(await start(request, 'api', body.base_url, 'base_url', body, config, document));
    },
  );

  app.post(
    '/api/v1/cve-scans',
    {
      config: { auth: 'scans:write' },
      schema: {
        tags,
        summary: 'Start a CVE-targeted scan',
        description: 'Runs the bundled templates for the CVE ids and/or tags named (at least one) against the target. Unknown CVE ids are refused with 422.',
        body: CveScanBody,
        response: { 202: ScanResource },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const problem = checkCveSelection({ ...(body.cves ? { cves: body.cves } : {}), ...(body.tags ? { tags: body.tags } : {}) });
      if (problem) throw invalid(/tag/i.test(problem) && !/CVE-/.test(problem) ? 'tags' : 'cves', problem);
      return reply.code(202).send(await start(request, 'cve', body.target, 'target', body, runConfig(body, ['target', 'scope', 'max_requests', 'requests_per_second'])));
    },
  );
};
