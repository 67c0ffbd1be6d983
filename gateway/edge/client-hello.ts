// The first flight of a TLS connection, read before any TLS library sees it: which name the client
// asks for (SNI), which application protocols it offers (ALPN) and which TLS versions. The TLS
// listener decides from these which certificate answers (a site's, or an ACME TLS-ALPN-01
// challenge's for `acme-tls/1`) and whether the site's minimum version can be met, before the
// handshake starts. Every length is checked against what is left: a short or lying record is
// `incomplete` (more bytes may come) or `invalid`, never a read past the end.

/** TLS record content type of handshake messages, and the handshake type of a ClientHello. */
const HANDSHAKE = 22;
const CLIENT_HELLO = 1;
const EXT_SERVER_NAME = 0;
const EXT_ALPN = 16;
const EXT_SUPPORTED_VERSIONS = 43;
/** A ClientHello is one handshake message; past this it is not one a browser or ACME CA sends. */
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

export const TLS12 = 0x0303;
export const TLS13 = 0x0304;

export interface ClientHello {
  /** The host_name of the server_name extension, lower case without a trailing dot; null when absent or not a DNS name. */
  serverName: string | null;
  /** ALPN protocol names offered, in the client's order (empty without the extension). */
  alpn: string[];
  /** Versions offered: the supported_versions extension, else the legacy version field; GREASE left out. */
  versions: number[];
}

export type HelloRead = { kind: 'incomplete' } | { kind: 'invalid'; reason: string } | { kind: 'hello'; hello: ClientHello };

const DNS_NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
/** GREASE values (RFC 8701) are 0x?a?a: offered to keep servers honest, never meant. */
const isGrease = (value: number): boolean => (value & 0x0f0f) === 0x0a0a && value >> 8 === (value & 0xff);

/**
 * Reads the ClientHello from the first bytes of a connection. The handshake message may span
 * several records; only handshake records may come before it ends.
 */
export function parseClientHello(bytes: Buffer, maxBytes = MAX_CLIENT_HELLO_BYTES): HelloRead {
  // Reassemble the handshake message from the record fragments that have arrived.
  const fragments: Buffer[] = [];
  let have = 0;
  let needed = -1;
  for (let offset = 0; ; ) {
    if (bytes.length - offset < 5) return { kind: 'incomplete' };
    if (bytes[offset] !== HANDSHAKE) return { kind: 'invalid', reason: 'not a TLS handshake record' };
    if (bytes[offset + 1] !== 3) return { kind: 'invalid', reason: 'not a TLS record version' };
    const length = bytes.readUInt16BE(offset + 3);
    if (length === 0 || length > 16384) return { kind: 'invalid', reason: 'bad record length' };
    if (bytes.length - offset - 5 < length) return { kind: 'incomplete' };
    fragments.push(bytes.subarray(offset + 5, offset + 5 + length));
    have += length;
    offset += 5 + length;
    if (needed === -1 && have >= 4) {
      const head = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments, have);
      if (head[0] !== CLIENT_HELLO) return { kind: 'invalid', reason: 'the first handshake message is not a ClientHello' };
      needed = 4 + head.readUIntBE(1, 3);
      if (needed > maxBytes) return { kind: 'invalid', reason: 'ClientHello too large' };
    }
    if (needed !== -1 && have >= needed) {
      const message = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments, have);
      return readHello(message.subarray(4, needed));
    }
    if (have > maxBytes) return { kind: 'invalid', reason: 'ClientHello too large' };
  }
}

