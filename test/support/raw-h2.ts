// Raw HTTP/2 over TLS, for requests no client library will send as written (node's own refuses a
// repeated Content-Type, for one): the frames are built here — connection preface, SETTINGS,
// HEADERS (+ CONTINUATION) with an HPACK block of literal fields, DATA within the peer's flow-control
// windows — and the answer read back: the status, the body, or the RST_STREAM / GOAWAY that ended
// the stream instead. One request per connection.
import { connect, type TLSSocket } from 'node:tls';

export interface RawH2Request {
  /** `:authority`, also the TLS server name unless `servername` is given. */
  authority: string;
  servername?: string;
  method: string;
  path: string;
  /** Regular header fields, sent in this order as given (lower case, as HTTP/2 requires). */
  headers?: [string, string][];
  /** The body, sent in DATA frames of at most `chunkBytes` (default 16 KiB). */
  body?: Buffer;
  chunkBytes?: number;
}

export interface RawH2Response {
  /** `:status`, or null when the stream was reset or the connection went away first. */
  status: number | null;
  body: Buffer;
  /** RST_STREAM's error code, when the server reset the stream. */
  resetCode: number | null;
  /** GOAWAY's error code, when the server sent one. */
  goawayCode: number | null;
}

const FRAME = { data: 0, headers: 1, rst: 3, settings: 4, ping: 6, goaway: 7, window: 8, continuation: 9 } as const;
const FLAG = { endStream: 0x1, ack: 0x1, endHeaders: 0x4 } as const;
const MAX_FRAME = 16_384;

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK integer with an N-bit prefix (RFC 7541 §5.1). */
function integer(value: number, prefixBits: number, first = 0): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const out = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest & 0x7f) | 0x80);
    rest >>= 7;
  }
  out.push(rest);
  return Buffer.from(out);
}

const literalString = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([integer(bytes.length, 7), bytes]);
};

/** Every field as a literal without indexing, new name (RFC 7541 §6.2.2): exactly the bytes given. */
function headerBlock(fields: [string, string][]): Buffer {
  return Buffer.concat(fields.flatMap(([name, value]) => [Buffer.from([0x00]), literalString(name), literalString(value)]));
}

/** Huffman codes of the ten digits (RFC 7541 Appendix B): all a status needs. */
const DIGIT_CODES: [string, string][] = [
  ['00000', '0'], ['00001', '1'], ['00010', '2'], ['011001', '3'], ['011010', '4'], ['011011', '5'], ['011100', '6'], ['011101', '7'], ['011110', '8'], ['011111', '9'],
];
const STATIC_STATUS: Record<number, number> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500 };

function readInteger(buf: Buffer, offset: number, prefixBits: number): [number, number] {
  const max = (1 << prefixBits) - 1;
  let value = buf[offset]! & max;
  let at = offset + 1;
  if (value < max) return [value, at];
  for (let shift = 0; ; shift += 7) {
    const b = buf[at++]!;
    value += (b & 0x7f) << shift;
    if (!(b & 0x80)) return [value, at];
  }
}

/** `:status` from the start of a response header block (nghttp2 writes it first). */
function statusOf(block: Buffer): number | null {
  let at = 0;
  while (at < block.length && (block[at]! & 0xe0) === 0x20) at = readInteger(block, at, 5)[1]; // dynamic table size updates
  const first = block[at]!;
  if (first & 0x80) return STATIC_STATUS[readInteger(block, at, 7)[0]] ?? null;
  const prefix = first & 0x40 ? 6 : 4;
  const [nameIndex, afterName] = readInteger(block, at, prefix);
  if (nameIndex < 8 || nameIndex > 14) return null;
  const huffman = (block[afterName]! & 0x80) !== 0;
  const [length, start] = readInteger(block, afterName, 7);
  const value = block.subarray(start, start + length);
  if (!huffman) return Number(value.toString('latin1'));
  let bits = [...value].map((b) => b.toString(2).padStart(8, '0')).join('');
  let text = '';
  while (text.length < 3) {
    const code = DIGIT_CODES.find(([c]) => bits.startsWith(c));
    if (!code) return null;
    text += code[1];
    bits = bits.slice(code[0].length);
  }
  return Number(text);
}

