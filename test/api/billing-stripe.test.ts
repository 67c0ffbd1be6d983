// The Stripe billing webhook through HTTP, signed the way Stripe signs (its own library): an
// upgrade takes effect at once (the plan gate on admin keys lets the organisation through), every
// event applies once, an older event never undoes a newer one, and nothing that does not verify
// changes anything.
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOrganization } from '../../api/accounts/keys/bootstrap.ts';
import { insertKey } from '../../api/accounts/keys/key-store.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

const SECRET = 'whsec_test_aegis_billing_secret';
const PATH = '/api/v1/webhooks/stripe';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ stripeWebhookSecret: SECRET, rateLimitPerMinute: 10_000 });
});
afterAll(async () => {
  await t.close();
});

let serial = 0;
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface SubscriptionOptions {
  orgId?: string;
  customer: string;
  status?: string;
  lookupKey?: string | null;
  pricePlan?: string;
  created?: number;
  id?: string;
}

/** A `customer.subscription.*` event as Stripe sends it (the fields Aegis reads, and a few more). */
function subscriptionEvent(type: string, o: SubscriptionOptions) {
  return {
    id: o.id ?? `evt_test_${++serial}_${Date.now()}`,
    object: 'event',
    api_version: '2025-10-29.clover',
    created: o.created ?? nowSeconds(),
    livemode: false,
    type,
    data: {
      object: {
        id: `sub_${o.customer}`,
        object: 'subscription',
        customer: o.customer,
        status: o.status ?? 'active',
        metadata: o.orgId ? { aegis_organization_id: o.orgId } : {},
        items: {
          object: 'list',
          data: [{ id: 'si_1', object: 'subscription_item', price: { id: 'price_1', object: 'price', lookup_key: o.lookupKey === undefined ? 'pro' : o.lookupKey, metadata: o.pricePlan ? { aegis_plan: o.pricePlan } : {} } }],
        },
      },
    },
  };
}

function invoiceFailedEvent(customer: string, created = nowSeconds(), orgId?: string) {
  return {
    id: `evt_test_${++serial}_${Date.now()}`,
    object: 'event',
    created,
    livemode: false,
    type: 'invoice.payment_failed',
    data: { object: { id: `in_${serial}`, object: 'invoice', customer, status: 'open', parent: orgId ? { type: 'subscription_details', subscription_details: { subscription: 'sub_1', metadata: { aegis_organization_id: orgId } } } : null } },
  };
}

/** Posts `event` signed with `secret` (timestamp `timestamp`, default now), as Stripe would. */
function deliver(event: object, options: { secret?: string; timestamp?: number; server?: TestServer; signature?: string | null } = {}) {
  const payload = JSON.stringify(event);
  const header = options.signature !== undefined ? options.signature : Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? SECRET, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (header !== null) headers['stripe-signature'] = header;
  return request<any>((options.server ?? t).url, 'POST', PATH, { raw: payload, headers });
}

/** A new trial organisation with an admin key (as `aegis keys create` makes one). */
async function newOrganization(slug: string) {
  const db = t.server.database.db;
  const orgId = await ensureOrganization(db, slug);
  const key = (await insertKey(db, { orgId, name: `${slug} key`, scopes: ['admin'], createdBy: null })).value;
  return { orgId, key };
}

/** The plan as the API enforces it: a new admin key needs pro or enterprise. */
async function adminKeyAllowed(key: string): Promise<boolean> {
  const res = await request<any>(t.url, 'POST', '/api/v1/api-keys', { key, body: { name: 'probe', scopes: ['admin'] } });
  if (res.status === 403) expect(res.body.error.code).toBe('plan_required');
  else expect(res.status, res.text).toBe(201);
  return res.status === 201;
}

async function billing(orgId: string) {
  return t.server.database.db.selectFrom('organizations').select(['plan', 'billing_status', 'stripe_customer_id', 'billing_updated_at']).where('id', '=', orgId).executeTakeFirstOrThrow();
}

async function storedEvent(id: string) {
  return t.server.database.db.selectFrom('stripe_events').selectAll().where('id', '=', id).executeTakeFirst();
}

