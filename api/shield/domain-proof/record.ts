// Recording a proof that an organisation controls a site's domain, under the rules that keep one
// tenant from taking another's traffic (docs/shield-edge.md, "Domain proof"):
//   (a) a domain another organisation verified is never taken over: the proof is refused;
//   (b) proving control of a domain other organisations' unverified sites claim takes it from them
//       (takeover.ts audits and events it to each of them);
//   (c) an ACME validation shows only that the domain points at this installation, not which
//       organisation controls it: it counts only when proof is `contested` and no other
//       organisation has a site on the domain. An HTTP answer may come back through this
//       installation too (DNS already at the gateway, which routes the token URL to the origin of
//       the site it serves): when the site proving is the one the gateway serves, and another
//       organisation claims the domain, it counts no more than ACME does — prove with DNS.
// Sandbox sites never need proof (the gateway serves them anyway); proofs there follow the same
// rules among sandbox sites. Everything happens in one transaction holding the domain's sites locked.
import type { Actor } from '../../../platform/audit-log.ts';
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { DomainProofMethod, ShieldSiteRow } from '../../../platform/db/schema.ts';
import { announceDeliveries } from '../../../platform/events/event-store.ts';
import { proofRequired, servingSite, type DomainProofMode } from '../sites/serving.ts';
import { lockDomainPeers, markVerified, noteCheck, siteById } from './store.ts';
import { recordTakeovers, DOMAIN_PROOF_ACTOR } from './takeover.ts';

export interface ProofTarget {
  siteId: string;
  /** AEGIS_SHIELD_DOMAIN_PROOF. Left out: `required`, where an ACME validation never counts (the safe reading). */
  domainProof?: DomainProofMode | undefined;
  /** Who the audit entry names (the caller of verify-domain); the system when left out. */
  actor?: Actor | undefined;
  ip?: string | null | undefined;
}

export type ProofResult = { verified: true; site: ShieldSiteRow; tookOver: number } | { verified: false; site: ShieldSiteRow | undefined; reason: string };

/** Why this proof may not count, or null when it does. */
function refusal(method: DomainProofMethod, site: ShieldSiteRow, others: readonly { domain_verified_at: Date | null }[], required: boolean, servesNow: boolean): string | null {
  if (others.some((peer) => peer.domain_verified_at !== null)) return `another organisation has proved control of ${site.domain}; a verified domain is never taken over`;
  if (method === 'acme') {
    if (required) return 'an ACME validation shows only that the domain points at this installation; with AEGIS_SHIELD_DOMAIN_PROOF=required only a DNS or HTTP proof counts';
    if (others.length > 0) return `another organisation has a site for ${site.domain}: an ACME validation cannot tell which of you controls it; prove with DNS or HTTP`;
  }
  if (method === 'http' && servesNow && others.length > 0) {
    return `this site already receives ${site.domain}'s traffic through Aegis, so the token may have come from its own origin; with another organisation's site on the domain, prove with DNS`;
  }
  return null;
}

/** Records that `method` proved control of the site's domain, if the rules let it count. */
export async function recordDomainProof(db: Db, target: ProofTarget, method: DomainProofMethod): Promise<ProofResult> {
  const own = !db.isTransaction;
  const run = async (trx: Db): Promise<{ result: ProofResult; deliveries: number }> => {
    const unlocked = await siteById(trx, target.siteId);
    if (!unlocked) return { result: { verified: false, site: undefined, reason: `no Shield site ${target.siteId}` }, deliveries: 0 };
    const peers = await lockDomainPeers(trx, unlocked.org_id, unlocked.domain);
    const site = (await siteById(trx, target.siteId))!;
    const others = peers.filter((peer) => peer.org_id !== site.org_id);
    const required = proofRequired(target.domainProof ?? 'required', site.org_id);
    const servingBefore = servingSite(peers, required);
    const refused = refusal(method, site, others, required, servingBefore?.id === site.id);
    if (refused) {
      // A verified site keeps its proof (a refused ACME renewal does not undo a DNS proof).
      const noted = site.domain_verified_at === null ? await noteCheck(trx, site.id, refused) : site;
      return { result: { verified: false, site: noted, reason: refused }, deliveries: 0 };
    }
    const wasVerified = site.domain_verified_at !== null;
    // A later, weaker proof does not replace a DNS or HTTP one (which re-checks, or is stronger).
    const keep = wasVerified && method === 'acme' && site.domain_verified_by !== null && site.domain_verified_by !== 'acme';
    const verified = await markVerified(trx, site.id, keep ? site.domain_verified_by! : method);
    let deliveries = 0;
    if (!wasVerified) {
      await recordAudit(trx, {
        orgId: site.org_id,
        actor: target.actor ?? DOMAIN_PROOF_ACTOR,
        ip: target.ip ?? null,
        action: 'shield_site.domain_verified',
        target: { type: 'shield_site', id: site.id },
        metadata: { domain: site.domain, method, took_over: others.length > 0 },
      });
      deliveries = await recordTakeovers(trx, others, servingBefore);
    }
    return { result: { verified: true, site: verified, tookOver: wasVerified ? 0 : others.length }, deliveries };
  };
  if (!own) return (await run(db)).result;
  const { result, deliveries } = await db.transaction().execute(run);
  announceDeliveries(db, deliveries);
  return result;
}
