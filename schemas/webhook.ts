import { createdAtSchema, idSchema, labelsSchema, updatedAtSchema, type KindMeta, withoutDefaults, livemodeSchema } from './common.ts';
import { WEBHOOK_EVENTS } from './events.ts';

const properties = {
  url: {
    type: 'string',
    maxLength: 2048,
    pattern: '^https?://[^\\s/?#]+([/?#][^\\s]*)?$',
    description: 'Endpoint that receives the deliveries (`https://` recommended).',
  },
  events: {
    type: 'array',
    minItems: 1,
    uniqueItems: true,
    items: { type: 'string', enum: WEBHOOK_EVENTS },
    description: 'Event types delivered to the endpoint: names from the event catalogue, a family such as `vulnerability.*`, or `*` for all.',
  },
  description: { type: 'string', maxLength: 500, default: '', description: 'What the endpoint is for.' },
  enabled: { type: 'boolean', default: true, description: 'Disabled webhooks receive no deliveries.' },
  labels: labelsSchema,
} as const;

export const WebhookSpec = {
  $id: 'https://aegis.dev/schemas/Webhook.json',
  title: 'Webhook',
  description:
    'An outbound webhook. Deliveries carry `X-Service-Signature: t=<unix>,v1=<hex>`, v1 = HMAC-SHA256(secret, "<t>.<raw body>").',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties,
} as const;

export const WebhookUpdate = { type: 'object', additionalProperties: false, minProperties: 1, properties: withoutDefaults(properties) } as const;

export const WebhookResource = {
  type: 'object',
  required: ['livemode', 'id', 'url', 'events', 'description', 'enabled', 'secret_last4', 'labels', 'disabled_reason', 'failing_since', 'previous_secret_expires_at', 'created_at', 'updated_at'],
  properties: {
    livemode: livemodeSchema,
    id: idSchema,
    ...properties,
    secret_last4: { type: 'string', readOnly: true, description: 'Last four characters of the signing secret.' },
    disabled_reason: { type: ['string', 'null'], readOnly: true, description: 'Why Aegis disabled the webhook (every delivery failed for 3 days); cleared when it is enabled again.' },
    failing_since: { type: ['string', 'null'], format: 'date-time', readOnly: true, description: 'Since when every delivery has failed; null after a success.' },
    previous_secret_expires_at: {
      type: ['string', 'null'],
      format: 'date-time',
      readOnly: true,
      description: 'After a secret rotation: until when deliveries are also signed with the previous secret (a second `v1=`).',
    },
    created_at: createdAtSchema,
    updated_at: updatedAtSchema,
  },
} as const;

/** The create response: the resource plus the signing secret, shown this once. */
export const WebhookCreated = {
  ...WebhookResource,
  required: [...WebhookResource.required, 'secret'],
  properties: {
    ...WebhookResource.properties,
    secret: { type: 'string', readOnly: true, writeOnly: false, description: 'The signing secret (`whsec_…`). Shown once, on creation: store it now.' },
  },
} as const;

export const webhookMeta: KindMeta = {
  kind: 'Webhook',
  terraformType: 'aegis_webhook',
  parent: null,
  identity: ['url'],
  mutable: ['url', 'events', 'description', 'enabled', 'labels'],
  computed: ['id', 'secret', 'secret_last4', 'disabled_reason', 'failing_since', 'previous_secret_expires_at', 'created_at', 'updated_at'],
  sensitive: ['secret'],
};
