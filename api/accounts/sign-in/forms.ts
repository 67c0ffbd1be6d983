// What every sign-in form shares — the login, invite, Google and SSO pages: the fields they take
// (address, `return_to`), what a JSON sign-in answers, and how a form post is told of a failure
// (a page) where an API client gets the error envelope.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/http/errors.ts';
import { escapeHtml, sendPage } from './pages.ts';

/** Where a browser lands after signing in when it did not ask for somewhere (the dashboard's home, later). */
export const DEFAULT_LANDING = '/api/v1/me';

export const emailSchema = { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'E-mail address.' } as const;
/** A path on this server (never another origin): where to land after signing in. */
// No `//` or `/\` start (another host), and only printable ASCII without backslash or white space:
// browsers drop tabs and newlines from URLs, so `/<tab>/evil.example` would become `//evil.example`,
// and a character past U+00FF cannot go into a Location header — refused here, before a link is
// mailed or used up, rather than failing the redirect after the sign-in. Browsers percent-encode
// paths, so a real one is ASCII already.
export const returnToSchema = {
  type: 'string',
  maxLength: 2000,
  pattern: '^/(?![/\\\\])[\\x21-\\x5b\\x5d-\\x7e]*$',
  description: 'Path to land on after signing in (this server only; printable ASCII, other characters percent-encoded).',
} as const;
/** What a sign-in posted as JSON answers (a form is redirected instead). */
export const signedInSchema = {
  type: 'object',
  required: ['user', 'organization_id'],
  properties: {
    user: { type: 'object', required: ['id', 'email'], properties: { id: { type: 'string' }, email: { type: 'string' } } },
    organization_id: { type: 'string', description: 'The organisation the session works in.' },
  },
} as const;

export const isFormPost = (request: FastifyRequest): boolean => (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');

/** Answers a form post with a page, anything else with the error envelope. */
export function failForm(request: FastifyRequest, reply: FastifyReply, err: unknown, title: string): FastifyReply {
  if (!(err instanceof ApiError) || !isFormPost(request)) throw err;
  return sendPage(reply, err.statusCode, title, `<p>${escapeHtml(err.message)}</p><p><a href="/auth/login">Sign in</a></p>`);
}
