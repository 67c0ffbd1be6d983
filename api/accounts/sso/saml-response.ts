// Verifying a SAML Response posted to our Assertion Consumer Service (spec 5.4).
//
// @node-saml/node-saml does the XML-signature work: it takes the one Assertion directly under the
// Response (two or more are refused — the signature-wrapping defence), requires that Assertion to
// carry a valid signature by one of the IdP certificates from its metadata (wantAssertionsSigned),
// and reads only the signed, canonicalised bytes afterwards (so comments inside a NameID cannot
// split it). It also checks the Conditions' time window (with a small clock skew) and Audience.
//
// wantAuthnResponseSigned is false: many IdPs (Entra ID, Okta by default) sign only the assertion.
// A signed assertion is always required; when the Response is signed too, node-saml verifies that
// signature as well. Because the Response wrapper may be unsigned, every check that matters is made
// on the signed assertion itself, here, after node-saml:
//   - Issuer          = the IdP entity id from its metadata
//   - bearer SubjectConfirmationData:
//       Recipient     = our ACS URL
//       InResponseTo  = the ID of the AuthnRequest this flow sent (no IdP-initiated sign-in)
//       NotOnOrAfter  present and not past (clock skew allowed)
//   - Response Destination and InResponseTo, when present, must agree too.
// InResponseTo is checked here rather than through node-saml's validateInResponseTo/cacheProvider:
// the request id lives in our flow row (looked up by RelayState), so there is nothing to cache,
// and the value compared is the one inside the signature.
// Replay (an assertion ID seen before) is refused by the caller with rememberSamlAssertion.
import { SAML, SamlStatusError } from '@node-saml/node-saml';
import type { SamlSettings } from '../sign-in/sso-connection-store.ts';
import { childElements as children, parseXmlElement, type XmlElement as El } from './saml-metadata.ts';
import type { SamlServiceProvider } from './saml-service-provider.ts';
import { EMAIL_NAMEID_FORMAT } from './saml-sign-in.ts';
import { errorMessage } from '../../../schemas/json-value.ts';

export const SAML_CLOCK_SKEW_MS = 60_000;
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
/** A posted SAMLResponse larger than this is refused before parsing. */
export const MAX_SAML_RESPONSE_CHARS = 256 * 1024;

/** Which check refused a response (recorded in the audit log). */
export type SamlCheck = 'malformed' | 'status' | 'signature' | 'issuer' | 'audience' | 'recipient' | 'destination' | 'expired' | 'in_response_to' | 'identity' | 'replay';

