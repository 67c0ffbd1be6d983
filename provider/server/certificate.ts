// The self-signed server certificate go-plugin's client pins (it arrives in the handshake line).
// Written as DER by hand with Node's crypto for the key and the signature: the certificate is one
// fixed shape, and the libraries that build ECDSA certificates cost more start-up time than the
// whole handshake budget (@peculiar/x509 loads in ~160 ms and needs a reflect polyfill; node-forge
// cannot make ECDSA certificates).
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

export interface ServerCertificate {
  der: Buffer;
  certPem: string;
  keyPem: string;
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.of(n);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.of(0x80 | bytes.length, ...bytes);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.of(tag), length(body.length), body]);
}

const sequence = (...content: Buffer[]): Buffer => tlv(0x30, ...content);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const iso = date.toISOString(); // 2024-01-02T03:04:05.678Z → 240102030405Z
  const text = iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19) + 'Z';
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [tlv(0x01, Buffer.of(0xff))] : []), tlv(0x04, value));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

/** A fresh P-256 key and certificate for `localhost`, valid from an hour ago for a year. */
export function createServerCertificate(now = new Date()): ServerCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = sequence(
    tlv(0x31, sequence(oid('2.5.4.10'), tlv(0x0c, Buffer.from('Aegis')))),
    tlv(0x31, sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from('localhost')))),
  );
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x3f | 0x40; // positive and without a leading zero byte
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.of(2))), // v3
    tlv(0x02, serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(utcTime(new Date(now.getTime() - 3_600_000)), utcTime(new Date(now.getTime() + 365 * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      sequence(
        // What go-plugin's own certificates carry: a CA (it is its own root), usable for TLS both ways.
        extension('2.5.29.19', true, sequence(tlv(0x01, Buffer.of(0xff)))),
        extension('2.5.29.15', true, tlv(0x03, Buffer.of(0x02, 0xac))), // digitalSignature, keyEncipherment, keyAgreement, keyCertSign
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))),
        extension('2.5.29.17', false, sequence(tlv(0x82, Buffer.from('localhost', 'ascii')))), // DNS SAN: CN alone is refused
      ),
    ),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = sequence(tbs, ECDSA_WITH_SHA256, tlv(0x03, Buffer.of(0), signature));
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  return {
    der,
    certPem: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`,
    keyPem: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })).export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
