// Which site the gateway serves a domain for, computed the way gateway/sites/registry.ts decides
// it, so the API can say what a site's traffic does: within one environment, a verified site before
// any unverified one, the oldest first among equals (ids are ULIDs); with proof required (live
// sites under AEGIS_SHIELD_DOMAIN_PROOF=required) an unverified site serves nothing. The sandbox
// never needs proof.
import type { Db } from '../../../platform/db/database.ts';
import { environmentOf, inEnvironment } from '../../../platform/db/environments.ts';
import type { ShieldSiteRow } from '../../../platform/db/schema.ts';

export type DomainPeer = Pick<ShieldSiteRow, 'id' | 'org_id' | 'domain' | 'domain_verified_at'>;
export type SiteStatus = 'active' | 'pending' | 'superseded';
export type DomainProofMode = 'required' | 'contested';

/** Whether sites of `orgId`'s environment need proof before they serve. */
export const proofRequired = (mode: DomainProofMode, orgId: string): boolean => mode === 'required' && environmentOf(orgId) === 'live';

/** The site serving a domain among every site of one environment registered for it. */
export function servingSite<P extends DomainPeer>(peers: readonly P[], required: boolean): P | undefined {
  let best: P | undefined;
  for (const peer of peers) {
    const verified = peer.domain_verified_at !== null;
    if (required && !verified) continue;
    if (!best) best = peer;
    else {
      const bestVerified = best.domain_verified_at !== null;
      if ((verified && !bestVerified) || (verified === bestVerified && peer.id < best.id)) best = peer;
    }
  }
  return best;
}

/** `active` when it serves; `superseded` when another organisation's verified site does; `pending` otherwise (proof would change it). */
export function siteStatus(site: DomainPeer, peers: readonly DomainPeer[], mode: DomainProofMode): SiteStatus {
  const serving = servingSite(peers, proofRequired(mode, site.org_id));
  if (serving?.id === site.id) return 'active';
  if (serving && serving.domain_verified_at !== null) return 'superseded';
  return 'pending';
}

/** Every site of the same environment as `orgId` registered for one of `domains`, the sites asked about included. */
export async function domainPeers(db: Db, orgId: string, domains: readonly string[]): Promise<DomainPeer[]> {
  if (domains.length === 0) return [];
  return db
    .selectFrom('shield_sites')
    .select(['id', 'org_id', 'domain', 'domain_verified_at'])
    .where('domain', 'in', [...new Set(domains)])
    .where(inEnvironment('org_id', environmentOf(orgId)))
    .execute();
}
