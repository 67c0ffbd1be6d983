// The webhook verifier against the shared vectors (sdks/testdata/webhook-signatures.json), plus
// constructEvent's errors.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Aegis, WebhookSignatureError, constructEvent, verifyWebhookSignature } from '../src/index.ts';

interface Vector {
  name: string;
  secret: string;
  body: string;
  header: string;
  now: number;
  tolerance: number;
  valid: boolean;
}
const { vectors } = JSON.parse(readFileSync(new URL('../../testdata/webhook-signatures.json', import.meta.url), 'utf8')) as { vectors: Vector[] };

describe('verifyWebhookSignature', () => {
  it('has vectors to check', () => {
    expect(vectors.length).toBeGreaterThan(10);
    expect(vectors.some((v) => v.name === 'tampered body' && !v.valid)).toBe(true);
    expect(vectors.some((v) => v.name === 'stale timestamp' && !v.valid)).toBe(true);
  });

  for (const v of vectors) {
    it(`${v.valid ? 'accepts' : 'refuses'}: ${v.name}`, async () => {
      const options = { toleranceSeconds: v.tolerance, now: v.now };
      expect(await verifyWebhookSignature(v.body, v.header, v.secret, options)).toBe(v.valid);
      // The same as bytes.
      expect(await verifyWebhookSignature(new TextEncoder().encode(v.body), v.header, v.secret, options)).toBe(v.valid);
    });
  }
});

describe('constructEvent', () => {
  const valid = vectors.find((v) => v.name === 'valid')!;

  it('answers the parsed event when the signature verifies', async () => {
    const event = await constructEvent(valid.body, valid.header, valid.secret, { now: valid.now });
    expect(event.type).toBe('vulnerability.created');
    const viaClient = await new Aegis({ apiKey: 'unused', baseUrl: 'http://127.0.0.1:9' }).webhooks.constructEvent(valid.body, valid.header, valid.secret, { now: valid.now });
    expect(viaClient.id).toBe(event.id);
  });

  it('throws WebhookSignatureError on a tampered body, a stale timestamp or no header', async () => {
    await expect(constructEvent(valid.body.replace('high', 'low'), valid.header, valid.secret, { now: valid.now })).rejects.toBeInstanceOf(WebhookSignatureError);
    await expect(constructEvent(valid.body, valid.header, valid.secret, { now: valid.now + 301 })).rejects.toBeInstanceOf(WebhookSignatureError);
    await expect(constructEvent(valid.body, undefined, valid.secret)).rejects.toThrow(/missing/);
  });
});
