// A test HTTP server on 127.0.0.1 (port 0: any free one): its base URL, and a close that also ends
// kept-alive connections, so a test never waits for a client's idle socket.
import type { Server } from 'node:http';
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
