// ShieldCertificate: the certificate a site serves (`tls.mode: custom`), a singleton of its site
// written with PUT /sites/{id}/certificate. Two things set it apart from the other kinds:
// - the private key is write-only. The planner compares the certificate through its fingerprint,
//   which GET returns (a different key cannot serve the same certificate, so a key change is a
//   certificate change); config names the key (`{ env }` / `{ file }`) and it is read only when
//   the upload is sent.
// - the API keeps no labels on it: it belongs to whoever owns its site (`ownedWithParent`), and is
//   named after the site. Certificates obtained by ACME are the server's, not managed objects.
import { X509Certificate } from 'node:crypto';
import { shieldCertificateMeta } from '../../schemas/index.ts';
import { AegisApiError, type AegisClient } from '../../client/client.ts';
import { asFields, defineKind, identityFields, requireSite, type Fields } from './kind.ts';
import { revealSecret } from './secret-reference.ts';

const ITEM = '/api/v1/shield/sites/{id}/certificate';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * The SHA-256 fingerprint of the first certificate of a PEM chain, as the API shows it (upper-case
 * hex pairs and colons); the text itself when it holds no readable certificate (the API refuses it).
 */
export function certificateFingerprint(pem: unknown): string {
  const text = String(pem ?? '');
  const leaf = PEM_CERTIFICATE.exec(text)?.[0];
  if (!leaf) return `unreadable certificate (${text.length} characters)`;
  try {
    return new X509Certificate(leaf).fingerprint256;
  } catch {
    return `unreadable certificate (${text.length} characters)`;
  }
}

/**
 * Create and update alike: the whole pair, the key read now (labels and other planner fields stay
 * behind). A key sent alone (only its spelling changed) goes with the chain the site has.
 */
async function upload(client: AegisClient, siteId: string, fields: Fields): Promise<Fields> {
  const certificate = typeof fields.certificate === 'string' ? fields.certificate : String((await current(client, siteId))?.certificate ?? '');
  const body = { certificate, private_key: revealSecret(fields.private_key, 'private_key') };
  return asFields(await client.PUT(ITEM, { params: { path: { id: siteId } }, body }));
}

async function current(client: AegisClient, siteId: string): Promise<Fields | null> {
  try {
    return asFields(await client.GET(ITEM, { params: { path: { id: siteId } } }));
  } catch (err) {
    if (err instanceof AegisApiError && err.status === 404) return null;
    throw err;
  }
}

export const shieldCertificate = defineKind({
  kind: 'ShieldCertificate',
  order: 1,
  singleton: true,
  // Deleting it leaves a `custom` site nothing to serve over HTTPS.
  protective: true,
  ownedWithParent: true,
  identity: identityFields(shieldCertificateMeta.identity),
  describe: ({ id, fields }) => `certificate of site ${id} (${Array.isArray(fields.names) ? fields.names.join(', ') : '?'}, ${String(fields.fingerprint ?? '')})`,
  digest: { field: 'certificate', as: 'fingerprint', of: certificateFingerprint },
  endpoints: [
    { method: 'get', path: ITEM },
    { method: 'put', path: ITEM },
    { method: 'delete', path: ITEM },
  ],
  operations: {
    // Only an uploaded certificate: one obtained by ACME follows `tls.mode: acme` and is not config's to manage.
    list: async (client, siteId) => {
      const found = await current(client, requireSite(siteId));
      return found && found.source === 'custom' ? [found] : [];
    },
    get: async (client, _id, siteId) => asFields(await client.GET(ITEM, { params: { path: { id: requireSite(siteId) } } })),
    create: async (client, fields, siteId) => ({ ...(await upload(client, requireSite(siteId), fields)), id: requireSite(siteId) }),
    update: async (client, id, changes) => ({ ...(await upload(client, id, changes)), id }),
    remove: async (client, id) => void (await client.DELETE(ITEM, { params: { path: { id } } })),
  },
  config: {
    fileField: {
      field: 'certificate',
      fileField: 'certificate_file',
      description: 'Path of a file holding the PEM chain, relative to this YAML file; it must stay inside the config directory.',
    },
    secretField: {
      field: 'private_key',
      description:
        'Where the PEM private key is: `{ env: NAME }` (an environment variable of the process running `aegis`) or `{ file: PATH }` (relative to this YAML file, inside the config ' +
        'directory). The key itself is refused here: it must not be committed.',
    },
  },
  dump: { placement: 'with-parent', namePrefix: 'certificate', sideFileSuffix: '.crt' },
  provider: { subcategory: 'Shield', dependsOn: { names: ['certificate'], issuer: ['certificate'], not_before: ['certificate'], not_after: ['certificate'], fingerprint: ['certificate'], updated_at: ['certificate', 'private_key'] }, readBackAfterWrite: true },
});
