// The e-mail domains an organisation proved it controls (docs/security.md, "Identity"):
//   GET    /api/v1/orgs/current/domains              list
//   POST   /api/v1/orgs/current/domains              claim a domain: the TXT record to publish
//   GET    /api/v1/orgs/current/domains/:id          one claim and its state
//   POST   /api/v1/orgs/current/domains/:id/verify   read the TXT record now
//   DELETE /api/v1/orgs/current/domains/:id          give the claim up
// Only a verified domain admits people by SSO just in time (`jit_domains`) or finds the
// organisation's SSO from an address. All `admin`, organisation-level, audited.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import { organizationLevel, principalOf } from '../auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { OrganizationDomainRow } from '../../../platform/db/schema.ts';
import { ApiError, conflict, notFound } from '../../../platform/http/errors.ts';
import { domainSchema } from '../people/resources.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { listResponseSchema, nullableTimestampSchema, pageQueryProperties, timestampSchema } from '../../../platform/http/schemas.ts';
import type { TxtLookup } from '../../../platform/net/txt-records.ts';
import { checkProof, proofRecordName, proofRecordValue } from '../people/domain-proof.ts';
import { claimDomain, deleteDomain, findDomain, listDomains, recordCheck, recordCheckFailure, verifiedHolder } from '../people/domain-store.ts';

const domainResource = {
  type: 'object',
  required: ['id', 'domain', 'status', 'verification', 'verified_at', 'checked_at', 'check_error', 'created_at'],
  properties: {
    id: { type: 'string' },
    domain: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'verified'], description: '`verified` while the TXT record holds the token; `pending` before, and again once it is gone.' },
    verification: {
      type: 'object',
      required: ['type', 'name', 'value'],
      properties: {
        type: { type: 'string', enum: ['dns_txt'] },
        name: { type: 'string', description: 'The record name: `_aegis-verify.<domain>`.' },
        value: { type: 'string', description: 'The TXT value to publish there.' },
      },
      description: 'The DNS record that proves control of the domain.',
    },
    verified_at: nullableTimestampSchema,
    checked_at: { ...nullableTimestampSchema, description: 'The last time the record was read (verified domains are read again every day).' },
    check_error: { type: ['string', 'null'], description: 'What the last check found wrong, if it failed.' },
    created_at: timestampSchema,
  },
} as const;

const toDomain = (row: OrganizationDomainRow) => ({
  id: row.id,
  domain: row.domain,
  status: row.verified_at ? ('verified' as const) : ('pending' as const),
  verification: { type: 'dns_txt' as const, name: proofRecordName(row.domain), value: proofRecordValue(row.token) },
  verified_at: row.verified_at?.toISOString() ?? null,
  checked_at: row.checked_at?.toISOString() ?? null,
  check_error: row.check_error,
  created_at: row.created_at.toISOString(),
});

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

/** A unique-index violation: another organisation verified the domain first. */
const isUniqueViolation = (err: unknown): boolean => (err as { code?: string }).code === '23505';

