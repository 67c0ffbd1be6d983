// The parts of a request the rule engines look at, parsed once per request by the gateway.
// The body is buffered and parsed only when a rule of the site needs it, and only up to the
// inspection cap; beyond the cap the request is proxied uninspected (bodyState `too_large`).
import type { IncomingHttpHeaders } from 'node:http';

export type BodyState = 'none' | 'json' | 'form' | 'unparsable' | 'too_large' | 'not_inspected' | 'other';

export interface InspectedRequest {
  /** Upper case. */
  method: string;
  /** Path without the query string, as sent (percent-encoding kept). */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Media type in lower case without parameters (`application/json`); '' when absent. */
  contentType: string;
  bodyState: BodyState;
  /** Parsed JSON body when bodyState is `json`. */
  json?: unknown;
  /** Parsed form fields when bodyState is `form` (application/x-www-form-urlencoded). */
  form?: URLSearchParams;
}

/** The gateway's InspectedRequest: the query string is parsed only if a rule reads it. */
export class LazyInspectedRequest implements InspectedRequest {
  bodyState: BodyState = 'none';
  json?: unknown;
  form?: URLSearchParams;
  #query: URLSearchParams | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly rawQuery: string,
    readonly headers: IncomingHttpHeaders,
    readonly contentType: string,
  ) {}

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.rawQuery));
  }
}
