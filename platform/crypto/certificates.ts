// X.509 certificates as PEM text: reading a chain and its key, checking they belong together and
// what the leaf covers. Node's own X509Certificate does the parsing; nothing here stores or logs
// a key. Used where certificates are uploaded (the API), obtained (ACME) and served (the gateway).
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

/** Why a chain or key was refused, naming the field it came in (`certificate` or `private_key`). */
export class CertificateError extends Error {
  constructor(
    readonly field: 'certificate' | 'private_key',
    reason: string,
  ) {
    super(reason);
    this.name = 'CertificateError';
  }
}

export interface ParsedChain {
  /** The leaf first, then the intermediates, each as one PEM block; normalised (no text between blocks). */
  pem: string;
  leaf: X509Certificate;
  /** DNS names the leaf covers: its subject alternative names (the common name only when there are none). */
  names: string[];
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  /** SHA-256 of the leaf's DER: `AB:CD:…`. */
  fingerprint: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END \1-----/g;
/** Far beyond any real chain (a leaf and two or three intermediates); bounds the work per upload. */
const MAX_CHAIN = 8;

function blocks(pem: string): { label: string; text: string }[] {
  return [...pem.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1]!, text: m[0] }));
}

/** Reads a PEM chain, leaf first. Throws CertificateError('certificate') when it is not one. */
export function parseChain(pem: string): ParsedChain {
  const found = blocks(pem);
  const certificates = found.filter((b) => b.label === 'CERTIFICATE');
  if (certificates.length === 0) throw new CertificateError('certificate', 'is not a PEM certificate (-----BEGIN CERTIFICATE-----)');
  if (certificates.length !== found.length) throw new CertificateError('certificate', 'holds something other than certificates (a private key belongs in private_key)');
  if (certificates.length > MAX_CHAIN) throw new CertificateError('certificate', `holds ${certificates.length} certificates; at most ${MAX_CHAIN}`);
  let parsed: X509Certificate[];
  try {
    parsed = certificates.map((b) => new X509Certificate(b.text));
  } catch {
    throw new CertificateError('certificate', 'holds a PEM block that is not a valid X.509 certificate');
  }
  const leaf = parsed[0]!;
  for (let i = 1; i < parsed.length; i++) {
    if (!parsed[i - 1]!.checkIssued(parsed[i]!)) throw new CertificateError('certificate', `certificate ${i + 1} of the chain did not issue certificate ${i}: put the leaf first, then each issuer`);
  }
  return {
    pem: certificates.map((b) => `${b.text.replace(/\r\n/g, '\n')}\n`).join(''),
    leaf,
    names: namesOf(leaf),
    issuer: leaf.issuer.replace(/\n/g, ', '),
    notBefore: new Date(leaf.validFrom),
    notAfter: new Date(leaf.validTo),
    fingerprint: leaf.fingerprint256,
  };
}

/** The DNS names a certificate covers. */
export function namesOf(certificate: X509Certificate): string[] {
  const san = certificate.subjectAltName;
  if (san) {
    return san
      .split(', ')
      .filter((entry) => entry.startsWith('DNS:'))
      .map((entry) => entry.slice(4).toLowerCase());
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
  return cn ? [cn.toLowerCase()] : [];
}

/** Reads a PEM private key (PKCS#8, or traditional RSA/EC). Throws CertificateError('private_key'). */
export function parsePrivateKey(pem: string): KeyObject {
  const found = blocks(pem);
  if (found.length !== 1 || !/PRIVATE KEY$/.test(found[0]!.label)) throw new CertificateError('private_key', 'is not one PEM private key (-----BEGIN PRIVATE KEY-----)');
  if (found[0]!.label === 'ENCRYPTED PRIVATE KEY') throw new CertificateError('private_key', 'is encrypted: upload the key without a passphrase');
  try {
    return createPrivateKey(found[0]!.text);
  } catch {
    throw new CertificateError('private_key', 'is not a valid private key');
  }
}

/** Whether `key` is the private key of the chain's leaf. */
export function keyMatches(chain: ParsedChain, key: KeyObject): boolean {
  return chain.leaf.checkPrivateKey(key);
}

/** Whether a certificate name (`shop.example.com`, `*.example.com`) covers `domain`: a wildcard covers exactly one label. */
export function nameCovers(name: string, domain: string): boolean {
  const host = domain.toLowerCase();
  if (!name.startsWith('*.')) return name === host;
  const dot = host.indexOf('.');
  return dot > 0 && host.slice(dot + 1) === name.slice(2);
}

/** Whether the chain's leaf covers `domain`. */
export function covers(chain: Pick<ParsedChain, 'names'>, domain: string): boolean {
  return chain.names.some((name) => nameCovers(name, domain));
}
