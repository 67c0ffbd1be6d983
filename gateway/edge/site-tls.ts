// A site's TLS settings applied to requests (docs/shield-edge.md, "TLS"): the HTTP → HTTPS redirect
// on the plain listener and the Strict-Transport-Security header on answers over TLS.
import type { SiteTlsSettings } from '../../platform/db/schema.ts';
import type { HostHeader } from '../proxy/host.ts';

/** The Strict-Transport-Security value of `hsts`, or null when the site sends none. */
export function hstsValue(hsts: SiteTlsSettings['hsts']): string | null {
  if (!hsts) return null;
  return `max-age=${hsts.max_age}${hsts.include_subdomains ? '; includeSubDomains' : ''}${hsts.preload ? '; preload' : ''}`;
}

/**
 * Where a plain-HTTP request is redirected: the same host, path and query over HTTPS. A client that
 * reached the default port (no port in Host) is sent to the default HTTPS port, as a public edge
 * mapped 80/443 onto the gateway's ports expects; one that named a port is sent to the TLS port
 * itself. Null for a target that is not origin-form (`/path?query`).
 */
export function httpsLocation(host: HostHeader, target: string, tlsPort: number): string | null {
  if (!target.startsWith('/')) return null;
  const namedPort = host.text !== host.name;
  const port = namedPort && tlsPort !== 443 ? `:${tlsPort}` : '';
  return `https://${host.name}${port}${target}`;
}
