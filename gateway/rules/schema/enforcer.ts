// Checking a request against the compiled document: the operation its path and method match
// (or a CORS preflight for a declared method), then its parameters and body at the strictness
// asked for, with the first failure as the reason.
import type { ErrorObject } from 'ajv';
import type { InspectedRequest } from '../../inspected-request.ts';
import { clip, LOCATIONS, type CompiledOperation, type MediaBody, type SchemaEnforcer, type SchemaViolation, type Strictness, type Variant } from './model.ts';
import { extractPathParams, INVALID_JSON, parseCookies, pathValue, queryValue, queryValues, textValue } from './params.ts';
import { RouteTrie, type Matched, type MatchResult } from './paths.ts';

export class CompiledEnforcer implements SchemaEnforcer {
  /** The document's path templates, matched against request paths. */
  readonly routes = new RouteTrie();
  readonly warnings: string[] = [];

  needsBody(method: string, path: string, foldCase = false): boolean {
    const result = this.routes.match(method, path, foldCase);
    return result.kind === 'operation' && result.match.operation.body !== null;
  }

  check(request: InspectedRequest, strictness: Strictness, foldCase = false): SchemaViolation | null {
    const result = this.routes.match(request.method, request.path, foldCase);
    if (result.kind !== 'operation') {
      const preflight = this.preflight(request, result, foldCase);
      if (preflight !== undefined) return preflight;
      return {
        reason: result.kind === 'no_path' ? 'the path is not declared in the schema' : `method ${clip(request.method, 20)} is not declared for this path`,
        operation: null,
      };
    }
    if (strictness === 'lenient') return null;
    const { operation } = result.match;
    const variant: Variant = strictness === 'strict' ? 'strict' : 'standard';
    const reason = this.checkParams(request, result.match, variant) ?? this.checkBody(request, operation, variant);
    return reason === null ? null : { reason, operation: operation.label };
  }

  /** A CORS preflight for a declared method passes; undefined when the request is not one. */
  private preflight(request: InspectedRequest, result: MatchResult, foldCase: boolean): SchemaViolation | null | undefined {
    const asked = request.headers['access-control-request-method'];
    if (request.method !== 'OPTIONS' || result.kind !== 'no_method' || typeof asked !== 'string') return undefined;
    if (this.routes.match(asked.trim().toUpperCase(), request.path, foldCase).kind === 'operation') return null;
    return { reason: `preflight for method ${clip(asked, 20)}, which is not declared for this path`, operation: null };
  }

  private checkParams(request: InspectedRequest, match: Matched, variant: Variant): string | null {
    const { operation } = match;
    const values = queryValues(request.query);
    if (variant === 'strict' && !operation.spreadsQuery) {
      for (const name of values.keys()) {
        if (operation.queryNames.has(name) || operation.deepObjectPrefixes.some((prefix) => name.startsWith(prefix))) continue;
        return `query parameter "${clip(name, 60)}" is not declared`;
      }
    }
    let pathParams: Map<string, string> | undefined;
    let cookies: Map<string, string> | undefined;
    for (const location of LOCATIONS) {
      const compiled = operation.params[location];
      const validate = compiled?.validate[variant];
      if (!compiled || !validate) continue;
      const data: Record<string, unknown> = {};
      for (const param of compiled.params) {
        let value: unknown;
        if (location === 'path') {
          pathParams ??= extractPathParams(match);
          const raw = pathParams.get(param.name);
          value = raw === undefined ? undefined : pathValue(param, raw);
        } else if (location === 'query') {
          value = queryValue(param, values, () => [...values.keys()].filter((name) => !operation.queryNames.has(name)));
        } else if (location === 'header') {
          const header = request.headers[param.key];
          const text = Array.isArray(header) ? header.join(', ') : header;
          value = text === undefined ? undefined : textValue(param, text);
        } else {
          cookies ??= parseCookies(request.headers.cookie);
          const text = cookies.get(param.name);
          value = text === undefined ? undefined : textValue(param, text);
        }
        if (value === INVALID_JSON || (Array.isArray(value) && value.includes(INVALID_JSON))) return `${location} parameter "${param.name}" is not valid JSON`;
        if (value !== undefined) data[param.key] = value;
      }
      if (validate(data)) continue;
      const { path, message } = describeError(validate.errors);
      const [, key = '', ...rest] = path.split('/');
      const name = compiled.params.find((p) => p.key === key)?.name ?? key;
      return `${location} parameter "${name}"${rest.length > 0 ? ` at /${rest.join('/')}` : ''} ${message}`;
    }
    return null;
  }

  private checkBody(request: InspectedRequest, operation: CompiledOperation, variant: Variant): string | null {
    const strict = variant === 'strict';
    const { body } = operation;
    if (request.bodyState === 'none') return body?.required ? 'the request body is required' : null;
    if (!body) return strict ? 'the operation declares no request body' : null;
    if (request.contentType === '') return strict ? 'the request body has no content type' : null;
    const media = matchMedia(body.media, request.contentType);
    if (!media) return `content type ${clip(request.contentType, 80)} is not declared for this operation`;
    switch (request.bodyState) {
      case 'too_large':
      case 'not_inspected':
        return strict ? 'the request body is too large to validate' : null;
      case 'unparsable':
        return media.validate[variant] ? 'the request body is not valid JSON' : null;
      case 'json': {
        const validate = media.validate[variant];
        if (!validate || validate(request.json)) return null;
        const { path, message } = describeError(validate.errors);
        return `request body${path ? ` at ${path}` : ''} ${message}`;
      }
      default:
        // Form and other bodies are accepted for a declared content type without validation.
        return null;
    }
  }
}

/** The first ajv error as `where what`: `/name must be string`, `/photoUrls is required`. */
function describeError(errors: ErrorObject[] | null | undefined): { path: string; message: string } {
  const error = errors?.[0];
  if (!error) return { path: '', message: 'is invalid' };
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    return { path: `${error.instancePath}/${params.missingProperty}`, message: 'is required' };
  }
  const extra = params.unevaluatedProperty ?? params.additionalProperty;
  if (typeof extra === 'string') return { path: `${error.instancePath}/${extra}`, message: 'is not declared' };
  return { path: error.instancePath, message: error.message ?? 'is invalid' };
}

/** The declared media range for a content type: the exact type, else `type/*`, else the any-type range. */
function matchMedia(media: MediaBody[], contentType: string): MediaBody | undefined {
  const wildcard = `${contentType.slice(0, contentType.indexOf('/') + 1)}*`;
  return media.find((m) => m.range === contentType) ?? media.find((m) => m.range === wildcard) ?? media.find((m) => m.range === '*/*');
}
