// POST /api/v1/webhooks/stripe: Stripe's billing events move an organisation between plans
// (docs/billing.md). A public route — Stripe has no API key — so each delivery proves itself with
// the `Stripe-Signature` header, checked by Stripe's own library against the endpoint's signing
// secret, with a five-minute tolerance on its timestamp so that a captured delivery cannot be
// replayed later. Anything that does not verify is a 400 and changes nothing.
import type { FastifyPluginAsync } from 'fastify';
import Stripe from 'stripe';
import type { AuthChanges } from '../accounts/auth/auth-changes.ts';
import type { Db } from '../../platform/db/database.ts';
import { ApiError, badRequest } from '../../platform/http/errors.ts';
import { applyStripeEvent } from './apply-event.ts';
import { BILLING_EVENT_TYPES } from './subscription-events.ts';

export interface StripeWebhookOptions {
  db: Db;
  changes: AuthChanges;
  /** The endpoint's signing secret (STRIPE_WEBHOOK_SECRET); unset: the route answers 503. */
  secret: string | undefined;
}

/** Seconds a signature's timestamp may be old (Stripe's recommended default). */
const TOLERANCE_SECONDS = 300;
/** Stripe's events are a few KiB; bounded because the route is public. */
const BODY_LIMIT = 1024 * 1024;

const Answer = {
  type: 'object',
  required: ['received'],
  properties: {
    received: { type: 'boolean', description: 'Always true: the event verified and is recorded.' },
    duplicate: { type: 'boolean', description: 'This event id was received before; nothing was done again.' },
    ignored: { type: 'boolean', description: 'The event type does not concern billing.' },
    outcome: {
      type: 'string',
      enum: ['applied', 'unchanged', 'ignored', 'unmatched', 'unknown_plan', 'stale'],
      description: 'What the event did: `applied` (plan or billing status changed), `unchanged`, `ignored` (type not used), `unmatched` (no organisation), `unknown_plan` (the price names no plan), `stale` (older than the last event applied).',
    },
  },
} as const;

export const stripeWebhookRoutes: FastifyPluginAsync<StripeWebhookOptions> = async (app, { db, changes, secret }) => {
  // The signature covers the body as sent: keep the bytes (this plugin's scope only).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post(
    '/api/v1/webhooks/stripe',
    {
      config: { auth: 'public' },
      bodyLimit: BODY_LIMIT,
      schema: {
        tags: ['Webhooks'],
        summary: 'Inbound: Stripe billing events',
        description: `Stripe webhook endpoint. Verified with \`Stripe-Signature\` against STRIPE_WEBHOOK_SECRET (timestamps older than 5 minutes are refused); idempotent by Stripe's event id. Acts on ${BILLING_EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}; other types are acknowledged and ignored. A signed delivery is answered 503 while STRIPE_WEBHOOK_SECRET is not set (Stripe retries it).`,
        response: { 200: Answer },
      },
    },
    async (request, reply) => {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers['stripe-signature'];
      // Unsigned is wrong whatever the configuration; a signed delivery without a secret to check it
      // is 503, which Stripe retries, so deliveries made before the secret is set are not lost.
      if (typeof header !== 'string' || header === '') throw badRequest('unsigned delivery: the Stripe-Signature header is missing', { reason: 'invalid_signature' });
      if (!secret) throw new ApiError(503, 'unavailable', 'Stripe webhooks are not configured: STRIPE_WEBHOOK_SECRET is not set');

      let event: Stripe.Event;
      try {
        event = Stripe.webhooks.constructEvent(rawBody, header, secret, TOLERANCE_SECONDS);
      } catch (err) {
        if (err instanceof Stripe.errors.StripeSignatureVerificationError) {
          // Stripe's first sentence says which check failed (no matching signature, or the timestamp).
          const why = err.message.split('\n')[0]?.trim() ?? '';
          throw badRequest(`the delivery does not verify with the Stripe webhook secret: ${why}`, { reason: 'invalid_signature' });
        }
        throw badRequest('the signed delivery is not a Stripe event (JSON)');
      }

      const result = await applyStripeEvent(db, changes, request.log, event);
      if (result.duplicate) return reply.send({ received: true, duplicate: true });
      if (result.outcome === 'ignored') return reply.send({ received: true, ignored: true, outcome: result.outcome });
      return reply.send({ received: true, outcome: result.outcome });
    },
  );
};
