// Linear signs each webhook delivery with `Linear-Signature`: the hex HMAC-SHA256 of the raw body
// keyed with the webhook's signing secret. The body's `webhookTimestamp` (ms) must be within a
// minute of now, as Linear recommends, so a captured delivery cannot be replayed later.
// Redeliveries repeat the Linear-Delivery header. Aegis reads only issue state changes.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundEvent, InboundWebhooks, WebhookHeaders } from '../providers/types.ts';

export const REPLAY_WINDOW_MS = 60_000;

function header(headers: WebhookHeaders, name: string): string | null {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return Array.isArray(value) ? (value[0] ?? null) : value;
  }
  return null;
}

export const linearSignature = (rawBody: Buffer | string, secret: string): string => createHmac('sha256', secret).update(rawBody).digest('hex');

interface IssueEvent {
  type?: unknown;
  action?: unknown;
  data?: { id?: unknown; state?: { type?: unknown } };
  updatedFrom?: Record<string, unknown>;
}

export function createLinearWebhooks(now: () => number = Date.now): InboundWebhooks {
  return {
    verify(headers, rawBody, secret) {
      const given = header(headers, 'linear-signature');
      if (!given || !secret) return false;
      const expected = Buffer.from(linearSignature(rawBody, secret), 'hex');
      const actual = Buffer.from(given.trim(), 'hex');
      if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return false;
      let timestamp: unknown;
      try {
        timestamp = (JSON.parse(rawBody.toString('utf8')) as { webhookTimestamp?: unknown }).webhookTimestamp;
      } catch {
        return false;
      }
      return typeof timestamp === 'number' && Math.abs(now() - timestamp) <= REPLAY_WINDOW_MS;
    },

    deliveryId: (headers) => header(headers, 'linear-delivery'),

    read(_headers, body): InboundEvent | null {
      if (!body || typeof body !== 'object') return null;
      const event = body as IssueEvent;
      if (event.type !== 'Issue' || event.action !== 'update') return null;
      if (!event.updatedFrom || !('stateId' in event.updatedFrom)) return null;
      const id = event.data?.id;
      const stateType = event.data?.state?.type;
      if (typeof id !== 'string' || typeof stateType !== 'string') return null;
      const closed = stateType === 'completed' || stateType === 'canceled';
      return { type: 'ticket', change: { externalId: id, state: closed ? 'closed' : 'open' } };
    },
  };
}

export const linearWebhooks = createLinearWebhooks();
