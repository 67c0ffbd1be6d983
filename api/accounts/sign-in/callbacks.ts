// The return leg of every identity-provider round trip (Google, an organisation's OIDC): the query
// the provider sends back, and the flow cookie that must carry its `state` — the sign-in was started
// in this browser.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/http/errors.ts';
import { clearedCookieOptions, FLOW_COOKIE } from '../auth/cookies.ts';

/** The callback's query: what an OpenID provider sends back (RFC 6749 4.1.2 and 4.1.2.1). */
export const oidcCallbackQuery = {
  type: 'object',
  properties: {
    code: { type: 'string', maxLength: 4096, description: 'The authorization code.' },
    state: { type: 'string', maxLength: 200, description: 'The state the sign-in was started with.' },
    iss: { type: 'string', maxLength: 2000, description: 'The issuer (RFC 9207), when the provider sends it.' },
    scope: { type: 'string', maxLength: 2000 },
    authuser: { type: 'string', maxLength: 100 },
    prompt: { type: 'string', maxLength: 100 },
    hd: { type: 'string', maxLength: 300 },
    session_state: { type: 'string', maxLength: 2000 },
    error: { type: 'string', maxLength: 200, description: 'Set when the provider refused (e.g. access_denied).' },
    error_description: { type: 'string', maxLength: 2000 },
    error_uri: { type: 'string', maxLength: 2000 },
  },
} as const;

/** Why a callback's flow is refused: the browser did not start it, or it is over. */
export const FLOW_INVALID = 'this sign-in was not started in this browser, has expired (10 minutes) or was finished already: start again';

/** The flow cookie must carry the state the provider sent back: the sign-in was started in this browser. */
export function checkFlowCookie(request: FastifyRequest, reply: FastifyReply, state: string | undefined): string {
  const cookie = request.cookies[FLOW_COOKIE];
  reply.clearCookie(FLOW_COOKIE, clearedCookieOptions);
  if (!state) throw new ApiError(401, 'unauthorized', 'the identity provider sent no state back: start the sign-in again');
  if (!cookie || cookie !== state) throw new ApiError(401, 'unauthorized', FLOW_INVALID);
  return state;
}

/** The callback URL with the query the provider sent (what openid-client validates). */
export function callbackQuery(request: FastifyRequest): URLSearchParams {
  const raw = request.raw.url ?? '';
  const at = raw.indexOf('?');
  return new URLSearchParams(at >= 0 ? raw.slice(at + 1) : '');
}
