// Reads a new connection's ClientHello (client-hello.ts) off the socket, then puts the bytes back:
// `unshift` returns them to the socket's read buffer, and a TLSSocket made from that socket feeds
// buffered bytes to its TLS engine before it reads the wire (node's _tls_wrap `initRead`), so the
// handshake runs on the native socket as if nothing had been read. A client that sends no complete
// ClientHello in time, or too large a one, is dropped.
import type { Socket } from 'node:net';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello, type ClientHello } from './client-hello.ts';

export type HelloFailure = 'timeout' | 'invalid' | 'closed';

export type HelloResult = { hello: ClientHello } | { failure: HelloFailure };

export interface HelloReaderOptions {
  /** How long a connection may take to send its ClientHello. */
  timeoutMs: number;
  maxBytes?: number;
}

/** Waits for the ClientHello; on success the socket is paused with every byte read put back. */
export function readClientHello(socket: Socket, options: HelloReaderOptions): Promise<HelloResult> {
  const maxBytes = options.maxBytes ?? MAX_CLIENT_HELLO_BYTES;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: HelloResult, bytes?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onClosed);
      socket.off('close', onClosed);
      socket.off('error', onClosed);
      if (bytes) {
        socket.pause();
        socket.unshift(bytes);
      }
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      const bytes = chunks.length === 1 ? chunk : Buffer.concat(chunks, size);
      const read = parseClientHello(bytes, maxBytes);
      if (read.kind === 'hello') return finish({ hello: read.hello }, bytes);
      if (read.kind === 'invalid' || size > maxBytes + 5 * 8) finish({ failure: 'invalid' });
    };
    const onClosed = () => finish({ failure: 'closed' });
    const timer = setTimeout(() => finish({ failure: 'timeout' }), options.timeoutMs);
    timer.unref();
    socket.on('data', onData);
    socket.once('end', onClosed);
    socket.once('close', onClosed);
    socket.once('error', onClosed);
  });
}

/** A fatal TLS alert in a plaintext record (sent before any handshake message of ours). */
export function tlsAlert(description: number): Buffer {
  return Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, description]);
}

export const ALERT = {
  /** RFC 6066: the server does not recognise the name the client asked for. */
  unrecognizedName: 112,
  /** The client offers no version the site accepts (its minimum is TLS 1.3). */
  protocolVersion: 70,
  handshakeFailure: 40,
} as const;

/** Refuses the handshake with `alert` and closes the connection (destroyed if the client does not read it). */
export function refuseHandshake(socket: Socket, alert: number): void {
  socket.once('error', () => undefined);
  socket.end(tlsAlert(alert));
  setTimeout(() => socket.destroy(), 1_000).unref();
}
