// Verified domains are read again every `intervalMs` (a day by default): a domain whose record is
// gone, or no longer holds the token, stops admitting anyone at once (audited as
// `domain.unverified`). A lookup that fails keeps the domain as it was and is retried next time:
// a DNS outage must not lock an organisation out of its own sign-in.
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { TxtLookup } from '../../../platform/net/txt-records.ts';
import { checkProof } from './domain-proof.ts';
import { claimDueRechecks, recordCheck, recordCheckFailure } from './domain-store.ts';

export async function recheckDomains(db: Db, txt: TxtLookup, intervalMs: number, batch = 50): Promise<{ checked: number; unverified: number }> {
  const due = await claimDueRechecks(db, new Date(Date.now() - intervalMs), batch);
  let unverified = 0;
  for (const row of due) {
    const outcome = await checkProof(txt, row);
    if (outcome.verified === null) {
      await recordCheckFailure(db, row.id, outcome.reason);
      continue;
    }
    if (outcome.verified) {
      await recordCheck(db, row.id, { verified: true, error: null });
      continue;
    }
    unverified += 1;
    await db.transaction().execute(async (trx) => {
      await recordCheck(trx, row.id, { verified: false, error: outcome.reason });
      await recordAudit(trx, { orgId: row.org_id, actor: { type: 'system', id: 'domain-recheck' }, action: 'domain.unverified', target: { type: 'domain', id: row.id }, metadata: { domain: row.domain, reason: outcome.reason } });
    });
  }
  return { checked: due.length, unverified };
}
