// The Host a request names, read strictly: a DNS name or an IP literal and an optional port,
// nothing else. `site.test:@evil.example` or `site.test/x` would route by one reading and be
// forwarded (X-Forwarded-Host) for the origin to build links with by another; such a Host is a 400.
import { isIPv6 } from 'node:net';

export interface HostHeader {
  /** As routing compares it: lower case, without a trailing dot; IPv6 in brackets. */
  name: string;
  /** `name[:port]`, the value forwarded as X-Forwarded-Host. */
  text: string;
}

const NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;
const PORT = /^\d{1,5}$/;

export function parseHost(value: string | string[] | undefined): HostHeader | null {
  if (typeof value !== 'string' || value === '' || value.length > 260) return null;
  const host = value.toLowerCase();
  let name: string;
  let port: string | undefined;
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close === -1 || !isIPv6(host.slice(1, close))) return null;
    name = host.slice(0, close + 1);
    const rest = host.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return null;
      port = rest.slice(1);
    }
  } else {
    const colon = host.indexOf(':');
    name = colon === -1 ? host : host.slice(0, colon);
    if (colon !== -1) port = host.slice(colon + 1);
    if (!NAME.test(name)) return null;
    if (name.endsWith('.')) name = name.slice(0, -1);
  }
  if (port !== undefined && (!PORT.test(port) || Number(port) < 1 || Number(port) > 65535)) return null;
  return { name, text: port === undefined ? name : `${name}:${Number(port)}` };
}
