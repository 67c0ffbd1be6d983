// SAML 2.0 service-provider endpoints (spec 5.4):
//   POST /auth/sso/saml/acs              Assertion Consumer Service (HTTP-POST binding): the IdP's
//                                        browser post of SAMLResponse + RelayState (our flow state)
//   GET  /auth/sso/saml/complete         where the ACS sends the browser: the sign-in completes
//                                        only in the browser that started it (its flow cookie)
//   GET  /auth/sso/saml/metadata/:org_id our SP metadata for the organisation, for IdP admins
// The ACS is a cross-site post by design, so it cannot be CSRF-checked like other sign-in posts,
// and a SameSite=Lax cookie does not come with it. It therefore starts no session itself: it
// verifies the response and holds the identity on the flow; the top-level GET it redirects to does
// carry the flow cookie, and only a browser whose cookie names the flow completes it. A response
// posted into someone else's browser (login CSRF with the attacker's own assertion) goes nowhere.
// The sign-in itself starts at GET /auth/sso?org=… (api/accounts/sso/sso-routes.ts), which sends the browser to
// the IdP with an AuthnRequest from samlSignInUrl (sign-in.ts).
import formBody from '@fastify/formbody';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { auditSsoRefusal, completeSsoSignIn } from '../sign-in/sso-complete.ts';
import { findSsoConnection, rememberSamlAssertion } from '../sign-in/sso-connection-store.ts';
import { completeHeldFlow, finishFlow, holdIdentity, type FlowPurpose } from '../sign-in/flows.ts';
import { clearedCookieOptions, FLOW_COOKIE } from '../auth/cookies.ts';
import { MAX_SAML_RESPONSE_CHARS, SamlRefusal, verifySamlResponse } from './saml-response.ts';
import { serviceProvider } from './saml-service-provider.ts';
import { EMAIL_NAMEID_FORMAT } from './saml-sign-in.ts';

export interface SamlRoutesOptions {
  db: Db;
  secretBox: SecretBox;
  tokens: SessionTokens;
  changes: AuthChanges;
  publicUrl: () => string;
}

const COMPLETE_PATH = '/auth/sso/saml/complete';
const NOT_THIS_BROWSER = 'this SAML sign-in was not started in this browser (or was completed already): start again from your organisation\'s sign-in';
const FLOW_INVALID = 'this SAML sign-in is not valid: it was finished already, has expired (sign-ins last 10 minutes), or was never started here. Start again from your organisation\'s sign-in.';

const xmlEscape = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);

/** Our SAML SP metadata for one organisation: entity id, ACS (HTTP-POST), e-mail NameID, signed assertions wanted. */
export function serviceProviderMetadata(sp: { entityId: string; acsUrl: string }): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${xmlEscape(sp.entityId)}">`,
    '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true">',
    `<md:NameIDFormat>${EMAIL_NAMEID_FORMAT}</md:NameIDFormat>`,
    `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${xmlEscape(sp.acsUrl)}" index="0" isDefault="true"/>`,
    '</md:SPSSODescriptor>',
    '</md:EntityDescriptor>',
    '',
  ].join('\n');
}

