// The signature on every delivery (DESIGN §4, spec 5.6): `X-Service-Signature: t=<unix>,v1=<hex>`,
// v1 = HMAC-SHA256(secret, "<t>.<raw body>"), with one `v1=` per secret in use (two during a
// rotation). `verifyServiceSignature` is what receivers call; it depends on node:crypto alone, so
// the package exports it (`aegis/webhooks`) for receivers to import.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
/** Deliveries older (or further in the future) than this are refused by receivers (spec 5.6, 8). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const hmac = (secret: string, timestamp: number, body: string | Buffer): string =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');

/** The header value for `body` signed at `timestamp` (unix seconds) with each of `secrets`. */
export function signatureHeader(body: string | Buffer, secrets: readonly string[], timestamp = Math.floor(Date.now() / 1000)): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmac(secret, timestamp, body)}`)].join(',');
}

/**
 * True when `header` carries a `v1` signature of `rawBody` made with `secret` at a time within
 * `toleranceSeconds` of now. Pass the body exactly as received (before any JSON parsing). Compares
 * in constant time; a malformed header is simply false.
 */
export function verifyServiceSignature(
  rawBody: string | Buffer,
  header: string | null | undefined,
  secret: string,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!header || !secret) return false;
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value.toLowerCase(), 'hex'));
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), 'hex');
  // Every candidate is compared, so the time taken does not say which one matched.
  let matched = false;
  for (const signature of signatures) matched = timingSafeEqual(signature, expected) || matched;
  return matched;
}
