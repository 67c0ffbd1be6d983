// The bodies of /api/v1/shield/sites/{id}/certificate. The key goes in and never comes out.
import { timestampSchema } from '../../../platform/http/schemas.ts';

/** Far above a key and a chain of a leaf and a few intermediates; bounds what is parsed. */
const MAX_CHAIN_CHARS = 65_536;
const MAX_KEY_CHARS = 16_384;

export const CertificateUpload = {
  type: 'object',
  additionalProperties: false,
  required: ['certificate', 'private_key'],
  properties: {
    certificate: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CHAIN_CHARS,
      description: 'PEM: the certificate for the site’s domain first, then each intermediate that issued the one before it (the root may be left out).',
    },
    private_key: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_KEY_CHARS,
      description: 'PEM private key of the certificate (PKCS#8 `BEGIN PRIVATE KEY`, or `BEGIN RSA/EC PRIVATE KEY`), without a passphrase. Stored sealed; never returned.',
    },
  },
} as const;

export const CertificateResource = {
  type: 'object',
  required: ['site_id', 'source', 'names', 'issuer', 'not_before', 'not_after', 'fingerprint', 'certificate', 'created_at', 'updated_at'],
  properties: {
    site_id: { type: 'string', description: 'The site the certificate serves.' },
    source: { type: 'string', enum: ['custom', 'acme'], description: '`custom`: uploaded; `acme`: obtained by Aegis.' },
    names: { type: 'array', items: { type: 'string' }, description: 'DNS names the certificate covers (its subject alternative names).' },
    issuer: { type: 'string', description: 'The issuer’s distinguished name.' },
    not_before: timestampSchema,
    not_after: timestampSchema,
    fingerprint: { type: 'string', description: 'SHA-256 of the certificate (DER), hex pairs separated by colons.' },
    certificate: { type: 'string', description: 'The chain as stored (PEM, leaf first). The private key is never returned.' },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;
