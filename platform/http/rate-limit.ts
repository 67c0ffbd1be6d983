// Per-key request budgets (spec 8): 100/minute by default (600 for a signed-in person), tighter per route through
// `config.rateLimit` (e.g. analytics at 30/minute). Counted per API key (or per signed-in user)
// once authentication has run, per client IP for anonymous routes. RateLimit-* headers follow the
// IETF draft. Counters live in process, or in Redis (REDIS_URL) so that several API processes
// share one budget per key.
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from './errors.ts';

export interface RateLimitOptions {
  /** An API key's budget (spec 8: 100 by default). */
  perMinute: number;
  /**
   * A signed-in person's: the dashboard makes several calls per page, so one person clicking
   * through it would spend a key's budget in under a minute.
   */
  sessionPerMinute?: number;
  /** How long a budget lasts: a minute unless configured otherwise (AEGIS_RATE_LIMIT_WINDOW_MS). */
  windowMs?: number;
  redis?: Redis | undefined;
}

const rateLimitPlugin: FastifyPluginAsync<RateLimitOptions> = async (app, options) => {
  await app.register(rateLimit, {
    global: true,
    max: (request) => (request.principal?.kind === 'session' ? (options.sessionPerMinute ?? options.perMinute) : options.perMinute),
    timeWindow: options.windowMs ?? 60_000,
    enableDraftSpec: true,
    ...(options.redis ? { redis: options.redis, nameSpace: 'aegis-api-rate:' } : {}),
    // Redis unreachable: serve without counting (fail open, like the Shield gateway) rather than
    // answer every API request 500 until it is back (`npm run chaos`, redis restart).
    skipOnError: true,
    // Health probes and the reference pages are not API traffic.
    allowList: (request) => request.routeOptions.url === '/healthz' || request.routeOptions.url === '/readyz' || !request.routeOptions.url?.startsWith('/api/'),
    // Budgets are per caller and per environment: a person trying things in the sandbox does not
    // spend their live budget (keys have one environment each anyway).
    keyGenerator: (request) => (request.principal ? `${request.principal.actor.type}:${request.principal.actor.id}:${request.principal.environment}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'rate_limited', `rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}`, {
        limit: context.max,
        retry_after_seconds: Math.ceil(context.ttl / 1000),
      }),
  });
};

export default fp(rateLimitPlugin, { name: 'aegis-rate-limit', dependencies: ['aegis-auth'] });