export const domainRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; txt: TxtLookup } }> = async (app, { db, txt }) => {
  app.addHook('onRoute', organizationLevel);
  const tags = ['Domains'];
  const config = { auth: 'admin', managesAccess: true } as const;

  const claimedElsewhere = (domain: string) =>
    conflict(`${domain} is verified by another organisation; it can hold it only while its TXT record stays`, { reason: 'domain_claimed' });

  app.get(
    '/api/v1/orgs/current/domains',
    { config, schema: { tags, summary: 'List domains', querystring: { type: 'object', properties: pageQueryProperties }, response: { 200: listResponseSchema(domainResource) } } },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listDomains(db, principalOf(request).organization.id, decodeCursor(request.query.cursor), limit);
      return toPage(rows, limit, toDomain);
    },
  );

  app.post(
    '/api/v1/orgs/current/domains',
    {
      config,
      schema: {
        tags,
        summary: 'Claim a domain',
        description:
          'Claims an e-mail domain for the organisation and answers with the TXT record to publish (`verification`). The claim does nothing until verified (POST …/domains/:id/verify). Claiming a domain the organisation claimed before returns that claim (200).',
        body: { type: 'object', additionalProperties: false, required: ['domain'], properties: { domain: domainSchema } },
        response: { 201: domainResource, 200: domainResource },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const domain = request.body.domain.toLowerCase();
      const { row, created } = await db.transaction().execute(async (trx) => {
        const claim = await claimDomain(trx, principal.organization.id, domain);
        if (claim.created) await auditRequest(trx, request, { action: 'domain.claimed', target: { type: 'domain', id: claim.row.id }, metadata: { domain } });
        return claim;
      });
      return reply.code(created ? 201 : 200).send(toDomain(row));
    },
  );

  app.get('/api/v1/orgs/current/domains/:id', { config, schema: { tags, summary: 'Get a domain', params: idParams, response: { 200: domainResource } } }, async (request) => {
    const row = await findDomain(db, principalOf(request).organization.id, request.params.id);
    if (!row) throw notFound('domain');
    return toDomain(row);
  });

  app.post(
    '/api/v1/orgs/current/domains/:id/verify',
    {
      config,
      schema: {
        tags,
        summary: 'Verify a domain',
        description:
          'Reads `_aegis-verify.<domain>` now. Found: the domain is verified (200). Not found: 422 with what the record holds instead (`details.found`). The DNS lookup failed: 503, nothing changes. Another organisation holds the domain verified: 409 `domain_claimed`.',
        params: idParams,
        response: { 200: domainResource },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const row = await findDomain(db, principal.organization.id, request.params.id);
      if (!row) throw notFound('domain');
      const holder = await verifiedHolder(db, row.domain);
      if (holder && holder !== row.org_id) throw claimedElsewhere(row.domain);
      const outcome = await checkProof(txt, row);
      if (outcome.verified === null) {
        await recordCheckFailure(db, row.id, outcome.reason);
        throw new ApiError(503, 'unavailable', `${outcome.reason}; try again`, { reason: 'dns_unavailable' });
      }
      try {
        const checked = await db.transaction().execute(async (trx) => {
          const updated = await recordCheck(trx, row.id, { verified: outcome.verified, error: outcome.verified ? null : outcome.reason });
          if (outcome.verified && !row.verified_at) await auditRequest(trx, request, { action: 'domain.verified', target: { type: 'domain', id: row.id }, metadata: { domain: row.domain } });
          if (!outcome.verified && row.verified_at) await auditRequest(trx, request, { action: 'domain.unverified', target: { type: 'domain', id: row.id }, metadata: { domain: row.domain, reason: outcome.reason } });
          return updated;
        });
        if (!outcome.verified) {
          throw new ApiError(422, 'validation_failed', `${row.domain} is not verified: ${outcome.reason}. Publish a TXT record ${proofRecordName(row.domain)} with the value ${proofRecordValue(row.token)}, then try again (DNS changes can take a while to show).`, {
            reason: 'record_not_found',
            expected: { name: proofRecordName(row.domain), value: proofRecordValue(row.token) },
            found: outcome.found,
          });
        }
        return toDomain(checked);
      } catch (err) {
        if (isUniqueViolation(err)) throw claimedElsewhere(row.domain);
        throw err;
      }
    },
  );

  app.delete(
    '/api/v1/orgs/current/domains/:id',
    { config, schema: { tags, summary: 'Remove a domain', description: 'Gives the claim up: the domain admits nobody any more. Audited as `domain.removed`.', params: idParams } },
    async (request, reply) => {
      const principal = principalOf(request);
      await db.transaction().execute(async (trx) => {
        const removed = await deleteDomain(trx, principal.organization.id, request.params.id);
        if (!removed) throw notFound('domain');
        await auditRequest(trx, request, { action: 'domain.removed', target: { type: 'domain', id: removed.id }, metadata: { domain: removed.domain, was_verified: removed.verified_at !== null } });
      });
      return reply.code(204).send();
    },
  );
};
