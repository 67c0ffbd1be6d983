// ShieldCertificate: the certificate a site serves over TLS (`tls.mode: custom`), uploaded with
// PUT /api/v1/shield/sites/{id}/certificate. A singleton of its site. The private key is
// write-only: it goes in and never comes out, so tools compare the certificate's fingerprint
// (which a different key cannot match) instead of the key.
import { createdAtSchema, siteIdSchema, updatedAtSchema, type KindMeta } from './common.ts';

/** Bounds as the API's (api/shield/certificates/schemas.ts): a chain of a leaf and a few intermediates, one key. */
export const MAX_CERTIFICATE_CHARS = 65_536;
export const MAX_PRIVATE_KEY_CHARS = 16_384;

const properties = {
  certificate: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_CERTIFICATE_CHARS,
    description: 'PEM: the certificate for the site’s domain first, then each intermediate that issued the one before it (the root may be left out).',
  },
  private_key: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_PRIVATE_KEY_CHARS,
    writeOnly: true,
    description:
      'PEM private key of the certificate (PKCS#8 `BEGIN PRIVATE KEY`, or `BEGIN RSA/EC PRIVATE KEY`), without a passphrase. Stored sealed by Aegis and never returned.',
  },
} as const;

export const ShieldCertificateSpec = {
  $id: 'https://aegis.dev/schemas/ShieldCertificate.json',
  title: 'ShieldCertificate',
  description:
    'A certificate uploaded for a site (`tls.mode: custom`): the chain and its private key, which the gateways serve by SNI. The key is never read back: drift is found by comparing ' +
    'the SHA-256 fingerprint of the configured leaf certificate with the `fingerprint` the API reports for the one it serves (a different key cannot serve the same certificate).',
  type: 'object',
  additionalProperties: false,
  required: ['certificate', 'private_key'],
  properties,
} as const;

const timestamp = { type: 'string', format: 'date-time', readOnly: true } as const;

export const ShieldCertificateResource = {
  type: 'object',
  required: ['site_id', 'source', 'names', 'issuer', 'not_before', 'not_after', 'fingerprint', 'certificate', 'created_at', 'updated_at'],
  properties: {
    site_id: siteIdSchema,
    source: { type: 'string', enum: ['custom', 'acme'], readOnly: true, description: '`custom`: uploaded; `acme`: obtained by Aegis (not a managed object).' },
    names: { type: 'array', items: { type: 'string' }, readOnly: true, description: 'DNS names the certificate covers (its subject alternative names).' },
    issuer: { type: 'string', readOnly: true, description: 'The issuer’s distinguished name.' },
    not_before: { ...timestamp, description: 'Start of the certificate’s validity.' },
    not_after: { ...timestamp, description: 'End of the certificate’s validity.' },
    fingerprint: { type: 'string', readOnly: true, description: 'SHA-256 of the leaf certificate (DER), upper-case hex pairs separated by colons.' },
    certificate: { type: 'string', description: 'The chain as stored (PEM, leaf first).' },
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

export const shieldCertificateMeta: KindMeta = {
  kind: 'ShieldCertificate',
  terraformType: 'aegis_shield_certificate',
  parent: 'ShieldSite',
  identity: [],
  mutable: ['certificate', 'private_key'],
  computed: ['site_id', 'names', 'issuer', 'not_before', 'not_after', 'fingerprint', 'created_at', 'updated_at'],
  sensitive: ['private_key'],
};
