// The API's types, generated from the OpenAPI document the server serves (`npm run client:types`
// writes them once for every client in the repository; a test fails when they are stale).
import type { paths } from '../../../client/api-types.ts';

export type { paths };

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;

/** Paths that have an operation for `M`. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, object> ? P : never }[keyof paths];

/** The JSON body of a 200/201 answer: `Answer<'/api/v1/vulnerabilities', 'get'>`. */
export type Answer<P extends keyof paths, M extends Method = 'get'> = paths[P] extends Record<M, { responses: infer R }>
  ? R extends { 200: infer Ok } ? JsonOf<Ok> : R extends { 201: infer Created } ? JsonOf<Created> : never
  : never;

/** One item of a list answer (`{ data: Item[], pagination }`). */
export type Item<P extends keyof paths> = Answer<P> extends { data: Array<infer Row> } ? Row : never;

/** The JSON request body of an operation. */
export type BodyOf<P extends keyof paths, M extends Method> = paths[P] extends Record<M, { requestBody?: infer B }>
  ? JsonOf<NonNullable<B>>
  : never;

/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends Method = 'get'> = paths[P] extends Record<M, { parameters: { query?: infer Q } }> ? NonNullable<Q> : never;
