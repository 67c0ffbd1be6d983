// What recorded events set in motion, wired once per process (the server and `aegis worker`):
// webhook deliveries, the close of a resolved finding's open ticket, and automatic triage of new
// high and critical findings. The event store (platform/events) knows none of these features.
import { subscribeToEvents } from '../platform/events/event-store.ts';
import { queueAutoTriage } from './ai/auto.ts';
import { queueTicketCloses } from './integrations/tickets/queue.ts';
import { queueDeliveries } from './webhooks/fanout.ts';

export function installEventSubscribers(): void {
  // Pings go only to the webhook they test; that delivery is made by the test route itself.
  subscribeToEvents('webhook deliveries', (trx, rows) => queueDeliveries(trx, rows.filter((r) => r.type !== 'ping')));
  subscribeToEvents('ticket closes', queueTicketCloses);
  subscribeToEvents('automatic triage', queueAutoTriage);
}
