// Where a browser lands after a sign-in that goes through an identity provider (Google, an
// organisation's OIDC or SAML): the start takes `return_to` (a path of this server, as POST
// /auth/login does) and keeps it in a short-lived cookie beside the flow cookie, read once by the
// callback (for SAML, by the same-site completion the ACS redirects to).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clearedCookieOptions, flowCookieOptions } from '../auth/cookies.ts';
import { DEFAULT_LANDING, returnToSchema } from './forms.ts';

export const RETURN_TO_COOKIE = '__Host-aegis_return_to';
const SAFE_PATH = new RegExp(returnToSchema.pattern);

/** Keeps `returnTo` for the callback (or forgets an older one when there is none). */
export function rememberReturnTo(request: FastifyRequest, reply: FastifyReply, returnTo: string | undefined): void {
  if (returnTo) reply.setCookie(RETURN_TO_COOKIE, returnTo, flowCookieOptions);
  else if (request.cookies[RETURN_TO_COOKIE] !== undefined) reply.clearCookie(RETURN_TO_COOKIE, clearedCookieOptions);
}

/** Where to land now: the remembered path (checked again: a cookie can be set by hand), else the default. */
export function landingAfterSignIn(request: FastifyRequest, reply: FastifyReply): string {
  const wanted = request.cookies[RETURN_TO_COOKIE];
  if (wanted === undefined) return DEFAULT_LANDING;
  reply.clearCookie(RETURN_TO_COOKIE, clearedCookieOptions);
  return wanted.length <= returnToSchema.maxLength && SAFE_PATH.test(wanted) ? wanted : DEFAULT_LANDING;
}
