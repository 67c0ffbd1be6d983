// Who the client is. The TCP peer, unless the peer is one of our trusted proxies (a load balancer
// in front of the gateway): then X-Forwarded-For is walked from the right, skipping trusted hops,
// and the first address not ours is the client. Entries further left were written by the client
// and prove nothing, so they are never taken.
import type { GatewayRequest } from './exchange.ts';
import { networkOf, parseIp, sameIp, type ParsedIp } from '../../schemas/checks/ip.ts';

interface Network {
  base: ParsedIp;
  prefix: number;
}

export interface ClientAddress {
  /** Canonical text of the client address (IPv4-mapped IPv6 unwrapped). */
  text: string;
  parsed: ParsedIp;
  /** True when the TCP peer is a trusted proxy (its X-Forwarded-* headers are believed). */
  viaTrustedProxy: boolean;
  /** The scheme the client used: the first X-Forwarded-Proto entry from a trusted proxy, else the socket's. */
  proto: 'http' | 'https';
}

export class ClientIpResolver {
  readonly #trusted: Network[];

  /** `trusted`: addresses or CIDRs (`10.0.0.0/8`, `::1`). Throws on an entry that is neither. */
  constructor(trusted: readonly string[]) {
    this.#trusted = trusted.map((entry) => {
      const [address = '', bits] = entry.split('/');
      const base = parseIp(address);
      const max = base?.version === 4 ? 32 : 128;
      const prefix = bits === undefined ? max : Number(bits);
      if (!base || !Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`trusted proxy "${entry}" is not an IP address or CIDR`);
      return { base: networkOf(base, prefix), prefix };
    });
  }

  #isTrusted(ip: ParsedIp): boolean {
    for (const net of this.#trusted) if (net.base.version === ip.version && sameIp(networkOf(ip, net.prefix), net.base)) return true;
    return false;
  }

  resolve(req: GatewayRequest): ClientAddress {
    const peerText = unwrapMapped(req.socket.remoteAddress ?? '0.0.0.0');
    const peer = parseIp(peerText) ?? { version: 4 as const, value: 0 };
    const socketProto = 'encrypted' in req.socket ? 'https' : 'http';
    if (this.#trusted.length === 0 || !this.#isTrusted(peer)) return { text: peerText, parsed: peer, viaTrustedProxy: false, proto: socketProto };
    const proto = forwardedProto(req.headers['x-forwarded-proto']) ?? socketProto;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const text = unwrapMapped(hops[i]!.trim());
      const ip = parseIp(text);
      if (!ip) break;
      if (!this.#isTrusted(ip)) return { text, parsed: ip, viaTrustedProxy: true, proto };
    }
    return { text: peerText, parsed: peer, viaTrustedProxy: true, proto };
  }
}

/** The first entry (the one the outermost proxy saw) of `https, http`-style lists, case-insensitive. */
function forwardedProto(header: string | string[] | undefined): 'http' | 'https' | undefined {
  const first = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https' || first === 'http' ? first : undefined;
}

function unwrapMapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
