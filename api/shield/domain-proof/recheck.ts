// DNS proofs of site domains are read again every `intervalMs` (AEGIS_DOMAIN_RECHECK_INTERVAL_MS, a
// day), like organisation domains (api/accounts/people/domain-recheck.ts, whose record check this
// reuses): a record gone, or no longer holding the token, unverifies the site at once (audited as
// `shield_site.domain_unverified`; the gateways follow through the site's version). A lookup that
// fails changes nothing and is retried next time: a DNS outage must not take sites down.
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { TxtLookup } from '../../../platform/net/txt-records.ts';
import { checkProof } from '../../accounts/people/domain-proof.ts';
import { claimDueDnsRechecks, clearCheckError, markUnverified, noteCheck } from './store.ts';
import { DOMAIN_PROOF_ACTOR } from './takeover.ts';

export async function recheckSiteDomains(db: Db, txt: TxtLookup, intervalMs: number, batch = 50): Promise<{ checked: number; unverified: number }> {
  const due = await claimDueDnsRechecks(db, new Date(Date.now() - intervalMs), batch);
  let unverified = 0;
  for (const site of due) {
    const outcome = await checkProof(txt, { domain: site.domain, token: site.verification_token });
    if (outcome.verified === null) {
      await noteCheck(db, site.id, outcome.reason);
      continue;
    }
    if (outcome.verified) {
      await clearCheckError(db, site.id);
      continue;
    }
    unverified += 1;
    await db.transaction().execute(async (trx) => {
      await markUnverified(trx, site.id, outcome.reason);
      await recordAudit(trx, { orgId: site.org_id, actor: DOMAIN_PROOF_ACTOR, action: 'shield_site.domain_unverified', target: { type: 'shield_site', id: site.id }, metadata: { domain: site.domain, reason: outcome.reason } });
    });
  }
  return { checked: due.length, unverified };
}
