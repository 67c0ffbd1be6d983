// A real DNS server for tests (UDP on 127.0.0.1, a random port): it answers A, AAAA and TXT queries from
// a table the test edits, NXDOMAIN for names not in it. Point AEGIS_SHIELD_DNS_SERVERS
// (config.shieldDnsServers) at `server` and the API's origin check and the gateway's connections
// resolve through it over the wire — nothing of ours is mocked, and a test can change an answer
// between two lookups (DNS rebinding).
import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIPv4 } from 'node:net';
import { parseIp } from '../../schemas/checks/ip.ts';

export interface DnsServer {
  /** `127.0.0.1:port`, as AEGIS_SHIELD_DNS_SERVERS takes it. */
  server: string;
  /** Sets a name's addresses (IPv4 answer A queries, IPv6 AAAA); an empty list makes the name exist without records. */
  set(name: string, addresses: string[]): void;
  /** Sets a name's TXT records (each value one character-string, up to 255 bytes); an empty list removes them. */
  setTxt(name: string, values: string[]): void;
  /** Queries received, as `TYPE name` (`A metadata.test`). */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;
const TYPE_TXT = 16;

/** TXT RDATA: one length-prefixed character-string per value. */
function txtBytes(value: string): Buffer {
  const text = Buffer.from(value, 'utf8');
  if (text.length > 255) throw new Error(`TXT value over 255 bytes: ${value}`);
  return Buffer.concat([Buffer.from([text.length]), text]);
}

function addressBytes(address: string): Buffer {
  const ip = parseIp(address);
  if (!ip) throw new Error(`not an address: ${address}`);
  if (ip.version === 4) return Buffer.from([ip.value >>> 24, (ip.value >>> 16) & 255, (ip.value >>> 8) & 255, ip.value & 255]);
  const out = Buffer.alloc(16);
  ip.groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** The question's name, type and where the question section ends, or null for a malformed query. */
function readQuestion(msg: Buffer): { name: string; type: number; end: number } | null {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length) {
    const length = msg[at]!;
    if (length === 0) break;
    if (length > 63) return null; // compression never appears in a question
    labels.push(msg.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
  if (at + 5 > msg.length) return null;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at + 1), end: at + 5 };
}

export async function startDnsServer(): Promise<DnsServer> {
  const table = new Map<string, string[]>();
  const txt = new Map<string, string[]>();
  const queries: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (msg: Buffer, peer: RemoteInfo) => {
    const question = readQuestion(msg);
    if (!question) return;
    queries.push(`${question.type === TYPE_A ? 'A' : question.type === TYPE_AAAA ? 'AAAA' : question.type === TYPE_TXT ? 'TXT' : question.type} ${question.name}`);
    const name = question.name.replace(/\.$/, '');
    const addresses = table.get(name);
    const texts = txt.get(name);
    const exists = addresses !== undefined || texts !== undefined;
    const answers: { type: number; data: Buffer }[] =
      question.type === TYPE_TXT
        ? (texts ?? []).map((value) => ({ type: TYPE_TXT, data: txtBytes(value) }))
        : (addresses ?? []).filter((a) => (question.type === TYPE_A ? isIPv4(a) : question.type === TYPE_AAAA ? !isIPv4(a) : false)).map((a) => {
            const data = addressBytes(a);
            return { type: data.length === 4 ? TYPE_A : TYPE_AAAA, data };
          });
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // id
    header.writeUInt16BE(0x8000 | 0x0400 | (msg.readUInt16BE(2) & 0x0100) | 0x0080 | (exists ? 0 : 3), 2); // QR, AA, RD copied, RA, NOERROR/NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const records = answers.map(({ type, data }) => {
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(0, 6); // TTL 0: nothing may cache an answer a test will change
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, msg.subarray(12, question.end), ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    server: `127.0.0.1:${socket.address().port}`,
    set: (name, addresses) => void table.set(name.toLowerCase(), addresses),
    setTxt: (name, values) => void (values.length === 0 ? txt.delete(name.toLowerCase()) : txt.set(name.toLowerCase(), values)),
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
