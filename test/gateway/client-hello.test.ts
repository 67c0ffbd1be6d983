// The ClientHello reader the TLS listener decides by (gateway/edge/client-hello.ts): real hellos
// from node's TLS client, every prefix of one, records split in two, and damaged lengths — never a
// throw or a read past the end.
import { createServer, type AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { parseClientHello, TLS12, TLS13 } from '../../gateway/edge/client-hello.ts';

const servers: { close(): void }[] = [];
afterAll(() => servers.forEach((s) => s.close()));

/** The first bytes node's TLS client sends with these options. */
async function helloBytes(options: { servername?: string; ALPNProtocols?: string[]; minVersion?: 'TLSv1.2' | 'TLSv1.3'; maxVersion?: 'TLSv1.2' | 'TLSv1.3' }): Promise<Buffer> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const got = new Promise<Buffer>((resolve) => {
    server.once('connection', (socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        const all = Buffer.concat(chunks);
        if (all.length >= 5 && all.length >= 5 + all.readUInt16BE(3)) {
          resolve(all);
          socket.destroy();
        }
      });
    });
  });
  const client = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', rejectUnauthorized: false, ...options });
  client.on('error', () => undefined);
  const bytes = await got;
  client.destroy();
  return bytes;
}

/** One handshake message re-framed as two records. */
function splitRecords(bytes: Buffer, at: number): Buffer {
  const body = bytes.subarray(5, 5 + bytes.readUInt16BE(3));
  const record = (part: Buffer) => Buffer.concat([Buffer.from([22, 3, 1, part.length >> 8, part.length & 0xff]), part]);
  return Buffer.concat([record(body.subarray(0, at)), record(body.subarray(at))]);
}

describe('parseClientHello', () => {
  it('reads SNI, ALPN and the offered versions of a real ClientHello', async () => {
    const bytes = await helloBytes({ servername: 'Shop.Example.COM', ALPNProtocols: ['h2', 'http/1.1'] });
    const read = parseClientHello(bytes);
    expect(read).toEqual({ kind: 'hello', hello: { serverName: 'shop.example.com', alpn: ['h2', 'http/1.1'], versions: expect.arrayContaining([TLS13, TLS12]) } });
  });

  it('sees a TLS 1.2-only client, a hello without SNI, and ACME ALPN', async () => {
    const old = parseClientHello(await helloBytes({ servername: 'a.test', maxVersion: 'TLSv1.2' }));
    expect(old.kind === 'hello' && old.hello.versions.includes(TLS13)).toBe(false);
    const noSni = parseClientHello(await helloBytes({ ALPNProtocols: ['acme-tls/1'] }));
    expect(noSni).toMatchObject({ kind: 'hello', hello: { serverName: null, alpn: ['acme-tls/1'] } });
  });

  it('says incomplete for every prefix, and reads a hello split across records', async () => {
    const bytes = await helloBytes({ servername: 'split.test', ALPNProtocols: ['h2'] });
    for (let n = 0; n < bytes.length; n++) expect(parseClientHello(bytes.subarray(0, n)).kind, `prefix ${n}`).toBe('incomplete');
    const split = splitRecords(bytes, 40);
    expect(parseClientHello(split)).toMatchObject({ kind: 'hello', hello: { serverName: 'split.test', alpn: ['h2'] } });
    expect(parseClientHello(split.subarray(0, split.length - 1)).kind).toBe('incomplete');
  });

  it('refuses what is not a ClientHello, and lengths that lie', async () => {
    expect(parseClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')).kind).toBe('invalid');
    const bytes = await helloBytes({ servername: 'lie.test' });
    // The handshake message claims more than the maximum.
    const huge = Buffer.from(bytes);
    huge.writeUIntBE(0xffffff, 6, 3);
    expect(parseClientHello(huge).kind).toBe('invalid');
    // The extensions block claims one byte more than there is.
    const body = Buffer.from(bytes);
    const end = 5 + body.readUInt16BE(3);
    let offset = 5 + 4 + 2 + 32;
    offset += 1 + body[offset]!;
    offset += 2 + body.readUInt16BE(offset);
    offset += 1 + body[offset]!;
    body.writeUInt16BE(end - offset - 2 + 1, offset);
    expect(parseClientHello(body).kind).toBe('invalid');
  });

  it('never throws on damaged input', async () => {
    const bytes = await helloBytes({ servername: 'fuzz.test', ALPNProtocols: ['h2', 'http/1.1'] });
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 3000; i++) {
      const damaged = Buffer.from(bytes);
      for (let k = 0; k < 1 + Math.floor(random() * 4); k++) damaged[Math.floor(random() * damaged.length)] = Math.floor(random() * 256);
      const cut = damaged.subarray(0, Math.floor(random() * damaged.length * 1.2));
      expect(() => parseClientHello(cut)).not.toThrow();
    }
  });
});