describe('POST /api/v1/webhooks/stripe', () => {
  it('a signed subscription update naming the organisation upgrades it at once, audited; a replay is a no-op', async () => {
    const { orgId, key } = await newOrganization('stripe-upgrade');
    expect(await adminKeyAllowed(key)).toBe(false);

    const upgrade = subscriptionEvent('customer.subscription.updated', { orgId, customer: 'cus_upgrade' });
    const res = await deliver(upgrade);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ received: true, outcome: 'applied' });
    expect(await adminKeyAllowed(key)).toBe(true);
    expect(await billing(orgId)).toMatchObject({ plan: 'pro', billing_status: 'active', stripe_customer_id: 'cus_upgrade' });
    expect(await storedEvent(upgrade.id)).toMatchObject({ type: 'customer.subscription.updated', org_id: orgId, outcome: 'applied' });

    const audit = await request<any>(t.url, 'GET', '/api/v1/audit-log?action=billing.plan_changed', { key });
    expect(audit.status, audit.text).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({
      actor: { type: 'system', id: 'billing:stripe' },
      action: 'billing.plan_changed',
      target: { type: 'organization', id: orgId },
      metadata: { stripe_event_id: upgrade.id, stripe_event_type: 'customer.subscription.updated', old_plan: 'trial', new_plan: 'pro', status: 'active' },
    });

    // Stripe redelivers: acknowledged as a duplicate, no second audit entry.
    const again = await deliver(upgrade);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: true, duplicate: true });
    const audit2 = await request<any>(t.url, 'GET', '/api/v1/audit-log?action=billing.plan_changed', { key });
    expect(audit2.body.data).toHaveLength(1);
  });

  it('after a later downgrade, neither a replay of the upgrade nor an older event brings the plan back', async () => {
    const { orgId, key } = await newOrganization('stripe-order');
    const t0 = nowSeconds() - 60;
    const upgrade = subscriptionEvent('customer.subscription.created', { orgId, customer: 'cus_order', created: t0 });
    expect((await deliver(upgrade)).body.outcome).toBe('applied');
    expect(await adminKeyAllowed(key)).toBe(true);

    // The customer cancels: found by the stored customer id alone (no metadata this time).
    const deleted = subscriptionEvent('customer.subscription.deleted', { customer: 'cus_order', status: 'canceled', created: t0 + 30 });
    expect((await deliver(deleted)).body).toEqual({ received: true, outcome: 'applied' });
    expect(await billing(orgId)).toMatchObject({ plan: 'trial', billing_status: 'canceled' });
    expect(await adminKeyAllowed(key)).toBe(false);

    // The upgrade again (a redelivery) changes nothing.
    expect((await deliver(upgrade)).body).toEqual({ received: true, duplicate: true });
    // An update Stripe made before the cancellation, delivered after it: stale, ignored.
    const late = subscriptionEvent('customer.subscription.updated', { orgId, customer: 'cus_order', created: t0 + 10 });
    expect((await deliver(late)).body).toEqual({ received: true, outcome: 'stale' });
    expect(await storedEvent(late.id)).toMatchObject({ outcome: 'stale', org_id: orgId });
    expect(await billing(orgId)).toMatchObject({ plan: 'trial', billing_status: 'canceled' });
    expect(await adminKeyAllowed(key)).toBe(false);
  });

  it('invoice.payment_failed marks the organisation past_due and keeps its plan; past_due subscriptions keep it too', async () => {
    const { orgId } = await newOrganization('stripe-dunning');
    const t0 = nowSeconds() - 60;
    await deliver(subscriptionEvent('customer.subscription.created', { orgId, customer: 'cus_dunning', lookupKey: null, pricePlan: 'enterprise', created: t0 }));
    expect(await billing(orgId)).toMatchObject({ plan: 'enterprise', billing_status: 'active' });

    const failed = await deliver(invoiceFailedEvent('cus_dunning', t0 + 1));
    expect(failed.body).toEqual({ received: true, outcome: 'applied' });
    expect(await billing(orgId)).toMatchObject({ plan: 'enterprise', billing_status: 'past_due' });

    await deliver(subscriptionEvent('customer.subscription.updated', { orgId, customer: 'cus_dunning', status: 'unpaid', created: t0 + 2 }));
    expect(await billing(orgId)).toMatchObject({ plan: 'enterprise', billing_status: 'unpaid' });

    const audit = await t.server.database.db.selectFrom('audit_events').select(['action', 'metadata']).where('org_id', '=', orgId).where('action', '=', 'billing.status_changed').execute();
    expect(audit.map((a) => (a.metadata as Record<string, unknown>).status)).toEqual(['past_due', 'unpaid']);

    // An invoice carries the subscription's metadata: it finds (and links) an organisation Stripe's
    // customer was not yet stored on.
    const other = await newOrganization('stripe-dunning-2');
    expect((await deliver(invoiceFailedEvent('cus_dunning_2', nowSeconds(), other.orgId))).body).toEqual({ received: true, outcome: 'applied' });
    expect(await billing(other.orgId)).toMatchObject({ plan: 'trial', billing_status: 'past_due', stripe_customer_id: 'cus_dunning_2' });
  });

  it('concurrent deliveries of one event apply it once', async () => {
    const { orgId } = await newOrganization('stripe-burst');
    const upgrade = subscriptionEvent('customer.subscription.updated', { orgId, customer: 'cus_burst' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(upgrade)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.filter((a) => a.body.outcome === 'applied')).toHaveLength(1);
    expect(answers.filter((a) => a.body.duplicate === true)).toHaveLength(4);
    const audit = await t.server.database.db.selectFrom('audit_events').select('id').where('org_id', '=', orgId).where('action', '=', 'billing.plan_changed').execute();
    expect(audit).toHaveLength(1);
  });

  it('a bad signature, a missing one and an old timestamp are 400 and change nothing', async () => {
    const { orgId, key } = await newOrganization('stripe-forged');
    const forged = subscriptionEvent('customer.subscription.updated', { orgId, customer: 'cus_forged' });

    const wrongSecret = await deliver(forged, { secret: 'whsec_someone_else' });
    expect(wrongSecret.status).toBe(400);
    expect(wrongSecret.body.error).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_signature' } });

    const unsigned = await deliver(forged, { signature: null });
    expect(unsigned.status).toBe(400);
    expect(unsigned.body.error.details).toEqual({ reason: 'invalid_signature' });

    // Signed with the right secret, but six minutes ago: a captured delivery replayed.
    const old = await deliver(forged, { timestamp: nowSeconds() - 360 });
    expect(old.status).toBe(400);
    expect(old.body.error.message).toMatch(/tolerance/i);

    // The body changed after signing.
    const payload = JSON.stringify(forged);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
    const tampered = await request<any>(t.url, 'POST', PATH, { raw: payload.replace('"pro"', '"enterprise"'), headers: { 'content-type': 'application/json', 'stripe-signature': header } });
    expect(tampered.status).toBe(400);

    expect(await storedEvent(forged.id)).toBeUndefined();
    expect(await billing(orgId)).toMatchObject({ plan: 'trial', billing_status: null, stripe_customer_id: null });
    expect(await adminKeyAllowed(key)).toBe(false);
  });

  it('acknowledges what it cannot use: unknown types, unknown organisations, unknown plans', async () => {
    const ignored = { id: `evt_test_ignored_${Date.now()}`, object: 'event', created: nowSeconds(), type: 'charge.succeeded', data: { object: { id: 'ch_1', object: 'charge' } } };
    const res = await deliver(ignored);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, ignored: true, outcome: 'ignored' });
    expect(await storedEvent(ignored.id)).toMatchObject({ type: 'charge.succeeded', outcome: 'ignored', org_id: null });
    expect((await deliver(ignored)).body).toEqual({ received: true, duplicate: true });

    const stranger = subscriptionEvent('customer.subscription.updated', { customer: 'cus_nobody_knows' });
    expect((await deliver(stranger)).body).toEqual({ received: true, outcome: 'unmatched' });
    expect(await storedEvent(stranger.id)).toMatchObject({ outcome: 'unmatched', org_id: null });
    expect(t.logs.some((line) => line.includes(stranger.id) && line.includes('unmatched'))).toBe(true);

    const { orgId } = await newOrganization('stripe-gold');
    const gold = subscriptionEvent('customer.subscription.updated', { orgId, customer: 'cus_gold', lookupKey: 'gold' });
    expect((await deliver(gold)).body).toEqual({ received: true, outcome: 'unknown_plan' });
    expect(await billing(orgId)).toMatchObject({ plan: 'trial', billing_status: null, stripe_customer_id: null });
  });

  it('answers a signed delivery 503 when STRIPE_WEBHOOK_SECRET is not set', async () => {
    const bare = await startTestServer({}, undefined);
    try {
      const res = await deliver(subscriptionEvent('customer.subscription.updated', { customer: 'cus_x' }), { server: bare });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: { code: 'unavailable', message: expect.stringContaining('STRIPE_WEBHOOK_SECRET is not set'), details: {} } });
      // Unsigned is a 400 whatever the configuration.
      expect((await deliver(subscriptionEvent('customer.subscription.updated', { customer: 'cus_x' }), { server: bare, signature: null })).status).toBe(400);
    } finally {
      await bare.close();
    }
  });
});
