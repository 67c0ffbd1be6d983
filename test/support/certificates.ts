// Certificates for tests, made with the `openssl` command: a local CA and leaves it signs (so a
// client verifies the chain against that CA, as it would a public one), and the rows the gateway
// serves them from — `shield_certificates` as the certificate store writes them (the key sealed with
// the server key, context `shield-certificate:<site id>`) and `acme_challenges` as ACME orders do.
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parseChain } from '../../platform/crypto/certificates.ts';
import { loadServerKey, seal } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import type { SiteTlsSettings } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';

export interface TestCa {
  certPem: string;
  keyPem: string;
  /** Where its files are (an OCSP responder reads them). */
  dir: string;
  certPath: string;
  keyPath: string;
  /** Issued leaves, for an `openssl ocsp` index. */
  issued: { serialHex: string; subject: string; notAfter: Date }[];
  close(): void;
}

export interface TestLeaf {
  /** The leaf alone, and the leaf followed by the CA (what is stored and served). */
  certPem: string;
  chainPem: string;
  keyPem: string;
  fingerprint: string;
  serialHex: string;
}

const openssl = (args: string[], cwd: string): void => {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
};

/** A throwaway CA (ECDSA P-256), valid for 30 days. */
export function makeCa(name = 'Aegis Test CA'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-ca-'));
  openssl(
    ['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '30', '-subj', `/CN=${name}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    dir,
  );
  return {
    certPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    keyPem: readFileSync(join(dir, 'ca.key'), 'utf8'),
    dir,
    certPath: join(dir, 'ca.crt'),
    keyPath: join(dir, 'ca.key'),
    issued: [],
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface LeafOptions {
  days?: number;
  /** An OCSP responder URL written into Authority Information Access. */
  ocspUrl?: string;
}

/** A leaf for `names` (subject alternative names), signed by `ca`. */
export function makeLeaf(ca: TestCa, names: string[], options: LeafOptions = {}): TestLeaf {
  const id = randomBytes(6).toString('hex');
  // 16 hex digits, no leading zero: the serial reads the same here, in openssl and in an OCSP index.
  const serial = randomBytes(8);
  serial[0] = (serial[0]! & 0x6f) | 0x10;
  const serialHex = serial.toString('hex').toUpperCase();
  const ext = [
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
    ...(options.ocspUrl ? [`authorityInfoAccess=OCSP;URI:${options.ocspUrl}`] : []),
  ];
  writeFileSync(join(ca.dir, `${id}.ext`), `${ext.join('\n')}\n`);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${id}.key`, '-out', `${id}.csr`, '-subj', `/CN=${names[0]}`], ca.dir);
  openssl(['x509', '-req', '-in', `${id}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${serialHex}`, '-out', `${id}.crt`, '-days', String(options.days ?? 30), '-extfile', `${id}.ext`], ca.dir);
  const certPem = readFileSync(join(ca.dir, `${id}.crt`), 'utf8');
  const leaf = new X509Certificate(certPem);
  ca.issued.push({ serialHex, subject: `/CN=${names[0]}`, notAfter: new Date(leaf.validTo) });
  return { certPem, chainPem: certPem + ca.certPem, keyPem: readFileSync(join(ca.dir, `${id}.key`), 'utf8'), fingerprint: leaf.fingerprint256, serialHex };
}

/** The server key a test server seals with (its data dir's, unless AEGIS_SECRET_KEY was given). */
export const testServerKey = (dataDir: string): Promise<Buffer> => loadServerKey(dataDir, undefined);

/** Stores (or replaces) a site's certificate as the certificate store does; bumps updated_at. */
export async function storeTestCertificate(db: Db, serverKey: Buffer, input: { siteId: string; orgId: string; chainPem: string; keyPem: string; source?: 'custom' | 'acme' }): Promise<void> {
  const chain = parseChain(input.chainPem);
  const values = {
    source: input.source ?? 'custom',
    certificate_pem: chain.pem,
    private_key_sealed: seal(serverKey, input.keyPem, `shield-certificate:${input.siteId}`),
    names: JSON.stringify(chain.names),
    issuer: chain.issuer,
    not_before: chain.notBefore,
    not_after: chain.notAfter,
    fingerprint: chain.fingerprint,
  };
  await db
    .insertInto('shield_certificates')
    .values({ id: newId('cert'), org_id: input.orgId, site_id: input.siteId, ...values })
    .onConflict((oc) => oc.column('site_id').doUpdateSet({ ...values, updated_at: sql<Date>`clock_timestamp()` }))
    .execute();
}

/** Sets a site's TLS settings directly (the gateway re-reads the site on its next poll). */
export async function setSiteTls(db: Db, siteId: string, tls: Partial<SiteTlsSettings>): Promise<void> {
  const full: SiteTlsSettings = { mode: 'custom', redirect_http: false, hsts: null, min_version: '1.2', ...tls };
  await db.updateTable('shield_sites').set({ tls: JSON.stringify(full) }).where('id', '=', siteId).execute();
}

/** An HTTP-01 challenge row, as an ACME order publishes it. */
export async function publishHttp01(db: Db, input: { domain: string; token: string; keyAuthorization: string; expiresInMs?: number }): Promise<string> {
  const id = newId('acmech');
  await db
    .insertInto('acme_challenges')
    .values({ id, domain: input.domain, type: 'http-01', token: input.token, key_authorization: input.keyAuthorization, certificate_pem: null, private_key_sealed: null, expires_at: new Date(Date.now() + (input.expiresInMs ?? 60_000)) })
    .execute();
  return id;
}

/**
 * A TLS-ALPN-01 challenge row (RFC 8737): a self-signed certificate for `domain` with the critical
 * acmeIdentifier extension holding SHA-256 of the key authorization; its key sealed to the row.
 */
export async function publishTlsAlpn01(db: Db, serverKey: Buffer, input: { domain: string; token: string; keyAuthorization: string }): Promise<{ id: string; certPem: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'aegis-alpn-'));
  try {
    const digest = createHash('sha256').update(input.keyAuthorization).digest('hex');
    openssl(
      ['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'c.key', '-out', 'c.crt', '-days', '7', '-subj', `/CN=${input.domain}`,
        '-addext', `subjectAltName=DNS:${input.domain}`, '-addext', `1.3.6.1.5.5.7.1.31=critical,DER:0420${digest}`],
      dir,
    );
    const certPem = readFileSync(join(dir, 'c.crt'), 'utf8');
    const id = newId('acmech');
    await db
      .insertInto('acme_challenges')
      .values({
        id,
        domain: input.domain,
        type: 'tls-alpn-01',
        token: input.token,
        key_authorization: input.keyAuthorization,
        certificate_pem: certPem,
        private_key_sealed: seal(serverKey, readFileSync(join(dir, 'c.key'), 'utf8'), `acme-challenge:${id}`),
        expires_at: new Date(Date.now() + 60_000),
      })
      .execute();
    return { id, certPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
