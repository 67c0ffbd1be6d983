// The typed Aegis REST client, shared by the reconciler and (later) the Terraform provider.
//
// The types are generated from the OpenAPI document the server serves (api-types.ts, `npm run
// client:types`); openapi-fetch turns them into path-typed methods. This module adds only what a
// tool applying changes needs: methods that return the object or throw AegisApiError, retries with
// an Idempotency-Key on every write (transport.ts), pagination, and request counts.
//
//   const aegis = createAegisClient({ baseUrl, apiKey });
//   const site = await aegis.POST('/api/v1/shield/sites', { body: { domain, origin_url, mode: 'block' } });
//   const { items, requests } = await aegis.listAll('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: site.id } } });
import createClient, { type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './api-types.ts';
import { apiErrorFrom } from './errors.ts';
import { emptyStats, send, type ClientStats, type FetchFn, type TransportOptions } from './transport.ts';

export type { paths } from './api-types.ts';
export { AegisApiError, type ErrorEnvelope } from './errors.ts';
export type { ClientStats, FetchFn } from './transport.ts';

export interface AegisClientOptions {
  /** Where the API is, e.g. `http://localhost:3000` (paths start with `/api/v1`). */
  baseUrl: string;
  /** `svc_live_…`, sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Defaults to the global fetch; tests and proxies put theirs here. */
  fetch?: FetchFn;
  /** Retries after the first attempt (default 4, so at most 5 attempts). */
  maxRetries?: number;
  /** First backoff step in ms, doubled per retry (default 250). */
  retryBaseMs?: number;
  /** Longest single wait in ms (default 60 000, one rate-limit window); a longer Retry-After is not waited for. */
  maxRetryDelayMs?: number;
  userAgent?: string;
  /** Cancels every request of this client, in flight or waiting to retry (a command that stops early). */
  signal?: AbortSignal;
}

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
type RawClient = Client<paths>;
type PathsWith<M extends Method> = ClientPathsWithMethod<RawClient, M>;

// openapi-fetch's own argument typing (its InitParam is not exported): the init object is
// optional exactly when nothing in it is required (no path parameter, no required body).
type RequiredKeysOf<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [init?: Init & { [key: string]: unknown }] : [init: Init & { [key: string]: unknown }];

type MediaType = `${string}/${string}`;
type Success<Op, Init> = Op extends Record<string | number, unknown> ? Exclude<FetchResponse<Op, Init, MediaType>['data'], undefined> : never;
/** The success body of an operation; `undefined` when it answers 204. */
type Data<Op, Init> = [Success<Op, Init>] extends [never] ? undefined : Success<Op, Init>;

/** Same arguments as openapi-fetch's method; resolves to the answer's body, rejects with AegisApiError. */
type TypedMethod<M extends Method> = <P extends PathsWith<M>, Init extends MaybeOptionalInit<paths[P], M>>(url: P, ...init: InitParam<Init>) => Promise<Data<paths[P][M], Init>>;

// ---- lists -------------------------------------------------------------------------------------

type JsonOk<Op> = Op extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;
interface Page<T> {
  data: T[];
  pagination: { next: string | null };
}

/** The paths whose GET answers a page: `{ data: [...], pagination: { next } }`. */
export type ListPath = {
  [P in PathsWith<'get'>]: JsonOk<paths[P]['get']> extends Page<unknown> ? P : never;
}[PathsWith<'get'>];

/** One element of a list path's `data`. */
export type ListItem<P extends ListPath> = JsonOk<paths[P]['get']> extends Page<infer T> ? T : never;

type ListParameters<P extends ListPath> = paths[P]['get']['parameters'];
/** The list's filters; `limit` and `cursor` are the pager's. */
export type ListQuery<P extends ListPath> = Omit<NonNullable<ListParameters<P>['query']>, 'limit' | 'cursor'>;
type ListParams<P extends ListPath> = Omit<ListParameters<P>, 'query'> & { query?: ListQuery<P> };
export interface ListOptions<P extends ListPath> {
  params: ListParams<P>;
  /** Page size, 1–200; default 200 so that reads grow with pages, not objects. */
  limit?: number;
  signal?: AbortSignal;
}
type ListArgs<P extends ListPath> = RequiredKeysOf<ListParams<P>> extends never ? [options?: Partial<ListOptions<P>>] : [options: ListOptions<P>];

export interface ListResult<T> {
  items: T[];
  /** HTTP requests this listing sent: one per page, plus any retries. */
  requests: number;
}

export const MAX_PAGE_SIZE = 200;

// ---- the client --------------------------------------------------------------------------------

export interface AegisClient {
  GET: TypedMethod<'get'>;
  POST: TypedMethod<'post'>;
  PUT: TypedMethod<'put'>;
  PATCH: TypedMethod<'patch'>;
  DELETE: TypedMethod<'delete'>;
  /** The openapi-fetch client underneath ({ data, error, response }, never throws on HTTP errors); same auth, keys, retries and counts. */
  raw: RawClient;
  /** Every item of a list, following `pagination.next`. */
  listAll<P extends ListPath>(path: P, ...options: ListArgs<P>): Promise<ListResult<ListItem<P>>>;
  /** The same, one item at a time, one page in memory. */
  iterate<P extends ListPath>(path: P, ...options: ListArgs<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** Live counts of what this client sent. */
  readonly stats: Readonly<ClientStats>;
  resetStats(): void;
}

export function createAegisClient(options: AegisClientOptions): AegisClient {
  const stats = emptyStats();
  const transport: TransportOptions = {
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((request) => fetch(request)),
    maxRetries: options.maxRetries ?? 4,
    retryBaseMs: options.retryBaseMs ?? 250,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    userAgent: options.userAgent ?? 'aegis-client/0.1',
    stats,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const raw = createClient<paths>({ baseUrl: options.baseUrl, fetch: (request) => send(transport, request) });

  // One untyped step, here only: the public signatures are openapi-fetch's own, so what reaches
  // these functions has already been checked against the generated paths.
  type RawCall = (url: string, init?: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  type Call = (url: string, init?: Record<string, unknown>) => Promise<unknown>;
  const throwing = (method: Uppercase<Method>): Call => {
    const call = raw[method] as unknown as RawCall;
    return async (url, init) => {
      const result = await call(url, init);
      if (!result.response.ok) throw apiErrorFrom(result.response, result.error, `${method} ${url}`);
      return result.data;
    };
  };
  const get = throwing('GET');

  async function* pages(path: string, list: Partial<ListOptions<ListPath>> | undefined, onAttempt: () => void): AsyncGenerator<unknown[], void, undefined> {
    const limit = list?.limit ?? MAX_PAGE_SIZE;
    const params = (list?.params ?? {}) as { path?: Record<string, unknown>; query?: Record<string, unknown> };
    let cursor: string | null = null;
    do {
      const query: Record<string, unknown> = { ...params.query, limit, ...(cursor === null ? {} : { cursor }) };
      const page = (await get(path, {
        params: { ...params, query },
        signal: list?.signal,
        // Per call, so this listing counts its own requests even while others share the client.
        fetch: (request: Request) => send(transport, request, onAttempt),
      })) as Page<unknown>;
      yield page.data;
      cursor = page.pagination.next;
    } while (cursor !== null);
  }

  return {
    GET: get as unknown as TypedMethod<'get'>,
    POST: throwing('POST') as unknown as TypedMethod<'post'>,
    PUT: throwing('PUT') as unknown as TypedMethod<'put'>,
    PATCH: throwing('PATCH') as unknown as TypedMethod<'patch'>,
    DELETE: throwing('DELETE') as unknown as TypedMethod<'delete'>,
    raw,
    async listAll<P extends ListPath>(path: P, ...[list]: ListArgs<P>): Promise<ListResult<ListItem<P>>> {
      let requests = 0;
      const items: ListItem<P>[] = [];
      for await (const data of pages(path, list as Partial<ListOptions<ListPath>> | undefined, () => requests++)) items.push(...(data as ListItem<P>[]));
      return { items, requests };
    },
    async *iterate<P extends ListPath>(path: P, ...[list]: ListArgs<P>): AsyncGenerator<ListItem<P>, void, undefined> {
      for await (const data of pages(path, list as Partial<ListOptions<ListPath>> | undefined, () => {})) yield* data as ListItem<P>[];
    },
    stats,
    resetStats() {
      Object.assign(stats, emptyStats());
    },
  };
}

/**
 * Init fragment for a body sent as text with its own media type: the Shield schema upload
 * (`application/yaml`) and the IP rule CSV import (`text/csv`). openapi-fetch would otherwise
 * JSON-encode the string.
 *
 *   await aegis.PUT('/api/v1/shield/sites/{id}/schema', { params: { path: { id } }, ...textBody(yaml, 'application/yaml') });
 */
export function textBody(text: string, contentType: MediaType): { body: string; bodySerializer: (body: string) => string; headers: { 'content-type': string } } {
  return { body: text, bodySerializer: (body) => body, headers: { 'content-type': contentType } };
}
