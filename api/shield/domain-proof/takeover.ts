// When an organisation proves control of a domain that other organisations' unverified sites also
// claim, those sites lose it: each of their organisations gets an audit entry and a
// `shield.site.domain_taken_over` event about its own site. Neither names the organisation that
// proved control — who else uses a domain is not another tenant's business.
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import { recordEvents } from '../../../platform/events/event-store.ts';
import type { DomainPeer } from '../sites/serving.ts';

export const DOMAIN_PROOF_ACTOR = { type: 'system', id: 'domain-proof' } as const;

/** `data.object` of the event (its schema: api/events/catalogue.ts ShieldSiteTakeoverObject). */
export function takeoverObject(site: DomainPeer, wasServing: boolean, at: Date) {
  return { object: 'shield_site_takeover', site_id: site.id, domain: site.domain, was_serving: wasServing, taken_at: at.toISOString() };
}

/** Audits and events for every losing site, in the transaction that recorded the proof; returns the deliveries queued. */
export async function recordTakeovers(trx: Db, losers: readonly DomainPeer[], servingBefore: DomainPeer | undefined): Promise<number> {
  if (losers.length === 0) return 0;
  const at = new Date();
  for (const site of losers) {
    await recordAudit(trx, {
      orgId: site.org_id,
      actor: DOMAIN_PROOF_ACTOR,
      action: 'shield_site.domain_taken_over',
      target: { type: 'shield_site', id: site.id },
      metadata: { domain: site.domain, was_serving: servingBefore?.id === site.id, reason: 'another organisation proved control of the domain' },
    });
  }
  const { deliveries } = await recordEvents(
    trx,
    losers.map((site) => ({ orgId: site.org_id, type: 'shield.site.domain_taken_over' as const, object: takeoverObject(site, servingBefore?.id === site.id, at) })),
  );
  return deliveries;
}
