// The `shield.certificate.failed` event of a failed order (its schema: api/events/catalogue.ts,
// ShieldCertificateFailureObject). It names the site, its domain and why; never a key.
import type { NewEvent } from '../../../platform/events/event-store.ts';
import type { OrderFailure } from './orders.ts';

export function failureEvent(site: { id: string; org_id: string; domain: string }, failure: OrderFailure): NewEvent {
  return {
    orgId: site.org_id,
    type: 'shield.certificate.failed',
    object: {
      object: 'shield_certificate_order',
      site_id: site.id,
      domain: site.domain,
      attempts: failure.attempts,
      error: failure.error,
      next_attempt_at: failure.nextAttemptAt.toISOString(),
    },
  };
}
