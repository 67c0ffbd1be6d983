// A test HTTP server on 127.0.0.1 (port 0: any free one): its base URL, and a close that also ends
// kept-alive connections, so a test never waits for a client's idle socket; and a free port for a
// process the test starts itself.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listenOnLoopback(server: Server, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(err) : resolve()));
      }),
  };
}

/** A port free at this moment on 127.0.0.1 (for a child process that must be told its port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