export function rawH2Request(port: number, ca: string, request: RawH2Request, timeoutMs = 10_000): Promise<RawH2Response> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = connect({ port, host: '127.0.0.1', servername: request.servername ?? request.authority, ca, ALPNProtocols: ['h2'] });
    const result: RawH2Response = { status: null, body: Buffer.alloc(0), resetCode: null, goawayCode: null };
    const body = request.body ?? Buffer.alloc(0);
    const chunk = Math.min(request.chunkBytes ?? MAX_FRAME, MAX_FRAME);
    let sent = 0;
    let connectionWindow = 65_535;
    let streamWindow = 65_535;
    let finished = false;
    let pending = Buffer.alloc(0);
    let headerBlockParts: Buffer[] = [];
    const timer = setTimeout(() => done(new Error('no complete HTTP/2 answer in time')), timeoutMs);
    const done = (err?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(result);
    };
    const sendBody = () => {
      while (!finished && sent < body.length && connectionWindow > 0 && streamWindow > 0) {
        const size = Math.min(chunk, body.length - sent, connectionWindow, streamWindow);
        const last = sent + size === body.length;
        socket.write(frame(FRAME.data, last ? FLAG.endStream : 0, 1, body.subarray(sent, sent + size)));
        sent += size;
        connectionWindow -= size;
        streamWindow -= size;
      }
    };
    socket.on('secureConnect', () => {
      if (socket.alpnProtocol !== 'h2') return done(new Error(`ALPN negotiated ${String(socket.alpnProtocol)}, not h2`));
      const fields: [string, string][] = [[':method', request.method], [':scheme', 'https'], [':authority', request.authority], [':path', request.path], ...(request.headers ?? [])];
      const block = headerBlock(fields);
      const out = [Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), frame(FRAME.settings, 0, 0, Buffer.alloc(0))];
      // Our receive window as large as allowed, so a response body never waits on us.
      const grow = Buffer.alloc(4);
      grow.writeUInt32BE(0x7fffffff - 65_535);
      out.push(frame(FRAME.window, 0, 0, grow));
      for (let i = 0; i < block.length || i === 0; i += MAX_FRAME) {
        const part = block.subarray(i, i + MAX_FRAME);
        const last = i + MAX_FRAME >= block.length;
        const flags = (last ? FLAG.endHeaders : 0) | (i === 0 && body.length === 0 ? FLAG.endStream : 0);
        out.push(frame(i === 0 ? FRAME.headers : FRAME.continuation, flags, 1, part));
      }
      socket.write(Buffer.concat(out));
      sendBody();
    });
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const type = pending[3]!;
        const flags = pending[4]!;
        const stream = pending.readUInt32BE(5) & 0x7fffffff;
        const payload = pending.subarray(9, 9 + length);
        pending = pending.subarray(9 + length);
        if (type === FRAME.settings && !(flags & FLAG.ack)) {
          for (let i = 0; i + 6 <= payload.length; i += 6) {
            if (payload.readUInt16BE(i) === 4) streamWindow += payload.readUInt32BE(i + 2) - 65_535;
          }
          socket.write(frame(FRAME.settings, FLAG.ack, 0, Buffer.alloc(0)));
        } else if (type === FRAME.ping && !(flags & FLAG.ack)) socket.write(frame(FRAME.ping, FLAG.ack, 0, payload));
        else if (type === FRAME.window) {
          if (stream === 0) connectionWindow += payload.readUInt32BE(0) & 0x7fffffff;
          else if (stream === 1) streamWindow += payload.readUInt32BE(0) & 0x7fffffff;
        } else if (type === FRAME.goaway) {
          result.goawayCode = payload.readUInt32BE(4);
          return done();
        } else if (stream === 1) {
          if (type === FRAME.rst) {
            result.resetCode = payload.readUInt32BE(0);
            return done();
          }
          if (type === FRAME.headers || type === FRAME.continuation) {
            // No PADDED or PRIORITY flags on the server's HEADERS (nghttp2 sends neither).
            headerBlockParts.push(payload);
            if (flags & FLAG.endHeaders && result.status === null) {
              result.status = statusOf(Buffer.concat(headerBlockParts));
              headerBlockParts = [];
            }
          } else if (type === FRAME.data) result.body = Buffer.concat([result.body, payload]);
          if (flags & FLAG.endStream && (type === FRAME.headers || type === FRAME.data)) return done();
        }
      }
      sendBody();
    });
    socket.on('error', (err) => done(err));
    socket.on('close', () => done(result.status === null && result.resetCode === null && result.goawayCode === null ? new Error('connection closed before an answer') : undefined));
  });
}
