// Which requests keep their values in the traffic record: every one a rule flagged, a uniform
// sample of the rest, and a floor per route per hour so that quiet routes are represented too
// (docs/impact-preview.md, "What is recorded").
import type { ValuesReason } from './traffic-record.ts';

export interface ValueSamplerOptions {
  /** Share of unflagged requests whose values are kept (0–1); default 0.01. */
  sampleRate?: number | undefined;
  /** Requests per route per hour kept whatever the sample says; default 5. */
  floorPerRouteHour?: number | undefined;
  /** Routes remembered per hour before the floor stops applying to new ones (memory bound); default 20 000. */
  maxRoutes?: number | undefined;
  random?: () => number;
}

const HOUR = 3_600_000;
/** Segments that name one object rather than a route: numbers, long hex, UUIDs. */
const ID_SEGMENT = /^(?:\d+|[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** `/users/42/orders/9f1c…` → `/users/:id/orders/:id`: the route a floor counts by. */
export function routeOf(path: string): string {
  if (!/[0-9]/.test(path)) return path;
  return path
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment))
    .join('/');
}

export class ValueSampler {
  readonly #rate: number;
  readonly #floor: number;
  readonly #maxRoutes: number;
  readonly #random: () => number;
  #hour = -1;
  /** Requests whose values the floor kept this hour, by site, then `METHOD route`. */
  readonly #perRoute = new Map<string, Map<string, number>>();
  #routes = 0;

  constructor(options: ValueSamplerOptions = {}) {
    this.#rate = options.sampleRate ?? 0.01;
    this.#floor = options.floorPerRouteHour ?? 5;
    this.#maxRoutes = options.maxRoutes ?? 20_000;
    this.#random = options.random ?? Math.random;
  }

  /** Why this request's values are kept, or null when only its metadata is. */
  /** `flagged`: a live rule acted on or logged the request. */
  pick(siteId: string, method: string, path: string, flagged: boolean, at: number): ValuesReason | null {
    if (flagged) return 'flagged';
    if (this.#rate > 0 && this.#random() < this.#rate) return 'sample';
    if (this.#floor <= 0) return null;
    const hour = Math.floor(at / HOUR);
    if (hour !== this.#hour) {
      this.#hour = hour;
      this.#perRoute.clear();
      this.#routes = 0;
    }
    let routes = this.#perRoute.get(siteId);
    if (!routes) this.#perRoute.set(siteId, (routes = new Map()));
    const key = method === 'GET' ? routeOf(path) : `${method} ${routeOf(path)}`;
    const seen = routes.get(key);
    if (seen === undefined) {
      if (this.#routes >= this.#maxRoutes) return null;
      this.#routes++;
      routes.set(key, 1);
      return 'floor';
    }
    if (seen >= this.#floor) return null;
    routes.set(key, seen + 1);
    return 'floor';
  }
}
