// A local SAML 2.0 identity provider for tests, on 127.0.0.1:
//   GET /metadata                          its IdP metadata (entity id, SSO URL, signing certificate)
//   GET /sso?SAMLRequest=…&RelayState=…    reads the AuthnRequest (ID, ACS URL, issuer) and answers
//                                          JSON { acsUrl, SAMLResponse, RelayState } — what a real
//                                          IdP's auto-posting form would post — for the user and
//                                          knobs set in `idp.next`
// The Response is built here and its Assertion signed with xml-crypto (exclusive c14n,
// RSA-SHA256, SHA-256 digest) with the fixture key in test/fixtures/saml/. Knobs: a signature
// broken after signing, a foreign key, no signature, a wrong audience, recipient or InResponseTo,
// an expired assertion.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { childElements, parseXmlElement } from '../../api/accounts/sso/saml-metadata.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'saml');
export const IDP_KEY = readFileSync(join(FIXTURES, 'idp-key.pem'), 'utf8');
export const IDP_CERT = readFileSync(join(FIXTURES, 'idp-cert.pem'), 'utf8');
export const OTHER_KEY = readFileSync(join(FIXTURES, 'other-key.pem'), 'utf8');
export const OTHER_CERT = readFileSync(join(FIXTURES, 'other-cert.pem'), 'utf8');

/** A PEM certificate's base64 body (as metadata carries it). */
export const certBody = (pem: string): string => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');

export interface AuthnRequestInfo {
  id: string;
  acsUrl: string;
  issuer: string;
  destination: string | null;
}

export interface ResponseKnobs {
  email?: string;
  name?: string;
  /** Alter the NameID after signing (the digest no longer matches). */
  breakSignature?: boolean;
  /** Sign with the unrelated fixture key (a certificate the SP does not trust). */
  signWithOtherKey?: boolean;
  /** Send the assertion unsigned. */
  unsigned?: boolean;
  audience?: string;
  recipient?: string;
  destination?: string;
  inResponseTo?: string;
  issuer?: string;
  /** Seconds from now until the assertion's NotOnOrAfter (negative: already expired). */
  validForSeconds?: number;
  /** Put the user's address in an `email` attribute and a persistent, opaque NameID. */
  emailAsAttribute?: boolean;
  /**
   * Signature wrapping: keep the validly signed assertion (for `email`) but add an unsigned copy
   * for `wrapAs` — as a sibling before it ('sibling'), or as the Response's assertion with the
   * signed one hidden inside it ('nested').
   */
  wrap?: 'sibling' | 'nested';
  wrapAs?: string;
  /** After signing, put a comment inside the NameID after these leading characters (the signature stays valid). */
  commentAfter?: string;
}

export interface PostedResponse {
  acsUrl: string;
  SAMLResponse: string;
  RelayState: string;
  /** The Response XML (before base64), for inspection. */
  xml: string;
  assertionId: string;
}

export interface SamlIdp {
  url: string;
  entityId: string;
  metadataUrl: string;
  ssoUrl: string;
  metadataXml: string;
  /** Knobs for the next answers of GET /sso (kept until changed). */
  next: ResponseKnobs;
  /** Reads an AuthnRequest redirect URL (as Aegis built it) and answers as GET /sso would. */
  answer(authorizeUrl: string, knobs?: ResponseKnobs): PostedResponse;
  /** Requests seen by GET /sso. */
  requests: AuthnRequestInfo[];
  /** How many times GET /metadata was fetched. */
  metadataFetches: number;
  close(): Promise<void>;
}

const xmlEscape = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
const newId = () => `_${randomBytes(16).toString('hex')}`;

