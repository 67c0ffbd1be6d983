// A site as the API answers it: its stored fields (store.ts toSite) with what Aegis computes about
// it — whether the gateway serves it, its domain proof and how to give one, and the certificate it
// is served with (never the key: the key column is not even read here). Lists are assembled with
// one query per table, not one per site.
import type { Db } from '../../../platform/db/database.ts';
import type { ShieldSiteRow } from '../../../platform/db/schema.ts';
import { iso } from '../../../platform/resources/timestamps.ts';
import { proofRecordName, proofRecordValue } from '../../accounts/people/domain-proof.ts';
import type { EdgeSettings } from './edge-settings.ts';
import { domainPeers, siteStatus, type DomainPeer } from './serving.ts';
import { toSite } from './store.ts';

const isoOrNull = (value: Date | null): string | null => (value === null ? null : iso(value));

/** Where an HTTP proof of `domain` is fetched (domain-proof/http-proof.ts reads the same URL). */
export function proofUrl(domain: string, token: string, port: number): string {
  return `http://${domain}${port === 80 ? '' : `:${port}`}/.well-known/aegis-verify/${token}`;
}

export function domainVerification(row: ShieldSiteRow, proofHttpPort: number) {
  return {
    status: row.domain_verified_at !== null ? ('verified' as const) : ('unverified' as const),
    method: row.domain_verified_at !== null ? row.domain_verified_by : null,
    verified_at: isoOrNull(row.domain_verified_at),
    checked_at: isoOrNull(row.domain_checked_at),
    error: row.domain_check_error,
    txt_record: { name: proofRecordName(row.domain), value: proofRecordValue(row.verification_token) },
    http_token: { url: proofUrl(row.domain, row.verification_token, proofHttpPort), body: row.verification_token },
  };
}

async function certificateSummaries(db: Db, siteIds: readonly string[]) {
  if (siteIds.length === 0) return new Map<string, CertificateSummary>();
  const [certificates, orders] = await Promise.all([
    db.selectFrom('shield_certificates').select(['site_id', 'source', 'names', 'issuer', 'not_after', 'fingerprint']).where('site_id', 'in', siteIds).execute(),
    db.selectFrom('shield_certificate_orders').select(['site_id', 'status', 'last_error', 'next_attempt_at']).where('site_id', 'in', siteIds).execute(),
  ]);
  const byId = new Map<string, CertificateSummary>();
  const empty = (): CertificateSummary => ({ source: null, names: [], issuer: null, not_after: null, fingerprint: null, acme_order: null });
  for (const c of certificates) byId.set(c.site_id, { ...empty(), source: c.source, names: c.names, issuer: c.issuer, not_after: iso(c.not_after), fingerprint: c.fingerprint });
  for (const o of orders) {
    const summary = byId.get(o.site_id) ?? empty();
    summary.acme_order = { status: o.status, error: o.last_error, next_attempt_at: isoOrNull(o.next_attempt_at) };
    byId.set(o.site_id, summary);
  }
  return byId;
}

type CertificateSummary = {
  source: 'custom' | 'acme' | null;
  names: string[];
  issuer: string | null;
  not_after: string | null;
  fingerprint: string | null;
  acme_order: { status: 'pending' | 'valid' | 'failed'; error: string | null; next_attempt_at: string | null } | null;
};

/** The API form of `rows`, in their order. */
export async function siteResources(db: Db, rows: readonly ShieldSiteRow[], edge: EdgeSettings) {
  if (rows.length === 0) return [];
  // Every row of one call belongs to one data space (one organisation's environment).
  const [peers, certificates] = await Promise.all([domainPeers(db, rows[0]!.org_id, rows.map((r) => r.domain)), certificateSummaries(db, rows.map((r) => r.id))]);
  const byDomain = new Map<string, DomainPeer[]>();
  for (const peer of peers) byDomain.set(peer.domain, [...(byDomain.get(peer.domain) ?? []), peer]);
  return rows.map((row) => ({
    ...toSite(row),
    status: siteStatus(row, byDomain.get(row.domain) ?? [row], edge.domainProof),
    domain_verification: domainVerification(row, edge.proofHttpPort),
    certificate: certificates.get(row.id) ?? null,
  }));
}

export async function siteResource(db: Db, row: ShieldSiteRow, edge: EdgeSettings) {
  const [resource] = await siteResources(db, [row], edge);
  return resource!;
}

export type SiteResource = Awaited<ReturnType<typeof siteResource>>;
