// An organisation's SSO connection (spec 5.4): OIDC (issuer, client id, client secret sealed at
// rest) or SAML 2.0 (the IdP's entity id, sign-in URL and signing certificates, read from its
// metadata), whether it is enforced, and the e-mail domains whose people may join on first sign-in.
import { sql } from 'kysely';
import type { Role } from '../auth/roles.ts';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { SsoConnectionRow } from '../../../platform/db/schema.ts';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface SamlSettings {
  metadataUrl: string | null;
  metadataXml: string | null;
  idpEntityId: string;
  ssoUrl: string;
  /** The IdP's signing certificates (PEM bodies, base64 without headers). */
  certificates: string[];
}

export interface SsoConnection {
  orgId: string;
  protocol: 'oidc' | 'saml';
  oidc: OidcSettings | null;
  saml: SamlSettings | null;
  enforced: boolean;
  /** Verified e-mail domains whose people become members on their first SSO sign-in. */
  jitDomains: string[];
  jitRole: Role;
  /** Last successful "Try login"; enforcement needs one since the settings last changed. */
  testedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type SsoSettings = { protocol: 'oidc'; oidc: OidcSettings } | { protocol: 'saml'; saml: SamlSettings };

const sealContext = (orgId: string) => `sso:${orgId}`;

function toConnection(row: SsoConnectionRow, box: SecretBox): SsoConnection {
  return {
    orgId: row.org_id,
    protocol: row.protocol,
    oidc:
      row.protocol === 'oidc' && row.oidc_issuer && row.oidc_client_id && row.oidc_client_secret
        ? { issuer: row.oidc_issuer, clientId: row.oidc_client_id, clientSecret: box.open(row.oidc_client_secret, sealContext(row.org_id)) }
        : null,
    saml:
      row.protocol === 'saml' && row.saml_idp_entity_id && row.saml_idp_sso_url
        ? { metadataUrl: row.saml_metadata_url, metadataXml: row.saml_metadata_xml, idpEntityId: row.saml_idp_entity_id, ssoUrl: row.saml_idp_sso_url, certificates: row.saml_idp_certs }
        : null,
    enforced: row.enforced,
    jitDomains: row.jit_domains,
    jitRole: row.jit_role as Role,
    testedAt: row.tested_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findSsoConnection(db: Db, box: SecretBox, orgId: string): Promise<SsoConnection | undefined> {
  const row = await db.selectFrom('sso_connections').selectAll().where('org_id', '=', orgId).executeTakeFirst();
  return row && toConnection(row, box);
}

/** The connection of the organisation that holds `domain` verified, if it has one (an unverified claim finds nothing). */
export async function findSsoConnectionForDomain(db: Db, box: SecretBox, domain: string): Promise<SsoConnection | undefined> {
  const row = await db
    .selectFrom('sso_connections')
    .innerJoin('organization_domains', 'organization_domains.org_id', 'sso_connections.org_id')
    .selectAll('sso_connections')
    .where('organization_domains.domain', '=', domain.toLowerCase())
    .where('organization_domains.verified_at', 'is not', null)
    .executeTakeFirst();
  return row && toConnection(row, box);
}

/** Which of `domains` the organisation holds verified. */
export async function verifiedAmong(db: Db, orgId: string, domains: readonly string[]): Promise<Set<string>> {
  if (domains.length === 0) return new Set();
  const rows = await db.selectFrom('organization_domains').select('domain').where('org_id', '=', orgId).where('domain', 'in', [...domains]).where('verified_at', 'is not', null).execute();
  return new Set(rows.map((r) => r.domain));
}

/**
 * Creates or replaces the organisation's connection. Changed settings must be tried again before
 * they can be enforced, so `tested_at` is cleared; enforcement itself is left as it was (the
 * routes refuse to change the settings of an enforced connection).
 */
export async function saveSsoConnection(
  db: Db,
  box: SecretBox,
  orgId: string,
  settings: SsoSettings,
  options: { jitDomains: string[]; jitRole: Role },
): Promise<SsoConnection> {
  const values = {
    protocol: settings.protocol,
    oidc_issuer: settings.protocol === 'oidc' ? settings.oidc.issuer : null,
    oidc_client_id: settings.protocol === 'oidc' ? settings.oidc.clientId : null,
    oidc_client_secret: settings.protocol === 'oidc' ? box.seal(settings.oidc.clientSecret, sealContext(orgId)) : null,
    saml_metadata_url: settings.protocol === 'saml' ? settings.saml.metadataUrl : null,
    saml_metadata_xml: settings.protocol === 'saml' ? settings.saml.metadataXml : null,
    saml_idp_entity_id: settings.protocol === 'saml' ? settings.saml.idpEntityId : null,
    saml_idp_sso_url: settings.protocol === 'saml' ? settings.saml.ssoUrl : null,
    saml_idp_certs: JSON.stringify(settings.protocol === 'saml' ? settings.saml.certificates : []),
    jit_domains: JSON.stringify([...new Set(options.jitDomains.map((d) => d.toLowerCase()))]),
    jit_role: options.jitRole,
    tested_at: null,
    updated_at: new Date(),
  };
  const row = await db
    .insertInto('sso_connections')
    .values({ org_id: orgId, ...values })
    .onConflict((oc) => oc.column('org_id').doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toConnection(row, box);
}

export async function deleteSsoConnection(db: Db, orgId: string): Promise<boolean> {
  const row = await db.deleteFrom('sso_connections').where('org_id', '=', orgId).returning('org_id').executeTakeFirst();
  return row !== undefined;
}

export async function markSsoTested(db: Db, orgId: string): Promise<void> {
  await db.updateTable('sso_connections').set({ tested_at: sql<Date>`now()` }).where('org_id', '=', orgId).execute();
}

export async function setSsoEnforced(db: Db, orgId: string, enforced: boolean): Promise<void> {
  await db.updateTable('sso_connections').set({ enforced, updated_at: new Date() }).where('org_id', '=', orgId).execute();
}

/** Remembers a SAML assertion until it expires; false when it was seen before (a replay). */
export async function rememberSamlAssertion(db: Db, orgId: string, assertionId: string, expiresAt: Date): Promise<boolean> {
  const row = await db
    .insertInto('saml_assertions')
    .values({ org_id: orgId, assertion_id: assertionId, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['org_id', 'assertion_id']).doNothing())
    .returning('assertion_id')
    .executeTakeFirst();
  return row !== undefined;
}
