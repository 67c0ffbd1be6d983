// POST /api/v1/advisories: OSV records for the SCA scanner, imported in batches by
// `aegis advisories import DIR|ZIP`. Advisories are shared by every organisation, so writing them
// needs `admin`; a batch is validated whole and stored in one transaction.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../platform/audit-log.ts';
import type { Db } from '../../platform/db/database.ts';
import { validationFailed } from '../../platform/http/errors.ts';
import { parseOsvRecord, type OsvRecord } from '../../scanners/sca/osv.ts';
import { DbAdvisoryStore } from './store.ts';

export const MAX_ADVISORIES_PER_REQUEST = 1_000;

export const advisoryRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const store = new DbAdvisoryStore(db);
  const tags = ['Advisories'];
  app.post(
    '/api/v1/advisories',
    {
      config: { auth: 'admin' },
      bodyLimit: 32 * 1024 * 1024,
      schema: {
        tags,
        summary: 'Import OSV advisories',
        description:
          `Up to ${MAX_ADVISORIES_PER_REQUEST} OSV records (https://ossf.github.io/osv-schema/) per request. A record replaces a stored one with the same id only when its ` +
          '`modified` is later. Any invalid record refuses the whole batch (422, `details.records`).',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['advisories'],
          properties: { advisories: { type: 'array', minItems: 1, maxItems: MAX_ADVISORIES_PER_REQUEST, items: { type: 'object' } } },
        },
        response: {
          200: {
            type: 'object',
            required: ['inserted', 'updated', 'unchanged'],
            properties: { inserted: { type: 'integer' }, updated: { type: 'integer' }, unchanged: { type: 'integer' } },
          },
        },
      },
    },
    async (request) => {
      const records: OsvRecord[] = [];
      const problems: { index: number; id: unknown; errors: string[] }[] = [];
      request.body.advisories.forEach((item, index) => {
        const parsed = parseOsvRecord(item);
        if (parsed.ok) records.push(parsed.record);
        else problems.push({ index, id: (item as { id?: unknown }).id ?? null, errors: parsed.errors });
      });
      if (problems.length > 0) throw validationFailed(`${problems.length} advisories are not valid OSV records`, { records: problems.slice(0, 100) });
      const result = await store.upsert(records);
      await auditRequest(db, request, { action: 'advisories.imported', metadata: { ...result } });
      return result;
    },
  );
};
