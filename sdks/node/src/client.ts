// The client users construct: the generated namespaces plus the hand-written helpers that
// generation cannot express (webhook verification on `aegis.webhooks`).
import type { ClientOptions } from './transport.ts';
import { GeneratedClient, WebhooksResource } from './generated/resources.ts';
import { constructEvent, verifyWebhookSignature, type VerifyOptions, type WebhookEvent } from './webhooks.ts';

/** `aegis.webhooks`: the API's webhook endpoints, and verification of the deliveries they send. */
export class Webhooks extends WebhooksResource {
  /** See `verifyWebhookSignature`. */
  verifySignature(rawBody: string | Uint8Array | ArrayBuffer, header: string | null | undefined, secret: string, options?: VerifyOptions): Promise<boolean> {
    return verifyWebhookSignature(rawBody, header, secret, options);
  }

  /** Verifies a delivery's `X-Service-Signature` and parses its body; throws WebhookSignatureError. */
  constructEvent<Data = Record<string, unknown>>(rawBody: string | Uint8Array | ArrayBuffer, header: string | null | undefined, secret: string, options?: VerifyOptions): Promise<WebhookEvent<Data>> {
    return constructEvent<Data>(rawBody, header, secret, options);
  }
}

/**
 * The Aegis API client.
 *
 * ```ts
 * const aegis = new Aegis({ apiKey: process.env.AEGIS_API_KEY });
 * const site = await aegis.shieldSites.create({ domain: 'shop.example.com', origin_url: 'https://origin.example.com', mode: 'block' });
 * ```
 */
export class Aegis extends GeneratedClient {
  override readonly webhooks: Webhooks = new Webhooks(this);

  constructor(options: ClientOptions = {}) {
    super(options);
  }
}
