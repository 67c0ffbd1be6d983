// What compiling a document produces and checking a request reads: the enforcer's interface, the
// compiled operations and parameters, and the cap on request text in reasons. Shared by every
// part of schema enforcement, so it depends on none of them.
import type { ValidateFunction } from 'ajv';
import type { InspectedRequest } from '../../inspected-request.ts';

export type Strictness = 'lenient' | 'standard' | 'strict';

export interface SchemaViolation {
  reason: string;
  /** operationId, else `METHOD /template`; null when no operation matched. */
  operation: string | null;
}

export interface SchemaEnforcer {
  /** `foldCase`: literal path segments compare in lower case (the site's `path_case: insensitive`). */
  check(request: InspectedRequest, strictness: Strictness, foldCase?: boolean): SchemaViolation | null;
  /** Whether the operation matching the request declares a body (so the gateway buffers only then). */
  needsBody(method: string, path: string, foldCase?: boolean): boolean;
  /** Parts of the document that could not be compiled and are therefore not enforced. */
  readonly warnings?: readonly string[];
}

export type Variant = 'standard' | 'strict';
export type ParamLocation = 'path' | 'query' | 'header' | 'cookie';

export const LOCATIONS: readonly ParamLocation[] = ['path', 'query', 'header', 'cookie'];
/** Request-derived text in reasons is capped: reasons end up in logs and events. */
export const clip = (text: string, max = 100): string => (text.length > max ? `${text.slice(0, max)}…` : text);

export type ParamShape = 'primitive' | 'array' | 'object';

export interface CompiledParam {
  name: string;
  /** Key in the location object: header names in lower case. */
  key: string;
  shape: ParamShape;
  style: string;
  explode: boolean;
  /** Declared with `content: application/json` rather than a schema: the value is JSON text. */
  json: boolean;
}

export interface LocationParams {
  params: CompiledParam[];
  validate: Record<Variant, ValidateFunction | null>;
}

export interface MediaBody {
  /** A media range as declared, in lower case without parameters: `application/json`, `application/*`. */
  range: string;
  validate: Record<Variant, ValidateFunction | null>;
}

export interface CompiledBody {
  required: boolean;
  media: MediaBody[];
}

export interface CompiledOperation {
  label: string;
  params: Record<ParamLocation, LocationParams | null>;
  /** A query parameter whose properties are spread over the query: every name is then declared. */
  spreadsQuery: boolean;
  deepObjectPrefixes: string[];
  queryNames: Set<string>;
  body: CompiledBody | null;
}