export function idpMetadataXml(entityId: string, ssoUrl: string, certPem = IDP_CERT): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${xmlEscape(entityId)}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing">
      <ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody(certPem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>
    </md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${xmlEscape(ssoUrl)}/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${xmlEscape(ssoUrl)}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>
`;
}

/** Inflates and parses the SAMLRequest of an HTTP-Redirect URL. */
export function readAuthnRequest(authorizeUrl: string): { request: AuthnRequestInfo; relayState: string } {
  const url = new URL(authorizeUrl);
  const encoded = url.searchParams.get('SAMLRequest');
  if (!encoded) throw new Error('no SAMLRequest in the URL');
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
  const root = parseXmlElement(xml, 'SAMLRequest');
  if (root.localName !== 'AuthnRequest') throw new Error('SAMLRequest is not an AuthnRequest');
  const issuer = childElements(root, 'urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent ?? '';
  return {
    request: { id: root.getAttribute('ID') ?? '', acsUrl: root.getAttribute('AssertionConsumerServiceURL') ?? '', issuer, destination: root.getAttribute('Destination') },
    relayState: url.searchParams.get('RelayState') ?? '',
  };
}

/** A signed SAML Response to `request`, as the knobs say. */
export function buildResponse(entityId: string, request: AuthnRequestInfo, knobs: ResponseKnobs = {}): { xml: string; assertionId: string } {
  const email = knobs.email ?? 'someone@example.com';
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const notOnOrAfter = iso(now + (knobs.validForSeconds ?? 300) * 1000);
  const assertionId = newId();
  const inResponseTo = knobs.inResponseTo ?? request.id;
  const nameId = knobs.emailAsAttribute
    ? `<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">${randomBytes(8).toString('hex')}</saml:NameID>`
    : `<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${xmlEscape(email)}</saml:NameID>`;
  const attributes = [
    knobs.emailAsAttribute ? `<saml:Attribute Name="email"><saml:AttributeValue>${xmlEscape(email)}</saml:AttributeValue></saml:Attribute>` : '',
    knobs.name ? `<saml:Attribute Name="displayName"><saml:AttributeValue>${xmlEscape(knobs.name)}</saml:AttributeValue></saml:Attribute>` : '',
  ].join('');
  const assertion =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${iso(now)}">` +
    `<saml:Issuer>${xmlEscape(knobs.issuer ?? entityId)}</saml:Issuer>` +
    `<saml:Subject>${nameId}<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData InResponseTo="${xmlEscape(inResponseTo)}" NotOnOrAfter="${notOnOrAfter}" Recipient="${xmlEscape(knobs.recipient ?? request.acsUrl)}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(now - 5_000)}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${xmlEscape(knobs.audience ?? request.issuer)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="${newId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
    `</saml:Assertion>`;
  const response =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="${newId()}" Version="2.0" IssueInstant="${iso(now)}" Destination="${xmlEscape(knobs.destination ?? request.acsUrl)}" InResponseTo="${xmlEscape(inResponseTo)}">` +
    `<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${xmlEscape(knobs.issuer ?? entityId)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    assertion +
    `</samlp:Response>`;
  if (knobs.unsigned) return { xml: response, assertionId };
  const signer = new SignedXml({
    privateKey: knobs.signWithOtherKey ? OTHER_KEY : IDP_KEY,
    publicCert: knobs.signWithOtherKey ? OTHER_CERT : IDP_CERT,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  });
  signer.addReference({
    xpath: "//*[local-name(.)='Assertion']",
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(response, { prefix: 'ds', location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  let signed = signer.getSignedXml();
  if (knobs.commentAfter !== undefined) {
    if (!email.startsWith(knobs.commentAfter)) throw new Error('commentAfter: not a prefix of the NameID');
    signed = signed.replace(`>${xmlEscape(email)}</saml:NameID>`, `>${xmlEscape(knobs.commentAfter)}<!---->${xmlEscape(email).slice(xmlEscape(knobs.commentAfter).length)}</saml:NameID>`);
  }
  if (knobs.wrap) {
    const start = signed.indexOf('<saml:Assertion');
    const end = signed.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length;
    const original = signed.slice(start, end);
    const forged = original
      .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
      .replace(`>${xmlEscape(email)}</saml:NameID>`, `>${xmlEscape(knobs.wrapAs ?? 'victim@example.com')}</saml:NameID>`);
    const wrapped = knobs.wrap === 'sibling' ? forged + original : forged.replace('</saml:Assertion>', `<saml:Advice>${original}</saml:Advice></saml:Assertion>`);
    signed = signed.slice(0, start) + wrapped + signed.slice(end);
  }
  if (knobs.breakSignature) {
    const tampered = signed.replace(`>${xmlEscape(email)}</saml:NameID>`, '>attacker@evil.example</saml:NameID>');
    if (tampered === signed) throw new Error('breakSignature: NameID not found');
    signed = tampered;
  }
  return { xml: signed, assertionId };
}

export async function startSamlIdp(): Promise<SamlIdp> {
  let base = '';
  const requests: AuthnRequestInfo[] = [];
  const idp: SamlIdp = {
    url: '',
    entityId: '',
    metadataUrl: '',
    ssoUrl: '',
    metadataXml: '',
    next: {},
    requests,
    metadataFetches: 0,
    answer(authorizeUrl, knobs = idp.next) {
      const { request, relayState } = readAuthnRequest(authorizeUrl);
      requests.push(request);
      const { xml, assertionId } = buildResponse(idp.entityId, request, knobs);
      return { acsUrl: request.acsUrl, SAMLResponse: Buffer.from(xml, 'utf8').toString('base64'), RelayState: relayState, xml, assertionId };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    if (req.method === 'GET' && url.pathname === '/metadata') {
      idp.metadataFetches++;
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idp.metadataXml);
      return;
    }
    if (req.method === 'GET' && url.pathname === '/sso') {
      try {
        const { xml: _xml, ...posted } = idp.answer(url.toString());
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(posted));
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  idp.url = base;
  idp.entityId = `${base}/idp`;
  idp.metadataUrl = `${base}/metadata`;
  idp.ssoUrl = `${base}/sso`;
  idp.metadataXml = idpMetadataXml(idp.entityId, idp.ssoUrl);
  return idp;
}
