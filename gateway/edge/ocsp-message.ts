// OCSP (RFC 6960) messages for stapling: the request for one certificate (its CertID: SHA-1 of the
// issuer's name and key, and the serial number, as every responder accepts), and what the gateway
// needs of a response — that it answers for that serial, the status, and how long it is valid.
// The response is stapled as the responder sent it; the client verifies its signature.
import { createHash, type X509Certificate } from 'node:crypto';
import { TAG, bytesOf, childrenOf, contentOf, contextTag, encode, generalizedTime, readTlv, sequence, type Tlv } from './der.ts';

/** AlgorithmIdentifier { id-sha1, NULL }. */
const SHA1_ALGORITHM = Buffer.from('300906052b0e03021a0500', 'hex');
/** id-pkix-ocsp-basic (1.3.6.1.5.5.7.48.1.1), as its DER content. */
const OCSP_BASIC = Buffer.from('2b0601050507300101', 'hex');

export interface OcspQuery {
  /** The DER request to POST (application/ocsp-request). */
  request: Buffer;
  /** The certificate's serial number as its DER INTEGER content: what a response is matched on. */
  serial: Buffer;
}

export interface OcspAnswer {
  status: 'good' | 'revoked' | 'unknown';
  thisUpdate: Date;
  /** Null: the responder gives no end (newer information is always available). */
  nextUpdate: Date | null;
}

/** The elements of a certificate's TBSCertificate, or null. */
function tbsFields(der: Buffer): Tlv[] | null {
  const certificate = readTlv(der, 0);
  const parts = certificate && certificate.tag === TAG.sequence ? childrenOf(der, certificate) : null;
  const tbs = parts?.[0];
  if (!tbs || tbs.tag !== TAG.sequence) return null;
  const fields = childrenOf(der, tbs);
  // Without the optional [0] version, every field sits one place earlier.
  if (fields && fields[0]?.tag === contextTag(0, true)) fields.shift();
  return fields;
}

/** The request for `leaf`, issued by `issuer`; null when either cannot be read. */
export function ocspQuery(leaf: X509Certificate, issuer: X509Certificate): OcspQuery | null {
  const leafFields = tbsFields(leaf.raw);
  // serialNumber, signature, issuer
  const serial = leafFields?.[0];
  const issuerName = leafFields?.[2];
  if (!serial || serial.tag !== TAG.integer || !issuerName || issuerName.tag !== TAG.sequence) return null;
  const spki = issuer.publicKey.export({ type: 'spki', format: 'der' });
  const spkiTlv = readTlv(spki, 0);
  const keyBits = spkiTlv ? childrenOf(spki, spkiTlv)?.[1] : undefined;
  if (!keyBits || keyBits.tag !== TAG.bitString || keyBits.end - keyBits.contentStart < 2) return null;
  const sha1 = (data: Buffer) => createHash('sha1').update(data).digest();
  const certId = sequence(
    SHA1_ALGORITHM,
    encode(TAG.octetString, sha1(bytesOf(leaf.raw, issuerName))),
    // The key's bits, without the BIT STRING's unused-bits byte.
    encode(TAG.octetString, sha1(spki.subarray(keyBits.contentStart + 1, keyBits.end))),
    bytesOf(leaf.raw, serial),
  );
  return { request: sequence(sequence(sequence(sequence(certId)))), serial: Buffer.from(contentOf(leaf.raw, serial)) };
}

/** What a DER OCSP response says about `serial`, or null when it is not a successful basic response naming it. */
export function readOcspResponse(der: Buffer, serial: Buffer): OcspAnswer | null {
  const top = readTlv(der, 0);
  if (!top || top.tag !== TAG.sequence || top.end !== der.length) return null;
  const [status, bytes] = childrenOf(der, top) ?? [];
  // responseStatus successful (0), then [0] EXPLICIT ResponseBytes.
  if (!status || status.tag !== TAG.enumerated || contentOf(der, status).toString('hex') !== '00' || !bytes || bytes.tag !== contextTag(0, true)) return null;
  const responseBytes = childrenOf(der, bytes)?.[0];
  const [type, octets] = (responseBytes && childrenOf(der, responseBytes)) ?? [];
  if (!type || type.tag !== TAG.oid || !contentOf(der, type).equals(OCSP_BASIC) || !octets || octets.tag !== TAG.octetString) return null;
  const basic = contentOf(der, octets);
  const basicTlv = readTlv(basic, 0);
  const tbs = basicTlv ? childrenOf(basic, basicTlv)?.[0] : undefined;
  const data = tbs ? childrenOf(basic, tbs) : null;
  if (!data) return null;
  // version?, responderID, producedAt, responses
  const fields = data[0]?.tag === contextTag(0, true) ? data.slice(1) : data;
  const responses = fields[2];
  if (!responses || responses.tag !== TAG.sequence) return null;
  for (const single of childrenOf(basic, responses) ?? []) {
    const answer = readSingleResponse(basic, single, serial);
    if (answer) return answer;
  }
  return null;
}

function readSingleResponse(buf: Buffer, single: Tlv, serial: Buffer): OcspAnswer | null {
  const [certId, certStatus, thisUpdateTlv, ...rest] = childrenOf(buf, single) ?? [];
  const idFields = certId ? childrenOf(buf, certId) : null;
  const idSerial = idFields?.[3];
  if (!idSerial || idSerial.tag !== TAG.integer || !contentOf(buf, idSerial).equals(serial) || !certStatus || !thisUpdateTlv) return null;
  const status = certStatus.tag === contextTag(0, false) ? 'good' : certStatus.tag === contextTag(1, true) ? 'revoked' : certStatus.tag === contextTag(2, false) ? 'unknown' : null;
  const thisUpdate = generalizedTime(buf, thisUpdateTlv);
  if (!status || !thisUpdate) return null;
  const nextTlv = rest.find((t) => t.tag === contextTag(0, true));
  const inner = nextTlv ? childrenOf(buf, nextTlv)?.[0] : undefined;
  const nextUpdate = inner ? generalizedTime(buf, inner) : null;
  if (nextTlv && !nextUpdate) return null;
  return { status, thisUpdate, nextUpdate };
}

/** The OCSP responder a certificate names (Authority Information Access), if any; http(s) only. */
export function ocspResponderOf(certificate: X509Certificate): string | null {
  const access = certificate.infoAccess ?? '';
  for (const line of access.split('\n')) {
    const m = /^OCSP - URI:(https?:\/\/\S+)$/.exec(line.trim());
    if (m) return m[1]!;
  }
  return null;
}
