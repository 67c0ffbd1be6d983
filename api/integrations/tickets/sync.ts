// Inbound: a tracker says one of Aegis's tickets was closed or reopened. The ticket's state follows,
// and its finding with it: closed → resolved (resolution `manual`: a person closed it), reopened →
// open again if it was resolved. The ticket is marked first, so the `vulnerability.resolved` this
// records finds it `closed` and queues no close back to the tracker (./queue.ts): no echo. The same
// change twice changes nothing the second time.
import { sql } from 'kysely';
import { recordAudit } from '../../../platform/audit-log.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { IntegrationRow, VulnerabilityTicketRow } from '../../../platform/db/schema.ts';
import { announceDeliveries, recordEvents } from '../../../platform/events/event-store.ts';
import { vulnerabilityChanged } from '../../findings/events.ts';
import type { VulnerabilityRow, VulnerabilityStatus } from '../../findings/store.ts';
import { transitionAllowed } from '../../findings/transitions.ts';
import type { TicketChange } from '../providers/types.ts';
import type { IntegrationDeps } from '../connections/sessions.ts';
import { moveTicket } from './store.ts';

export interface TicketChangeOutcome {
  status: 'applied' | 'unchanged' | 'ignored';
  vulnerability_id?: string;
}

/**
 * The ticket `change` names, among this organisation's tickets at the connection's provider. A
 * ticket made through another connection of the same provider that was since removed still
 * matches (its link outlives the connection); one of another live connection does not.
 */
async function lockTicket(trx: Db, integration: IntegrationRow, externalId: string): Promise<VulnerabilityTicketRow | undefined> {
  return trx
    .selectFrom('vulnerability_tickets')
    .selectAll()
    .where('org_id', '=', integration.org_id)
    .where('provider', '=', integration.provider)
    .where('external_id', '=', externalId)
    .where((eb) => eb.or([eb('integration_id', '=', integration.id), eb('integration_id', 'is', null)]))
    .orderBy(sql`integration_id is null`)
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

/** The finding's status the ticket's new state calls for, or null to leave it as it is. */
function findingTarget(finding: VulnerabilityRow, state: TicketChange['state']): VulnerabilityStatus | null {
  const from = finding.status as VulnerabilityStatus;
  if (state === 'closed') return from !== 'resolved' && transitionAllowed(from, 'resolved') ? 'resolved' : null;
  return from === 'resolved' && transitionAllowed(from, 'open') ? 'open' : null;
}

export async function handleTicketChange(deps: IntegrationDeps, integration: IntegrationRow, change: TicketChange): Promise<TicketChangeOutcome> {
  const outcome = await deps.db.transaction().execute(async (trx) => {
    const ticket = await lockTicket(trx, integration, change.externalId);
    if (!ticket) return { status: 'ignored' as const, deliveries: 0 };
    const vulnerability_id = ticket.vulnerability_id;
    // Only tickets Aegis knows as open or closed mirror the tracker (not one being created or failed).
    const from = change.state === 'closed' ? 'open' : 'closed';
    const moved = await moveTicket(trx, vulnerability_id, [from], change.state);
    if (!moved) return { status: 'unchanged' as const, vulnerability_id, deliveries: 0 };

    const finding = await trx.selectFrom('vulnerabilities').selectAll().where('id', '=', vulnerability_id).forUpdate().executeTakeFirst();
    const to = finding ? findingTarget(finding, change.state) : null;
    if (!finding || !to) return { status: 'applied' as const, vulnerability_id, deliveries: 0 };
    const after = await trx
      .updateTable('vulnerabilities')
      .set(to === 'resolved' ? { status: 'resolved', resolution: 'manual', updated_at: sql<Date>`now()` } : { status: 'open', resolution: null, fixed_at: null, updated_at: sql<Date>`now()` })
      .where('id', '=', finding.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(trx, {
      orgId: finding.org_id,
      actor: { type: 'system', id: `integration:${integration.id}` },
      action: 'vulnerability.updated',
      target: { type: 'vulnerability', id: finding.id },
      metadata: { fields: ['status'], from: finding.status, to, reason: `ticket ${ticket.key ?? change.externalId} ${change.state === 'closed' ? 'closed' : 'reopened'} in ${integration.provider}` },
    });
    const event = vulnerabilityChanged(finding, after);
    const recorded = event ? await recordEvents(trx, [event]) : undefined;
    return { status: 'applied' as const, vulnerability_id, deliveries: recorded?.deliveries ?? 0 };
  });
  announceDeliveries(deps.db, outcome.deliveries);
  return outcome.vulnerability_id ? { status: outcome.status, vulnerability_id: outcome.vulnerability_id } : { status: outcome.status };
}