export const samlRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: SamlRoutesOptions }> = async (app, { db, secretBox, tokens, changes, publicUrl }) => {
  // The IdP's page posts a form; SAMLResponse is base64 XML (signatures, certificates): a few KiB
  // to tens of KiB.
  await app.register(formBody, { bodyLimit: MAX_SAML_RESPONSE_CHARS + 16 * 1024 });
  const tags = ['SSO'];

  app.post(
    '/auth/sso/saml/acs',
    {
      config: { crossSite: "the identity provider's page posts the SAML response; no session starts here (see /auth/sso/saml/complete)" },
      schema: {
        tags,
        summary: 'SAML Assertion Consumer Service',
        description:
          'Where the identity provider posts its SAML Response (HTTP-POST binding) with `RelayState`, the state of a sign-in started at `GET /auth/sso`. The assertion must be signed by a certificate from the IdP\'s metadata, be issued by its entity id, name this organisation\'s SP entity id as Audience and this URL as Recipient, answer the AuthnRequest the sign-in sent (InResponseTo), be within its validity window (60 s clock skew), and not have been used before. A refused response answers 401 and is written to the organisation\'s audit log (`sso.login_refused`, with the check that failed). An accepted one redirects (303) to `/auth/sso/saml/complete`, where the browser that started the sign-in (its flow cookie) gets the session, or for a "Try login" the result page.',
        consumes: ['application/x-www-form-urlencoded'],
        body: {
          type: 'object',
          required: ['SAMLResponse', 'RelayState'],
          properties: {
            SAMLResponse: { type: 'string', minLength: 1, maxLength: MAX_SAML_RESPONSE_CHARS, description: 'The base64 SAML Response.' },
            RelayState: { type: 'string', minLength: 1, maxLength: 200, description: 'The state of the sign-in (sent to the IdP with the AuthnRequest).' },
          },
        },
      },
    },
    async (request, reply) => {
      const { SAMLResponse: samlResponse, RelayState: relayState } = request.body;
      const flow = await finishFlow(db, relayState, 'sso_saml');
      if (!flow?.org_id) throw new ApiError(401, 'unauthorized', FLOW_INVALID);
      const orgId = flow.org_id;
      const connection = await findSsoConnection(db, secretBox, orgId);
      const refuse = async (check: string, message: string): Promise<never> => {
        await auditSsoRefusal(db, request, orgId, 'saml', `${check}: ${message}`);
        throw new ApiError(401, 'unauthorized', `the SAML response was refused: ${message}`, { check });
      };
      if (!connection?.saml) return refuse('connection', 'the organisation has no SAML connection any more');
      const sp = serviceProvider(publicUrl(), orgId);
      let verified;
      try {
        verified = await verifySamlResponse({ samlResponse, settings: connection.saml, sp, requestId: flow.request_id });
      } catch (error) {
        if (error instanceof SamlRefusal) return refuse(error.check, error.message);
        throw error;
      }
      if (!(await rememberSamlAssertion(db, orgId, verified.assertionId, verified.notOnOrAfter))) {
        return refuse('replay', `replay check failed: assertion ${verified.assertionId} was used before`);
      }
      await holdIdentity(db, flow.id, { email: verified.email, name: verified.name });
      return reply.redirect(COMPLETE_PATH, 303);
    },
  );

  app.get(
    COMPLETE_PATH,
    {
      schema: {
        tags,
        summary: 'Complete a SAML sign-in',
        description:
          'Where the Assertion Consumer Service sends the browser. Completes the sign-in whose flow cookie this browser carries (the browser that started it at GET /auth/sso): a session (303 to the landing page) or the "Try login" result. Without the cookie, or with another flow\'s: 401, and nothing is signed in.',
        response: { 303: { type: 'null', description: 'Signed in: redirect to the landing page.' } },
      },
    },
    async (request, reply) => {
      const state = request.cookies[FLOW_COOKIE];
      reply.clearCookie(FLOW_COOKIE, clearedCookieOptions);
      const flow = state ? await completeHeldFlow(db, state, 'sso_saml') : undefined;
      if (!flow?.org_id) throw new ApiError(401, 'unauthorized', NOT_THIS_BROWSER);
      const connection = await findSsoConnection(db, secretBox, flow.org_id);
      if (!connection?.saml) throw new ApiError(401, 'unauthorized', 'the organisation has no SAML connection any more: start again');
      return completeSsoSignIn({ db, tokens, changes }, request, reply, {
        connection,
        flow: { purpose: flow.purpose as FlowPurpose, userId: flow.user_id },
        identity: flow.identity,
      });
    },
  );

  app.get(
    '/auth/sso/saml/metadata/:org_id',
    {
      schema: {
        tags,
        summary: 'SAML service-provider metadata',
        description:
          'Aegis\'s SAML SP metadata for an organisation, for its IdP administrators: the entity id (the Audience assertions must name), the Assertion Consumer Service URL (HTTP-POST; the Recipient), the e-mail NameID format, and that assertions must be signed. Public.',
        params: { type: 'object', required: ['org_id'], properties: { org_id: { type: 'string', minLength: 1, maxLength: 64, pattern: '^org_[0-9a-z]+$', description: 'Organisation id.' } } },
      },
    },
    async (request, reply) => {
      const org = await db.selectFrom('organizations').select('id').where('id', '=', request.params.org_id).executeTakeFirst();
      if (!org) throw new ApiError(404, 'not_found', 'no such organisation');
      return reply.type('application/samlmetadata+xml; charset=utf-8').header('Cache-Control', 'no-cache').send(serviceProviderMetadata(serviceProvider(publicUrl(), org.id)));
    },
  );
};
