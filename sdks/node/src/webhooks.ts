// Webhook signatures: `X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, where v1 is
// HMAC-SHA256(secret, "<t>.<raw body>"). Web Crypto only (async), so it runs on edge runtimes too.
import { WebhookSignatureError } from './errors.ts';

export interface VerifyOptions {
  /** Allowed clock difference in seconds, either way. Default 300. */
  toleranceSeconds?: number | undefined;
  /** The verifier's clock, in unix seconds (tests). Default: now. */
  now?: number | undefined;
}

export const SIGNATURE_HEADER = 'X-Service-Signature';
const encoder = new TextEncoder();

const toBytes = (value: string | Uint8Array | ArrayBuffer): Uint8Array =>
  typeof value === 'string' ? encoder.encode(value) : value instanceof Uint8Array ? value : new Uint8Array(value);

function hexToBytes(hex: string): Uint8Array | undefined {
  if (hex.length !== 64 || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Compares every byte whatever differs first, so timing does not reveal how much matched. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

function parseHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d+$/.test(value)) return undefined;
      timestamp = Number(value);
    } else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return undefined;
  return { timestamp, signatures };
}

async function sign(secret: string, payload: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const key = await globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, payload));
}

/** Why `header` does not verify `rawBody`, or undefined when it does. */
async function check(rawBody: string | Uint8Array | ArrayBuffer, header: string | null | undefined, secret: string, options: VerifyOptions): Promise<string | undefined> {
  if (!header) return 'missing signature header';
  const parsed = parseHeader(header);
  if (!parsed) return 'malformed signature header';
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.timestamp) > tolerance) return 'timestamp outside the tolerance';
  const body = toBytes(rawBody);
  const prefix = encoder.encode(`${parsed.timestamp}.`);
  const payload = new Uint8Array(prefix.length + body.length);
  payload.set(prefix);
  payload.set(body, prefix.length);
  const expected = await sign(secret, payload);
  let ok = false;
  // Every candidate is compared (no early exit), as a rotation may put the match anywhere.
  for (const candidate of parsed.signatures) {
    const bytes = hexToBytes(candidate);
    if (bytes && constantTimeEqual(bytes, expected)) ok = true;
  }
  return ok ? undefined : 'no signature matches';
}

/**
 * Whether `header` (the `X-Service-Signature` value) signs `rawBody` (the exact bytes received)
 * with `secret`, within the tolerance. Malformed headers are simply not valid.
 */
export async function verifyWebhookSignature(rawBody: string | Uint8Array | ArrayBuffer, header: string | null | undefined, secret: string, options: VerifyOptions = {}): Promise<boolean> {
  return (await check(rawBody, header, secret, options)) === undefined;
}

/** A webhook event as delivered. */
export interface WebhookEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  created_at: string;
  data: Data;
  [key: string]: unknown;
}

/** Verifies the signature, then parses the body; throws WebhookSignatureError when it does not verify. */
export async function constructEvent<Data = Record<string, unknown>>(rawBody: string | Uint8Array | ArrayBuffer, header: string | null | undefined, secret: string, options: VerifyOptions = {}): Promise<WebhookEvent<Data>> {
  const reason = await check(rawBody, header, secret, options);
  if (reason) throw new WebhookSignatureError(`Webhook signature verification failed: ${reason}`, { code: 'invalid_signature' });
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(toBytes(rawBody));
  try {
    return JSON.parse(text) as WebhookEvent<Data>;
  } catch (cause) {
    throw new WebhookSignatureError('Webhook body is not JSON', { code: 'invalid_payload', cause });
  }
}
