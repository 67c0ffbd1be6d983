// SAML 2.0 for SSO (spec 5.4): what the OIDC side and the SSO settings routes need from it.
// (Interface fixed first; implementation in this folder.)
import type { SamlSettings } from '../sign-in/sso-connection-store.ts';

/** Aegis as the service provider of one organisation's SAML connection. */
export interface SamlServiceProvider {
  /** Our entity id (the Audience the IdP must put in assertions). */
  entityId: string;
  /** Assertion Consumer Service URL (the Recipient/Destination the IdP must use). */
  acsUrl: string;
}

export function serviceProvider(publicUrl: string, orgId: string): SamlServiceProvider {
  return { entityId: `${publicUrl}/auth/sso/saml/${orgId}`, acsUrl: `${publicUrl}/auth/sso/saml/acs` };
}
