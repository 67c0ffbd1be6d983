// What an uploaded certificate must be before it is stored: a PEM chain (leaf first) and an
// unencrypted PEM key that belong together, a leaf that covers the site's domain and is valid now,
// and a key the gateway's TLS accepts. Each problem is a 422 naming its field (`certificate` or
// `private_key`); messages describe the certificate, never quote the key.
import type { KeyObject } from 'node:crypto';
import { CertificateError, covers, keyMatches, parseChain, parsePrivateKey, type ParsedChain } from '../../../platform/crypto/certificates.ts';
import { validationFailed } from '../../../platform/http/errors.ts';

/** OpenSSL's default security level refuses smaller RSA keys in TLS: refuse them here, not at the handshake. */
const MIN_RSA_BITS = 2048;

type FieldError = { field: 'certificate' | 'private_key'; message: string };

function attempt<T>(errors: FieldError[], read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof CertificateError)) throw err;
    errors.push({ field: err.field, message: err.message });
    return undefined;
  }
}

function keyProblem(key: KeyObject): string | null {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType === 'rsa' && bits !== undefined && bits < MIN_RSA_BITS) return `is a ${bits}-bit RSA key; at least ${MIN_RSA_BITS} bits`;
  return null;
}

function chainProblems(chain: ParsedChain, domain: string, now: Date): string[] {
  const problems: string[] = [];
  if (!covers(chain, domain)) problems.push(`does not cover ${domain} (it names ${chain.names.length > 0 ? chain.names.join(', ') : 'no DNS name'})`);
  if (chain.notAfter.getTime() <= now.getTime()) problems.push(`expired on ${chain.notAfter.toISOString()}`);
  if (chain.notBefore.getTime() > now.getTime()) problems.push(`is not valid before ${chain.notBefore.toISOString()}`);
  return problems;
}

/** The chain, when the upload can serve `domain`; otherwise a 422 listing every problem found. */
export function checkUpload(domain: string, certificatePem: string, privateKeyPem: string, now = new Date()): ParsedChain {
  const errors: FieldError[] = [];
  const chain = attempt(errors, () => parseChain(certificatePem));
  const key = attempt(errors, () => parsePrivateKey(privateKeyPem));
  if (chain) for (const message of chainProblems(chain, domain, now)) errors.push({ field: 'certificate', message });
  if (key) {
    const problem = keyProblem(key);
    if (problem) errors.push({ field: 'private_key', message: problem });
    else if (chain && !keyMatches(chain, key)) errors.push({ field: 'private_key', message: 'does not belong to the certificate (its public key differs)' });
  }
  if (errors.length > 0 || !chain) {
    throw validationFailed(`request body is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, { fields: errors });
  }
  return chain;
}
