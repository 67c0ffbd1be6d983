// How the gateway speaks TLS (docs/shield-edge.md, "TLS"): Mozilla's "intermediate" profile —
// TLS 1.2 and 1.3 only, ECDHE key exchange with AEAD ciphers only (no CBC, no RSA key exchange, no
// DHE), the server's order of preference — and session resumption by tickets whose keys every
// gateway process derives from the server key, so a ticket issued by one worker or node resumes
// on another. The keys rotate daily; a ticket from the day before then falls back to a full
// handshake.
import { createHmac, hkdfSync, type KeyObject } from 'node:crypto';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';

/** TLS 1.2 suites: ECDHE (ECDSA or RSA certificates) with AES-GCM or ChaCha20-Poly1305, strongest first. */
const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];
/** TLS 1.3 suites (all three are AEAD). */
const TLS13_CIPHERS = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

export const CIPHERS = [...TLS13_CIPHERS, ...TLS12_CIPHERS].join(':');
export const ECDH_CURVES = 'X25519:prime256v1:secp384r1';

/** Options every context and the TLS server share. */
export const TLS_DEFAULTS = {
  minVersion: 'TLSv1.2',
  maxVersion: 'TLSv1.3',
  ciphers: CIPHERS,
  ecdhCurve: ECDH_CURVES,
  honorCipherOrder: true,
} as const satisfies SecureContextOptions;

/** A certificate's context: its chain and key under the defaults. `key` is PEM text or a KeyObject's PEM, held only by the context. */
export function certificateContext(certificatePem: string, key: string | KeyObject): SecureContext {
  const keyPem = typeof key === 'string' ? key : (key.export({ type: 'pkcs8', format: 'pem' }) as string);
  return createSecureContext({ ...TLS_DEFAULTS, cert: certificatePem, key: keyPem });
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The 48 bytes node's TLS server takes as ticket keys (name, HMAC secret, AES key) for `day` (days since the epoch). */
export function ticketKeysFor(serverKey: Buffer, day: number): Buffer {
  // The salt separates these keys from every other use of the server key.
  return Buffer.from(hkdfSync('sha256', serverKey, 'aegis shield tls session tickets', `day:${day}`, 48));
}

export const currentDay = (now = Date.now()): number => Math.floor(now / DAY_MS);

/** A stable, non-secret name for the server key's ticket generation (logs): never the key itself. */
export const ticketKeyId = (serverKey: Buffer, day: number): string => createHmac('sha256', serverKey).update(`ticket-id:${day}`).digest('hex').slice(0, 8);
