// POST /api/v1/shield/sites/:id/verify-domain: check the proof of the site's domain now — the DNS TXT
// record or the HTTP token the site's `domain_verification` names — and answer the site. 422 with
// what was found when the proof is not there, 409 when the rules refuse it (record.ts), 503 when
// the resolver or the server could not be reached (nothing changes then).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { ShieldSiteResource } from '../../../schemas/index.ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { ShieldSiteRow } from '../../../platform/db/schema.ts';
import { ApiError, conflict } from '../../../platform/http/errors.ts';
import type { OutboundPolicy } from '../../../platform/net/outbound.ts';
import type { TxtLookup } from '../../../platform/net/txt-records.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import { checkProof, type ProofOutcome } from '../../accounts/people/domain-proof.ts';
import { siteParams } from '../params.ts';
import type { EdgeSettings } from '../sites/edge-settings.ts';
import { requireSite } from '../sites/store.ts';
import { domainVerification, siteResource } from '../sites/view.ts';
import { checkHttpProof, httpProofFetch } from './http-proof.ts';
import { recordDomainProof } from './record.ts';
import { markUnverified, noteCheck } from './store.ts';

export interface DomainProofDeps {
  db: Db;
  edge: EdgeSettings;
  /** Reads `_aegis-verify.<domain>` (AEGIS_VERIFICATION_DNS_SERVERS). */
  txt: TxtLookup;
  /** The server's tenant policy (api/outbound-policy.ts): HTTP proofs reach public addresses only. */
  outbound: OutboundPolicy;
}

const VerifyDomainBody = {
  type: 'object',
  additionalProperties: false,
  required: ['method'],
  properties: {
    method: { type: 'string', enum: ['dns', 'http'], description: '`dns`: read the TXT record `domain_verification.txt_record`; `http`: GET `domain_verification.http_token.url`.' },
  },
} as const;

export const domainProofRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: DomainProofDeps }> = async (app, { db, edge, txt, outbound }) => {
  const fetcher = httpProofFetch(outbound);
  const check = (site: ShieldSiteRow, method: 'dns' | 'http'): Promise<ProofOutcome> =>
    method === 'dns'
      ? checkProof(txt, { domain: site.domain, token: site.verification_token })
      : checkHttpProof(fetcher, { domain: site.domain, token: site.verification_token, port: edge.proofHttpPort });

  app.post(
    '/api/v1/shield/sites/:id/verify-domain',
    {
      config: { auth: 'shield:write' },
      schema: {
        tags: ['Shield sites'],
        summary: "Prove control of a site's domain",
        description:
          'Checks now that the domain publishes this site’s token — `dns`: a TXT record `_aegis-verify.<domain>` holding `aegis-verify=<token>`; `http`: `http://<domain>/.well-known/aegis-verify/<token>` ' +
          'answering 200 with the token — and answers the site with `domain_verification` updated. A verified site serves its domain (and takes it from other organisations’ unverified sites); ' +
          'a domain another organisation verified is never taken over (409). 422 with what was found when the proof is not there; 503 when DNS or the server could not be reached. ' +
          'DNS proofs are checked again periodically: remove the record and the site is unverified.',
        params: siteParams,
        body: VerifyDomainBody,
        response: { 200: ShieldSiteResource },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { method } = request.body;
      const site = await requireSite(db, principal.orgId, request.params.id);
      const outcome = await check(site, method);
      if (outcome.verified === null) {
        await noteCheck(db, site.id, outcome.reason);
        throw new ApiError(503, 'unavailable', `${outcome.reason}; try again`, { reason: method === 'dns' ? 'dns_unavailable' : 'http_unavailable' });
      }
      if (!outcome.verified) {
        await db.transaction().execute(async (trx) => {
          // A DNS proof whose record is gone is gone, as the periodic re-check would find.
          if (method === 'dns' && site.domain_verified_by === 'dns' && site.domain_verified_at !== null) {
            await markUnverified(trx, site.id, outcome.reason);
            await auditRequest(trx, request, { action: 'shield_site.domain_unverified', target: { type: 'shield_site', id: site.id }, metadata: { domain: site.domain, reason: outcome.reason } });
          } else await noteCheck(trx, site.id, outcome.reason);
        });
        const how = domainVerification(site, edge.proofHttpPort);
        const expected = method === 'dns' ? how.txt_record : how.http_token;
        const todo = method === 'dns' ? `Publish a TXT record ${how.txt_record.name} with the value ${how.txt_record.value}` : `Serve ${how.http_token.body} at ${how.http_token.url}`;
        throw new ApiError(422, 'validation_failed', `${site.domain} is not verified: ${outcome.reason}. ${todo}, then try again.`, { reason: 'proof_not_found', method, expected, found: outcome.found });
      }
      const result = await recordDomainProof(db, { siteId: site.id, domainProof: edge.domainProof, actor: principal.actor, ip: request.ip }, method);
      if (!result.verified) throw conflict(`${site.domain} is not verified: ${result.reason}`, { reason: 'proof_refused', method });
      return siteResource(db, result.site, edge);
    },
  );
};
