// Two sockets joined after a WebSocket handshake: bytes are copied both ways as they come (frames
// are not read), an idle connection is closed, and the end of either side ends the other. Nothing
// here throws: a socket error closes both sides.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a side that the other side's close left open may take to flush before it is destroyed. */
const CLOSE_GRACE_MS = 5_000;

export interface TunnelOptions {
  /** No bytes either way for this long (ms): both sides are closed. */
  idleMs: number;
  /** Called once, when both sides are closed. */
  onClosed: () => void;
}

export interface Tunnel {
  /** Closes both sides now (the gateway is shutting down). */
  destroy(): void;
}

/**
 * Joins `client` and `origin`. `clientHead` and `originHead` are bytes each side sent after its
 * half of the handshake (node hands them over separately from the sockets); they go first.
 */
export function joinSockets(client: Duplex, origin: Duplex, clientHead: Buffer, originHead: Buffer, options: TunnelOptions): Tunnel {
  const idle = setTimeout(() => {
    client.destroy();
    origin.destroy();
  }, options.idleMs);
  idle.unref();
  const touch = () => idle.refresh();

  const closed = new Set<Duplex>();
  const sideClosed = (side: Duplex, other: Duplex) => {
    if (closed.has(side)) return;
    closed.add(side);
    // A close frame the other side is still writing is flushed first; a peer that never reads it
    // does not keep the socket past the grace period.
    if (!other.destroyed) {
      if (other.writableFinished) other.destroy();
      else {
        other.once('finish', () => other.destroy());
        other.end();
        setTimeout(() => other.destroy(), CLOSE_GRACE_MS).unref();
      }
    }
    if (closed.size === 2) {
      clearTimeout(idle);
      options.onClosed();
    }
  };

  const sides = [
    [client, origin],
    [origin, client],
  ] as const;
  for (const [side, other] of sides) {
    side.on('error', () => {
      side.destroy();
      other.destroy();
    });
    side.once('close', () => sideClosed(side, other));
    // Small frames (a chat message, a ping) go out at once rather than waiting for more to batch.
    if ('setNoDelay' in side && typeof side.setNoDelay === 'function') (side as Socket).setNoDelay(true);
  }

  if (originHead.length > 0) client.write(originHead);
  if (clientHead.length > 0) origin.write(clientHead);
  client.pipe(origin);
  origin.pipe(client);
  client.on('data', touch);
  origin.on('data', touch);
  // Either side may have gone while the handshake completed ('close' may already have been emitted).
  for (const [side, other] of sides) if (side.destroyed) sideClosed(side, other);

  return {
    destroy() {
      client.destroy();
      origin.destroy();
    },
  };
}
