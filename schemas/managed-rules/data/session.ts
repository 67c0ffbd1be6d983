// Session fixation: the attacker gets a victim to use a session id the attacker knows — by a link
// that carries it as a parameter (`?JSESSIONID=…`, which servers that accept ids from the URL take),
// or by script that writes the session cookie with a domain or an expiry. A session cookie's name
// arriving as a parameter is only suspect when no page of the site led there: a site that puts ids
// in its own links sends its own host as the Referer.
import type { RuleDefinition } from '../types.ts';

export const SESSION_RULES: readonly RuleDefinition[] = [
  {
    id: 'session.cookie_write',
    category: 'session',
    paranoia_level: 1,
    description: 'Script or markup that sets a cookie with a domain or an expiry (document.cookie="sid=…; domain=…", <meta http-equiv="Set-Cookie">)',
    targets: ['value', 'path', 'header', 'body'],
    pattern: String.raw`\.cookie\b[^\n]{0,200}?;\s*(?:expires|domain|max-age|path)\s*=|http-equiv\W+set-cookie`,
  },
  {
    id: 'session.id_parameter',
    category: 'session',
    paranoia_level: 1,
    description: "A framework's session cookie sent as a parameter (JSESSIONID, PHPSESSID, ASPSESSIONID, Django's sessionid, NextAuth's session token…) by a request no page of the site led to",
    targets: [],
    check: {
      kind: 'session_parameter',
      // Framework defaults: Java, PHP, ASP.NET, ColdFusion, Express, Laravel, CodeIgniter, Rails, Sails, Rack, Django,
      // Play, CakePHP, koa-session, NextAuth / Auth.js, Meteor, Apache JServ. Not generic names (session_id):
      // Stripe Checkout and others send ?session_id= back from their own pages.
      names: [
        'jsessionid', 'phpsessid', 'aspsessionid*', 'asp.net_sessionid', 'cfid', 'cftoken', 'connect.sid', 'laravel_session', 'ci_session', '_session_id',
        'sails.sid', 'rack.session', 'sessionid', 'play_session', 'cakephp', 'koa.sess', 'koa:sess', 'next-auth.session-token',
        '__secure-next-auth.session-token', '__host-next-auth.session-token', 'authjs.session-token', 'meteor_login_token', 'jservsession',
        // Older servers' names the OWASP CRS lists too: WebLogic's, ColdFusion's cfsid, jwsession, an early PHP module's.
        'weblogicsession', 'cfsid', 'jwsession', 'phpsession',
      ],
    },
  },
];
