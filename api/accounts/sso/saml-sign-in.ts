// SP-initiated SAML sign-in (spec 5.4): an AuthnRequest sent to the IdP over the HTTP-Redirect
// binding, built by @node-saml/node-saml. Its ID is returned so the caller stores it in the flow
// row; the ACS later requires the signed assertion to answer exactly that request (InResponseTo).
import { randomBytes } from 'node:crypto';
import { SAML } from '@node-saml/node-saml';
import type { SamlSettings } from '../sign-in/sso-connection-store.ts';
import type { SamlServiceProvider } from './saml-service-provider.ts';

/** NameID format we ask for: an e-mail address (the identity Aegis knows people by). */
export const EMAIL_NAMEID_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** The URL to send the browser to, and the AuthnRequest's ID (an XML NCName: `_` + 40 hex digits). */
export async function samlSignInUrl(settings: SamlSettings, sp: SamlServiceProvider, relayState: string): Promise<{ url: string; requestId: string }> {
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const saml = new SAML({
    entryPoint: settings.ssoUrl,
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    idpCert: settings.certificates,
    identifierFormat: EMAIL_NAMEID_FORMAT,
    // Aegis does not prescribe how people authenticate at their IdP (password, passkey, MFA).
    disableRequestedAuthnContext: true,
    authnRequestBinding: 'HTTP-Redirect',
    generateUniqueId: () => requestId,
  });
  const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {});
  return { url, requestId };
}
