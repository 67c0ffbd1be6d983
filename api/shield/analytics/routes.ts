// GET /api/v1/shield/sites/:id/analytics: a site's decisions over whole UTC days (spec 4.5, 2.6),
// shaped after Cloudflare's analytics: totals by action, a time series, top lists. Besides the
// spec's days, `start`/`end` instants give the short ranges a dashboard asks for ("last hour"),
// rounded outwards to whole buckets so that counts and top lists cover the same minutes.
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../../accounts/auth/plugin.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { DecisionAction } from '../../../gateway/decision.ts';
import { badRequest } from '../../../platform/http/errors.ts';
import { siteParams } from '../params.ts';
import { requireSite } from '../sites/store.ts';
import { ACTIONS, BUCKET_MS, TOP_LIMIT, topLists, totalsAndSeries, type Granularity } from './queries.ts';

const DAY_MS = 86_400_000;
/** Longest range, in days (inclusive of both ends). */
export const MAX_RANGE_DAYS = 90;
/** Ranges up to this many days get hourly points (at most 168), longer ones daily (at most 90). */
export const HOURLY_UP_TO_DAYS = 7;
/** Days covered when `from` is left out. */
export const DEFAULT_RANGE_DAYS = 7;
/** Ranges given by `start`/`end` up to this many hours get one point a minute (at most 180). */
export const MINUTELY_UP_TO_HOURS = 3;
const HOUR_MS = 3_600_000;

const dateParam = (description: string) => ({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description, example: '2025-01-31' }) as const;

const countsProperties = {
  requests: { type: 'integer', description: 'All actions together.' },
  allow: { type: 'integer' },
  block: { type: 'integer' },
  challenge: { type: 'integer' },
  log: { type: 'integer' },
} as const;
const countsSchema = (description: string) => ({ type: 'object', description, required: ['requests', ...ACTIONS], properties: countsProperties }) as const;

const topList = <const Item extends object>(item: Item) => ({ type: 'array', maxItems: TOP_LIMIT, items: item }) as const;
const countProperty = { count: { type: 'integer', description: 'Recorded events with this value.' } } as const;

const analyticsSchema = {
  type: 'object',
  required: ['site_id', 'from', 'to', 'start', 'end', 'granularity', 'totals', 'recorded', 'sampled', 'timeseries', 'top'],
  properties: {
    site_id: { type: 'string' },
    from: { type: 'string', description: 'First day of the range (UTC).' },
    to: { type: 'string', description: 'Last day of the range (UTC), inclusive.' },
    start: { type: 'string', format: 'date-time', description: '`from` at 00:00 UTC; with the `start` parameter, that instant rounded down to a whole bucket.' },
    end: { type: 'string', format: 'date-time', description: 'The day after `to` at 00:00 UTC (exclusive); with the `start` parameter, `end` (or now) rounded up to a whole bucket.' },
    granularity: {
      type: 'string',
      enum: ['minute', 'hour', 'day'],
      description: `Width of the \`timeseries\` buckets: \`minute\` for \`start\`/\`end\` ranges up to ${MINUTELY_UP_TO_HOURS} hours, \`hour\` for ranges up to ${HOURLY_UP_TO_DAYS} days, \`day\` beyond.`,
    },
    totals: countsSchema('Every decision the gateway made in the range, by action; allows are counted whether or not they were sampled for storage.'),
    recorded: countsSchema('Of `totals`, the decisions stored as events: every block, challenge and log, a sample of allows. `top` counts these.'),
    sampled: {
      type: 'array',
      items: { type: 'string', enum: [...ACTIONS] },
      description: 'Actions for which `recorded` is less than `totals` in this range: normally `allow` (sampled); any other action only if the gateway had to drop events while the database lagged.',
    },
    timeseries: {
      type: 'array',
      description: 'One point per bucket of the range, oldest first, zeros included; counts as in `totals`.',
      items: { type: 'object', required: ['start', 'requests', ...ACTIONS], properties: { start: { type: 'string', format: 'date-time', description: 'Start of the bucket.' }, ...countsProperties } },
    },
    top: {
      type: 'object',
      description: `The ${TOP_LIMIT} most frequent values among the recorded events (see \`recorded\`), most frequent first.`,
      required: ['client_ips', 'paths', 'rules', 'asns'],
      properties: {
        client_ips: topList({ type: 'object', required: ['client_ip', 'count'], properties: { client_ip: { type: 'string' }, ...countProperty } }),
        paths: topList({ type: 'object', required: ['path', 'count'], properties: { path: { type: 'string', description: 'Without the query string.' }, ...countProperty } }),
        rules: topList({
          type: 'object',
          required: ['rule_kind', 'rule_id', 'count'],
          properties: { rule_kind: { type: 'string', description: 'Pipeline stage, e.g. `virtual_patch`.' }, rule_id: { type: ['string', 'null'] }, ...countProperty },
        }),
        asns: topList({ type: 'object', required: ['asn', 'count'], properties: { asn: { type: 'integer' }, ...countProperty } }),
      },
    },
  },
} as const;

interface ResolvedRange {
  from: string;
  to: string;
  start: Date;
  end: Date;
  granularity: Granularity;
}

const invalid = (field: string, message: string) => badRequest(`query is invalid: ${field} ${message}`, { fields: [{ field, message }] });

/** Midnight UTC of a YYYY-MM-DD day that exists (the schema has checked the form). */
function parseDay(field: string, value: string): Date {
  const day = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) throw invalid(field, 'is not a calendar date');
  return day;
}

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

