// The certificate a site is served with (one per site): uploaded (`custom`) or obtained by ACME
// (`acme`, api/shield/acme/). The chain is kept as normalised PEM with what the API
// shows of it; the private key is sealed with the server key, bound to the site
// (`shield-certificate:<site id>`), and only the gateways open it. Writing bumps `updated_at`,
// which the gateways' certificate cache watches. No function here returns the key.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import type { CertificateSource, ShieldCertificateRow } from '../../../platform/db/schema.ts';
import { CertificateError, keyMatches, parseChain, parsePrivateKey } from '../../../platform/crypto/certificates.ts';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import { newId } from '../../../platform/ids.ts';
import { iso } from '../../../platform/resources/timestamps.ts';

export interface StoreCertificateInput {
  siteId: string;
  orgId: string;
  source: CertificateSource;
  /** The leaf first, then its chain. */
  certificatePem: string;
  privateKeyPem: string;
}

/** The context the key is sealed under: a sealed key copied to another site's row does not open. */
export const certificateKeyContext = (siteId: string): string => `shield-certificate:${siteId}`;

/** Every column but the sealed key: what the API reads. */
export type PublicCertificate = Omit<ShieldCertificateRow, 'private_key_sealed'>;
const PUBLIC_COLUMNS = ['id', 'org_id', 'site_id', 'source', 'certificate_pem', 'names', 'issuer', 'not_before', 'not_after', 'fingerprint', 'created_at', 'updated_at'] as const;

async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * Stores (or replaces) the site's certificate and key. The chain is read and the key checked
 * against it here too, so no caller can store a pair that cannot serve (CertificateError naming
 * the field). An ACME certificate is stored only while the site still asks for one
 * (`tls.mode: acme`): an order that finishes after the owner uploaded a certificate or turned TLS
 * off does not replace their choice; then null is returned and nothing changes.
 */
export async function storeCertificate(db: Db, box: SecretBox, input: StoreCertificateInput): Promise<PublicCertificate | null> {
  const chain = parseChain(input.certificatePem);
  const key = parsePrivateKey(input.privateKeyPem);
  if (!keyMatches(chain, key)) throw new CertificateError('private_key', 'does not belong to the certificate (its public key differs)');
  const sealed = box.seal(key.export({ type: 'pkcs8', format: 'pem' }).toString(), certificateKeyContext(input.siteId));
  return inTransaction(db, async (trx) => {
    const site = await trx.selectFrom('shield_sites').select('tls').where('id', '=', input.siteId).where('org_id', '=', input.orgId).forUpdate().executeTakeFirst();
    if (!site) throw new Error(`no Shield site ${input.siteId} in ${input.orgId}`);
    if (input.source === 'acme' && site.tls.mode !== 'acme') return null;
    const values = {
      source: input.source,
      certificate_pem: chain.pem,
      private_key_sealed: sealed,
      names: JSON.stringify(chain.names),
      issuer: chain.issuer,
      not_before: chain.notBefore,
      not_after: chain.notAfter,
      fingerprint: chain.fingerprint,
    };
    return trx
      .insertInto('shield_certificates')
      .values({ id: newId('cert'), org_id: input.orgId, site_id: input.siteId, ...values })
      .onConflict((oc) => oc.column('site_id').doUpdateSet({ ...values, updated_at: sql<Date>`now()` }))
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
  });
}

export async function findCertificate(db: Db, orgId: string, siteId: string): Promise<PublicCertificate | undefined> {
  return db.selectFrom('shield_certificates').select(PUBLIC_COLUMNS).where('org_id', '=', orgId).where('site_id', '=', siteId).executeTakeFirst();
}

export async function deleteCertificate(db: Db, orgId: string, siteId: string): Promise<PublicCertificate | undefined> {
  return db.deleteFrom('shield_certificates').where('org_id', '=', orgId).where('site_id', '=', siteId).returning(PUBLIC_COLUMNS).executeTakeFirst();
}

/** What audit entries and events say of a certificate: never the key, not even the chain. */
export const certificateFacts = (c: PublicCertificate) => ({ source: c.source, names: c.names, issuer: c.issuer, not_after: iso(c.not_after), fingerprint: c.fingerprint });

export function toCertificate(c: PublicCertificate) {
  return {
    site_id: c.site_id,
    source: c.source,
    names: c.names,
    issuer: c.issuer,
    not_before: iso(c.not_before),
    not_after: iso(c.not_after),
    fingerprint: c.fingerprint,
    certificate: c.certificate_pem,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}