/** A cursor over one buffer: every read checks the bytes are there. */
class Reader {
  offset = 0;
  constructor(readonly buf: Buffer) {}
  get left(): number {
    return this.buf.length - this.offset;
  }
  u8(): number | null {
    if (this.left < 1) return null;
    return this.buf[this.offset++]!;
  }
  u16(): number | null {
    if (this.left < 2) return null;
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  bytes(n: number): Buffer | null {
    if (n < 0 || this.left < n) return null;
    const out = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
  /** A vector with a 1- or 2-byte length prefix. */
  vector(lengthBytes: 1 | 2): Buffer | null {
    const n = lengthBytes === 1 ? this.u8() : this.u16();
    return n === null ? null : this.bytes(n);
  }
}

const invalid = (reason: string): HelloRead => ({ kind: 'invalid', reason });

function readHello(body: Buffer): HelloRead {
  const r = new Reader(body);
  const legacyVersion = r.u16();
  if (legacyVersion === null || r.bytes(32) === null) return invalid('truncated ClientHello');
  const sessionId = r.vector(1);
  if (sessionId === null || sessionId.length > 32) return invalid('bad session id');
  const suites = r.vector(2);
  if (suites === null || suites.length < 2 || suites.length % 2 !== 0) return invalid('bad cipher suites');
  const compression = r.vector(1);
  if (compression === null || compression.length < 1) return invalid('bad compression methods');
  const hello: ClientHello = { serverName: null, alpn: [], versions: [] };
  let versionsSeen = false;
  if (r.left > 0) {
    const extensions = r.vector(2);
    if (extensions === null || r.left !== 0) return invalid('bad extensions block');
    const e = new Reader(extensions);
    const seen = new Set<number>();
    while (e.left > 0) {
      const type = e.u16();
      const data = e.vector(2);
      if (type === null || data === null) return invalid('truncated extension');
      // RFC 8446 §4.2: an extension type appears once.
      if (seen.has(type)) return invalid('repeated extension');
      seen.add(type);
      if (type === EXT_SERVER_NAME) {
        const name = readServerName(data);
        if (name === undefined) return invalid('bad server_name extension');
        hello.serverName = name;
      } else if (type === EXT_ALPN) {
        const alpn = readAlpn(data);
        if (alpn === null) return invalid('bad ALPN extension');
        hello.alpn = alpn;
      } else if (type === EXT_SUPPORTED_VERSIONS) {
        const versions = readVersions(data);
        if (versions === null) return invalid('bad supported_versions extension');
        hello.versions = versions;
        versionsSeen = true;
      }
    }
  } else if (r.left !== 0) return invalid('trailing bytes');
  if (!versionsSeen) hello.versions = [legacyVersion];
  return { kind: 'hello', hello };
}

/** The host_name entry: a DNS name (lower case, no trailing dot), null for one that is not; undefined when malformed. */
function readServerName(data: Buffer): string | null | undefined {
  const r = new Reader(data);
  const list = r.vector(2);
  if (list === null || r.left !== 0) return undefined;
  const l = new Reader(list);
  let name: string | null = null;
  while (l.left > 0) {
    const type = l.u8();
    const value = l.vector(2);
    if (type === null || value === null) return undefined;
    if (type !== 0 || name !== null) continue;
    // Bytes outside printable ASCII cannot make a DNS name (IDNs travel as A-labels).
    const text = value.toString('latin1').toLowerCase().replace(/\.$/, '');
    name = text.length > 0 && text.length <= 253 && DNS_NAME.test(text) ? text : null;
  }
  return name;
}

function readAlpn(data: Buffer): string[] | null {
  const r = new Reader(data);
  const list = r.vector(2);
  if (list === null || r.left !== 0 || list.length === 0) return null;
  const l = new Reader(list);
  const out: string[] = [];
  while (l.left > 0) {
    const name = l.vector(1);
    if (name === null || name.length === 0) return null;
    out.push(name.toString('latin1'));
  }
  return out;
}

function readVersions(data: Buffer): number[] | null {
  const r = new Reader(data);
  const list = r.vector(1);
  if (list === null || r.left !== 0 || list.length === 0 || list.length % 2 !== 0) return null;
  const out: number[] = [];
  for (let i = 0; i < list.length; i += 2) {
    const v = list.readUInt16BE(i);
    if (!isGrease(v)) out.push(v);
  }
  return out;
}
