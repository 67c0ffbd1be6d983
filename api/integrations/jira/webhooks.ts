// Jira Cloud webhooks registered with a secret carry `X-Hub-Signature: sha256=<hex>`, an
// HMAC-SHA256 of the raw body keyed with that secret (WebSub style); redeliveries repeat the
// X-Atlassian-Webhook-Identifier header. Aegis reads only status changes of issues.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundEvent, InboundWebhooks, WebhookHeaders } from '../providers/types.ts';

export function header(headers: WebhookHeaders, name: string): string | null {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return Array.isArray(value) ? (value[0] ?? null) : value;
  }
  return null;
}

/** The signature Jira puts on a body, for the stand-in and tests. */
export const jiraSignature = (rawBody: Buffer | string, secret: string): string =>
  `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;

interface IssueUpdated {
  webhookEvent?: unknown;
  issue?: { id?: unknown; fields?: { status?: { statusCategory?: { key?: unknown } } } };
  changelog?: { items?: { field?: unknown; fieldId?: unknown }[] };
}

export const jiraWebhooks: InboundWebhooks = {
  verify(headers, rawBody, secret) {
    const given = header(headers, 'x-hub-signature');
    if (!given || !secret) return false;
    const expected = Buffer.from(jiraSignature(rawBody, secret));
    const actual = Buffer.from(given.trim());
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  },

  deliveryId: (headers) => header(headers, 'x-atlassian-webhook-identifier'),

  read(_headers, body): InboundEvent | null {
    if (!body || typeof body !== 'object') return null;
    const event = body as IssueUpdated;
    if (event.webhookEvent !== 'jira:issue_updated') return null;
    const statusChanged = (event.changelog?.items ?? []).some((item) => item.fieldId === 'status' || item.field === 'status');
    const id = event.issue?.id;
    if (!statusChanged || (typeof id !== 'string' && typeof id !== 'number')) return null;
    // The payload carries the issue after the change: its status category says done or not. A move
    // between two not-done statuses reads as `open`, which the sync treats as no change.
    const category = event.issue?.fields?.status?.statusCategory?.key;
    return { type: 'ticket', change: { externalId: String(id), state: category === 'done' ? 'closed' : 'open' } };
  },
};