export class SamlRefusal extends Error {
  override name = 'SamlRefusal';
  constructor(
    readonly check: SamlCheck,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedSamlAssertion {
  email: string;
  name: string | null;
  /** The signed assertion's ID (remembered until notOnOrAfter to refuse replays). */
  assertionId: string;
  notOnOrAfter: Date;
}

function parse(xml: string): El {
  try {
    return parseXmlElement(xml, 'the SAML response');
  } catch (error) {
    throw new SamlRefusal('malformed', errorMessage(error));
  }
}

function instant(value: string | null, what: string): number | null {
  if (value === null || value === '') return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new SamlRefusal('malformed', `${what} is not a date-time`);
  return ms;
}

/** What node-saml's error says about which check failed. */
function classify(error: unknown): SamlRefusal {
  if (error instanceof SamlRefusal) return error;
  if (error instanceof SamlStatusError) return new SamlRefusal('status', `the identity provider refused the sign-in: ${error.message}`);
  const message = errorMessage(error);
  if (/signature|Cannot obtain assertion/i.test(message)) return new SamlRefusal('signature', `signature check failed: ${message}`);
  if (/audience/i.test(message)) return new SamlRefusal('audience', `audience check failed: ${message}`);
  if (/expired|not yet valid/i.test(message)) return new SamlRefusal('expired', `validity window check failed: ${message}`);
  if (/InResponseTo/i.test(message)) return new SamlRefusal('in_response_to', `InResponseTo check failed: ${message}`);
  return new SamlRefusal('malformed', `the SAML response could not be read: ${message}`);
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const EMAIL_ATTRIBUTES = ['email', 'mail', 'emailaddress', 'urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'];
const NAME_ATTRIBUTES = ['displayname', 'name', 'urn:oid:2.16.840.1.113730.3.1.241', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name', 'http://schemas.microsoft.com/identity/claims/displayname'];

function attributes(assertion: El): Map<string, string> {
  const out = new Map<string, string>();
  for (const statement of children(assertion, ASSERTION_NS, 'AttributeStatement')) {
    for (const attribute of children(statement, ASSERTION_NS, 'Attribute')) {
      const name = (attribute.getAttribute('Name') ?? '').toLowerCase();
      const value = children(attribute, ASSERTION_NS, 'AttributeValue')[0]?.textContent?.trim();
      if (name && value && !out.has(name)) out.set(name, value);
    }
  }
  return out;
}

/** Checks a posted SAMLResponse (base64) for the flow that sent AuthnRequest `requestId`. */
export async function verifySamlResponse(input: {
  samlResponse: string;
  settings: SamlSettings;
  sp: SamlServiceProvider;
  /** The flow's request_id; null (no request sent) refuses the response. */
  requestId: string | null;
  now?: Date;
}): Promise<VerifiedSamlAssertion> {
  const { samlResponse, settings, sp, requestId } = input;
  const now = (input.now ?? new Date()).getTime();
  if (samlResponse.length > MAX_SAML_RESPONSE_CHARS) throw new SamlRefusal('malformed', 'the SAML response is too large');
  if (!/^[A-Za-z0-9+/=\s]+$/.test(samlResponse)) throw new SamlRefusal('malformed', 'the SAML response is not base64');
  const responseXml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const response = parse(responseXml);
  if (response.namespaceURI !== PROTOCOL_NS || response.localName !== 'Response') throw new SamlRefusal('malformed', 'the posted message is not a SAML 2.0 Response');

  const saml = new SAML({
    idpCert: settings.certificates,
    issuer: sp.entityId,
    audience: sp.entityId,
    callbackUrl: sp.acsUrl,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    validateInResponseTo: 'never' as never,
  });
  let assertionXml: string;
  try {
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!profile) throw new SamlRefusal('malformed', 'the SAML response carries no assertion');
    assertionXml = profile.getAssertionXml?.() ?? '';
  } catch (error) {
    throw classify(error);
  }

  // From here on only the signed assertion (as node-saml verified it) is read.
  const assertion = parse(assertionXml);
  if (assertion.namespaceURI !== ASSERTION_NS || assertion.localName !== 'Assertion') throw new SamlRefusal('signature', 'the signed element is not the assertion');
  const assertionId = assertion.getAttribute('ID');
  if (!assertionId) throw new SamlRefusal('malformed', 'the assertion has no ID');

  const issuer = children(assertion, ASSERTION_NS, 'Issuer')[0]?.textContent?.trim();
  if (issuer !== settings.idpEntityId) throw new SamlRefusal('issuer', `issuer check failed: the assertion was issued by ${JSON.stringify(issuer ?? null)}, not ${settings.idpEntityId}`);

  const subject = children(assertion, ASSERTION_NS, 'Subject')[0];
  if (!subject) throw new SamlRefusal('malformed', 'the assertion has no Subject');
  const bearers = children(subject, ASSERTION_NS, 'SubjectConfirmation')
    .filter((c) => c.getAttribute('Method') === BEARER)
    .flatMap((c) => children(c, ASSERTION_NS, 'SubjectConfirmationData'));
  if (bearers.length === 0) throw new SamlRefusal('malformed', 'the assertion has no bearer SubjectConfirmationData');
  // Every check must hold for one bearer confirmation; the first failure found is reported.
  let confirmed: { notOnOrAfter: number } | undefined;
  let refusal: SamlRefusal | undefined;
  for (const data of bearers) {
    const recipient = data.getAttribute('Recipient');
    const inResponseTo = data.getAttribute('InResponseTo');
    const notOnOrAfter = instant(data.getAttribute('NotOnOrAfter'), 'SubjectConfirmationData NotOnOrAfter');
    const notBefore = instant(data.getAttribute('NotBefore'), 'SubjectConfirmationData NotBefore');
    if (recipient !== sp.acsUrl) refusal ??= new SamlRefusal('recipient', `recipient check failed: the assertion is for ${JSON.stringify(recipient)}, not ${sp.acsUrl}`);
    else if (!requestId || inResponseTo !== requestId) refusal ??= new SamlRefusal('in_response_to', `InResponseTo check failed: the assertion answers ${JSON.stringify(inResponseTo)}, not this sign-in's request`);
    else if (notOnOrAfter === null) refusal ??= new SamlRefusal('expired', 'validity window check failed: the bearer confirmation has no NotOnOrAfter');
    else if (now - SAML_CLOCK_SKEW_MS >= notOnOrAfter) refusal ??= new SamlRefusal('expired', 'validity window check failed: the assertion has expired');
    else if (notBefore !== null && now + SAML_CLOCK_SKEW_MS < notBefore) refusal ??= new SamlRefusal('expired', 'validity window check failed: the assertion is not valid yet');
    else {
      confirmed = { notOnOrAfter };
      break;
    }
  }
  if (!confirmed) throw refusal ?? new SamlRefusal('malformed', 'no usable bearer confirmation');

  // The Response wrapper may be unsigned; when it names a destination or request it must agree.
  const destination = response.getAttribute('Destination');
  if (destination && destination !== sp.acsUrl) throw new SamlRefusal('destination', `destination check failed: the response was sent to ${JSON.stringify(destination)}, not ${sp.acsUrl}`);
  const responseInResponseTo = response.getAttribute('InResponseTo');
  if (responseInResponseTo && responseInResponseTo !== requestId) throw new SamlRefusal('in_response_to', 'InResponseTo check failed: the response answers another request');

  const nameId = children(subject, ASSERTION_NS, 'NameID')[0];
  const nameIdValue = nameId?.textContent?.trim() ?? '';
  const nameIdFormat = nameId?.getAttribute('Format') ?? '';
  const attrs = attributes(assertion);
  const fromNameId = EMAIL_PATTERN.test(nameIdValue) && (nameIdFormat === EMAIL_NAMEID_FORMAT || nameIdFormat === '' || nameIdFormat.endsWith(':unspecified')) ? nameIdValue : undefined;
  const email = fromNameId ?? EMAIL_ATTRIBUTES.map((a) => attrs.get(a)).find((v) => v !== undefined && EMAIL_PATTERN.test(v));
  if (!email || email.length > 254) throw new SamlRefusal('identity', 'the assertion names no e-mail address (NameID in emailAddress format, or an email/mail attribute)');
  const given = attrs.get('givenname') ?? attrs.get('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname');
  const surname = attrs.get('sn') ?? attrs.get('surname') ?? attrs.get('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname');
  const name = NAME_ATTRIBUTES.map((a) => attrs.get(a)).find((v) => v !== undefined) ?? ([given, surname].filter(Boolean).join(' ') || null);

  // Remember the assertion as long as any of its windows could still accept it.
  const conditions = children(assertion, ASSERTION_NS, 'Conditions')[0];
  const conditionsEnd = conditions ? instant(conditions.getAttribute('NotOnOrAfter'), 'Conditions NotOnOrAfter') : null;
  const notOnOrAfter = new Date(Math.max(confirmed.notOnOrAfter, conditionsEnd ?? 0) + SAML_CLOCK_SKEW_MS);
  return { email: email.toLowerCase(), name: name ? name.slice(0, 200) : null, assertionId, notOnOrAfter };
}