function parseInstant(field: string, value: string): Date {
  const instant = new Date(value);
  if (Number.isNaN(instant.getTime())) throw invalid(field, 'is not a date-time');
  return instant;
}

/**
 * A range of instants: `end` defaults to now; both are rounded outwards to the buckets of the
 * granularity the span calls for. The rounded range may not exceed `MAX_RANGE_DAYS` days.
 */
export function resolveInstants(query: { start: string; end?: string | undefined }, now: Date = new Date()): ResolvedRange {
  const start = parseInstant('start', query.start);
  const end = query.end === undefined ? now : parseInstant('end', query.end);
  if (start >= end) throw invalid('start', 'must be before end');
  const span = end.getTime() - start.getTime();
  const granularity: Granularity = span <= MINUTELY_UP_TO_HOURS * HOUR_MS ? 'minute' : span <= HOURLY_UP_TO_DAYS * DAY_MS ? 'hour' : 'day';
  const width = BUCKET_MS[granularity];
  const first = new Date(Math.floor(start.getTime() / width) * width);
  const last = new Date(Math.ceil(end.getTime() / width) * width);
  if (last.getTime() - first.getTime() > MAX_RANGE_DAYS * DAY_MS) throw invalid('end', `must be at most ${MAX_RANGE_DAYS} days after start`);
  return { from: dayOf(first), to: dayOf(new Date(last.getTime() - 1)), start: first, end: last, granularity };
}

/** Days (`from`/`to`, the spec's form) or instants (`start`/`end`), never both. */
export function resolveQuery(query: { from?: string | undefined; to?: string | undefined; start?: string | undefined; end?: string | undefined }, now: Date = new Date()): ResolvedRange {
  if (query.start === undefined) {
    if (query.end !== undefined) throw invalid('start', 'is required with end');
    return resolveRange(query, now);
  }
  if (query.from !== undefined || query.to !== undefined) throw invalid('start', 'cannot be combined with from or to');
  return resolveInstants({ start: query.start, end: query.end }, now);
}

/** `to` defaults to today (UTC), `from` to `DEFAULT_RANGE_DAYS` days ending on `to`. */
export function resolveRange(query: { from?: string | undefined; to?: string | undefined }, now: Date = new Date()): ResolvedRange {
  const toDay = query.to === undefined ? new Date(Date.parse(`${dayOf(now)}T00:00:00.000Z`)) : parseDay('to', query.to);
  const fromDay = query.from === undefined ? new Date(toDay.getTime() - (DEFAULT_RANGE_DAYS - 1) * DAY_MS) : parseDay('from', query.from);
  if (fromDay > toDay) throw invalid('from', 'must not be after to');
  const days = Math.round((toDay.getTime() - fromDay.getTime()) / DAY_MS) + 1;
  if (days > MAX_RANGE_DAYS) throw invalid('to', `must be at most ${MAX_RANGE_DAYS} days after from (the range is inclusive)`);
  return {
    from: dayOf(fromDay),
    to: dayOf(toDay),
    start: fromDay,
    end: new Date(toDay.getTime() + DAY_MS),
    granularity: days <= HOURLY_UP_TO_DAYS ? 'hour' : 'day',
  };
}

export const analyticsRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db; perMinute: number; windowMs?: number } }> = async (app, { db, perMinute, windowMs = 60_000 }) => {
  app.get(
    '/api/v1/shield/sites/:id/analytics',
    {
      // Aggregations are the expensive reads: spec 8 gives them their own, lower budget.
      config: { auth: 'shield:read', rateLimit: { max: perMinute, timeWindow: windowMs } },
      schema: {
        tags: ['Shield analytics'],
        summary: "A site's decisions over a range of days",
        description:
          `Whole UTC days from \`from\` to \`to\`, both inclusive, at most ${MAX_RANGE_DAYS} days; by default the last ${DEFAULT_RANGE_DAYS} days up to today. ` +
          'Alternatively `start` and `end` (instants; `end` defaults to now), rounded outwards to whole buckets, for ranges such as the last hour; they cannot be combined with `from`/`to`. ' +
          `Counts cover every decision; \`top\` lists count the stored events, of which allows are a sample (\`sampled\`). Limited to ${perMinute} requests per minute per key.`,
        params: siteParams,
        querystring: {
          type: 'object',
          properties: {
            from: dateParam('First day (UTC), YYYY-MM-DD.'),
            to: dateParam('Last day (UTC), YYYY-MM-DD, inclusive.'),
            start: { type: 'string', format: 'date-time', description: 'Start instant (instead of `from`/`to`), rounded down to a whole bucket.', example: '2025-01-31T13:05:00Z' },
            end: { type: 'string', format: 'date-time', description: 'End instant (exclusive; default now), rounded up to a whole bucket. Needs `start`.', example: '2025-01-31T14:05:00Z' },
          },
        },
        response: { 200: analyticsSchema },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const range = resolveQuery(request.query);
      const site = await requireSite(db, orgId, request.params.id);
      const query = { siteId: site.id, orgId, start: range.start, end: range.end, granularity: range.granularity };
      const [counts, top] = await Promise.all([totalsAndSeries(db, query), topLists(db, query)]);
      const sampled = ACTIONS.filter((action: DecisionAction) => counts.recorded[action] < counts.observed[action]);
      return {
        site_id: site.id,
        from: range.from,
        to: range.to,
        start: range.start.toISOString(),
        end: range.end.toISOString(),
        granularity: range.granularity,
        totals: counts.observed,
        recorded: counts.recorded,
        sampled,
        timeseries: counts.series,
        top,
      };
    },
  );
};
