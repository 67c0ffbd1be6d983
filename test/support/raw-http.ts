// Raw HTTP/1.1 over a socket, for requests no client library will send as written (header folding,
// conflicting framing headers, absolute-form targets, exotic encodings). Reads one response.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  head: string;
  body: string;
}

export function rawRequest(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no complete response in time'));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: split < 0 ? '' : text.slice(split + 4) });
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // One response is enough: stop when its announced length has arrived.
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))?.[1];
      if (split >= 0 && length !== undefined && Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(length)) {
        socket.destroy();
        done();
      }
    });
    socket.on('end', done);
    socket.on('close', () => clearTimeout(timer));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(request);
  });
}
