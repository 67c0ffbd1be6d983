// Keys made here: ECDSA P-256 (PKCS#8 PEM) for the account, every certificate and every TLS-ALPN-01
// answer. A certificate never reuses a key.
import { generateKeyPairSync } from 'node:crypto';

export function newEcdsaKey(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
}
