// Answers on a socket node:http handed over with an `upgrade` event. Once a server listens for
// upgrades, node gives it every request carrying `Upgrade` (WebSocket or not) without a
// ServerResponse; these requests are still answered with the gateway's ordinary pages and
// forwarding, so a ServerResponse is bound to the socket for exactly one answer, then the socket
// is closed (`Connection: close`): the parser that would read a next request is gone.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Whether the request asks to become a WebSocket (RFC 6455 §4.1): a GET with `Upgrade: websocket` and `Connection: upgrade`. */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return req.method === 'GET' && listsToken(req.headers.upgrade, 'websocket') && listsToken(req.headers.connection, 'upgrade');
}

function listsToken(value: string | string[] | undefined, token: string): boolean {
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.split(',').some((part) => part.trim().toLowerCase() === token);
}

/** A response written to `socket` (an upgrade's), after which the socket closes. */
export function responseOnSocket(req: IncomingMessage, socket: Duplex): ServerResponse {
  // An upgrade's socket is a net.Socket (or tls.TLSSocket) whose HTTP parser node has detached.
  const raw = socket as Socket;
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(raw);
  res.once('finish', () => {
    res.detachSocket(raw);
    if (typeof raw.destroySoon === 'function') raw.destroySoon();
    else raw.end();
  });
  return res;
}
