// /api/v1/shield/sites/:id/certificate: upload (PUT), read (GET) and remove (DELETE) the certificate
// a site is served with over TLS. Uploading switches the site to `tls.mode: custom` (one call: the
// certificate is there to be served); deleting leaves the mode as it is. The key is checked,
// sealed and never returned, logged, audited or evented: audit entries carry names and fingerprint.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import { notFound } from '../../../platform/http/errors.ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import { siteParams } from '../params.ts';
import { requireSite, updateSite } from '../sites/store.ts';
import { CertificateResource, CertificateUpload } from './schemas.ts';
import { certificateFacts, deleteCertificate, findCertificate, storeCertificate, toCertificate } from './store.ts';
import { checkUpload } from './upload-check.ts';

export const certificateRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; secretBox: SecretBox } }> = async (app, { db, secretBox }) => {
  const tags = ['Shield certificates'];
  const path = '/api/v1/shield/sites/:id/certificate';

  app.put(
    path,
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: "Upload a site's certificate",
        description:
          'Stores the certificate chain (PEM, leaf first) and its private key (PEM, unencrypted), replacing any certificate the site had, and sets the site’s `tls.mode` to `custom`: ' +
          'the gateways serve it by SNI within seconds. Refused with 422 naming the field (`certificate` or `private_key`) when the PEM does not parse, the key does not belong to the ' +
          'certificate (or is an RSA key under 2048 bits), the certificate does not cover the site’s domain, or it is expired or not yet valid. The key is sealed at rest and never returned.',
        params: siteParams,
        body: CertificateUpload,
        response: { 200: CertificateResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const site = await requireSite(db, orgId, request.params.id);
      const { certificate, private_key } = request.body;
      checkUpload(site.domain, certificate, private_key);
      const stored = await db.transaction().execute(async (trx) => {
        const current = await requireSite(trx, orgId, site.id);
        const previous = await findCertificate(trx, orgId, site.id);
        const row = await storeCertificate(trx, secretBox, { siteId: site.id, orgId, source: 'custom', certificatePem: certificate, privateKeyPem: private_key });
        if (!row) throw new Error('a custom certificate is always stored');
        await auditRequest(trx, request, {
          action: 'shield_certificate.uploaded',
          target: { type: 'shield_site', id: site.id },
          metadata: { ...certificateFacts(row), previous_fingerprint: previous?.fingerprint ?? null },
        });
        if (current.tls.mode !== 'custom') {
          const tls = { ...current.tls, mode: 'custom' as const };
          await updateSite(trx, orgId, site.id, { tls });
          await auditRequest(trx, request, { action: 'shield_site.tls_changed', target: { type: 'shield_site', id: site.id }, metadata: { from: current.tls, to: tls, reason: 'certificate uploaded' } });
        }
        return row;
      });
      return toCertificate(stored);
    },
  );

  app.get(
    path,
    {
      config: { auth: 'shield:read' },
      schema: {
        tags,
        summary: "Get a site's certificate",
        description: 'The certificate the site is served with, uploaded or obtained by ACME: names, issuer, validity, fingerprint and the chain. Never the key. 404 when the site has none.',
        params: siteParams,
        response: { 200: CertificateResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const site = await requireSite(db, orgId, request.params.id);
      const row = await findCertificate(db, orgId, site.id);
      if (!row) throw notFound('certificate');
      return toCertificate(row);
    },
  );

  app.delete(
    path,
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: "Delete a site's certificate",
        description:
          'Removes the certificate and its key. `tls.mode` stays as it is: a `custom` site then has no certificate to serve until one is uploaded (HTTPS to it fails), an `acme` site gets a new one. ' +
          '404 when the site has none.',
        params: siteParams,
        response: { 204: { type: 'null', description: 'Deleted.' } },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      await db.transaction().execute(async (trx) => {
        const site = await requireSite(trx, orgId, request.params.id);
        const deleted = await deleteCertificate(trx, orgId, site.id);
        if (!deleted) throw notFound('certificate');
        await auditRequest(trx, request, { action: 'shield_certificate.deleted', target: { type: 'shield_site', id: site.id }, metadata: certificateFacts(deleted) });
      });
      return reply.code(204).send(null);
    },
  );
};
