// What the server's configuration says about sites as an edge: whether it terminates TLS (which
// decides the TLS mode of a new site), whether a site must prove its domain before it serves, and
// where an HTTP domain proof is fetched from. Built once from ServerConfig and handed to the routes.
import type { ServerConfig } from '../../config.ts';

export interface EdgeSettings {
  /** AEGIS_SHIELD_TLS_PORT: set, new sites default to `tls.mode: acme`; unset, to `off`. */
  tlsPort: number | undefined;
  /** AEGIS_SHIELD_DOMAIN_PROOF. */
  domainProof: 'required' | 'contested';
  /** AEGIS_SHIELD_DOMAIN_PROOF_HTTP_PORT (80). */
  proofHttpPort: number;
}

export function edgeSettings(config: Pick<ServerConfig, 'shieldTlsPort' | 'shieldDomainProof' | 'shieldDomainProofHttpPort'>): EdgeSettings {
  return { tlsPort: config.shieldTlsPort, domainProof: config.shieldDomainProof, proofHttpPort: config.shieldDomainProofHttpPort };
}
