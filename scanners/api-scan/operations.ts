// The operations of an OpenAPI document as the scanner needs them: parameters merged from the path
// item and the operation, the request body and responses by media type, and the security
// requirement in force, resolved against components.securitySchemes.
import { isObject, type JsonObject } from '../../schemas/json-value.ts';
import { deref } from '../../schemas/openapi/refs.ts';

export type ParamIn = 'path' | 'query' | 'header' | 'cookie';

export interface ApiMedia {
  /** Media type as declared, lower case (`application/json`, `application/*`). */
  type: string;
  schema: unknown;
  /** Example values the document gives, in order of preference. */
  examples: unknown[];
}

export interface ApiParameter {
  name: string;
  in: ParamIn;
  required: boolean;
  schema: unknown;
  examples: unknown[];
  style: string;
  explode: boolean;
  /** Declared with `content` (a serialized JSON value) instead of `schema`. */
  json: boolean;
}

export interface ApiRequestBody {
  required: boolean;
  /** The media type requests are built for: JSON first, then form-urlencoded; null when neither is declared. */
  media: ApiMedia | null;
  declaredTypes: string[];
}

export interface ApiResponse {
  /** `200`, `2XX` or `default`. */
  status: string;
  media: ApiMedia[];
}

export interface SecurityScheme {
  name: string;
  type: string;
  /** apiKey: where the key goes and its name. */
  in?: string;
  paramName?: string;
}

export interface ApiOperation {
  /** `GET /users/{id}`. */
  key: string;
  method: string;
  path: string;
  operationId: string | null;
  parameters: ApiParameter[];
  body: ApiRequestBody | null;
  responses: ApiResponse[];
  /** Alternatives (any one suffices), each a list of schemes used together. */
  security: SecurityScheme[][];
  /** Credentials are required: some requirement is declared and none of the alternatives is empty (`{}`). */
  secured: boolean;
  /** The operation or its path item names its own `servers` (ignored: requests go to the scan's base URL). */
  ownServers: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const LOCATIONS: readonly ParamIn[] = ['path', 'query', 'header', 'cookie'];
/** Header parameters the specification says to ignore (described elsewhere in the document). */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

export const isJsonMedia = (type: string): boolean => /^application\/(?:[\w.-]+\+)?json$/.test(type) || type === 'application/*' || type === '*/*';

/** Example values of a parameter or media type object: `example`, then each of `examples`. */
function examplesOf(root: JsonObject, holder: JsonObject): unknown[] {
  const found: unknown[] = [];
  if (holder.example !== undefined) found.push(holder.example);
  if (isObject(holder.examples)) {
    for (const ex of Object.values(holder.examples)) {
      const resolved = deref(root, ex);
      // externalValue names a file or URL: never fetched.
      if (isObject(resolved) && resolved.value !== undefined) found.push(resolved.value);
    }
  }
  return found;
}

function mediaOf(root: JsonObject, content: unknown): ApiMedia[] {
  if (!isObject(content)) return [];
  return Object.entries(content).flatMap(([type, value]) => {
    const media = deref(root, value);
    if (!isObject(media)) return [];
    return [{ type: type.toLowerCase().split(';')[0]!.trim(), schema: media.schema, examples: examplesOf(root, media) }];
  });
}

function parameterOf(root: JsonObject, raw: unknown): ApiParameter | null {
  const p = deref(root, raw);
  if (!isObject(p) || typeof p.name !== 'string' || !(LOCATIONS as readonly string[]).includes(String(p.in))) return null;
  const where = p.in as ParamIn;
  if (where === 'header' && IGNORED_HEADERS.has(p.name.toLowerCase())) return null;
  const content = mediaOf(root, p.content)[0];
  const style = typeof p.style === 'string' ? p.style : where === 'query' || where === 'cookie' ? 'form' : 'simple';
  return {
    name: p.name,
    in: where,
    required: where === 'path' || p.required === true,
    schema: content ? content.schema : p.schema,
    examples: [...examplesOf(root, p), ...(content?.examples ?? [])],
    style,
    explode: typeof p.explode === 'boolean' ? p.explode : style === 'form',
    json: content !== undefined,
  };
}

function securityOf(root: JsonObject, requirements: unknown): SecurityScheme[][] {
  if (!Array.isArray(requirements)) return [];
  const schemes = isObject(root.components) && isObject(root.components.securitySchemes) ? root.components.securitySchemes : {};
  return requirements.filter(isObject).map((requirement) =>
    Object.keys(requirement).map((name): SecurityScheme => {
      const scheme = deref(root, schemes[name]);
      if (!isObject(scheme)) return { name, type: 'unknown' };
      return {
        name,
        type: typeof scheme.type === 'string' ? scheme.type : 'unknown',
        ...(typeof scheme.in === 'string' ? { in: scheme.in } : {}),
        ...(typeof scheme.name === 'string' ? { paramName: scheme.name } : {}),
      };
    }),
  );
}

/** Every operation under `paths`, in document order. */
export function listApiOperations(root: JsonObject): ApiOperation[] {
  if (!isObject(root.paths)) return [];
  const operations: ApiOperation[] = [];
  for (const [path, rawItem] of Object.entries(root.paths)) {
    const item = deref(root, rawItem);
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      // Operation parameters override path item ones of the same name and location.
      const byKey = new Map<string, ApiParameter>();
      for (const raw of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
        const param = parameterOf(root, raw);
        if (param) byKey.set(`${param.in}:${param.name}`, param);
      }
      const security = securityOf(root, op.security !== undefined ? op.security : root.security);
      // apiKey credentials are the scan's authentication, not something to generate.
      const keyParams = new Set(security.flat().flatMap((s) => (s.type === 'apiKey' && s.in && s.paramName ? [`${s.in}:${s.paramName}`] : [])));
      const parameters = [...byKey.values()].filter((p) => !keyParams.has(`${p.in}:${p.name}`));
      const requestBody = deref(root, op.requestBody);
      let body: ApiRequestBody | null = null;
      if (isObject(requestBody)) {
        const media = mediaOf(root, requestBody.content);
        const chosen = media.find((m) => isJsonMedia(m.type) && m.type !== '*/*') ?? media.find((m) => m.type === 'application/x-www-form-urlencoded') ?? media.find((m) => isJsonMedia(m.type)) ?? null;
        body = { required: requestBody.required === true, media: chosen, declaredTypes: media.map((m) => m.type) };
      }
      const responses: ApiResponse[] = [];
      if (isObject(op.responses)) {
        for (const [status, raw] of Object.entries(op.responses)) {
          const response = deref(root, raw);
          if (isObject(response)) responses.push({ status: status.toUpperCase() === 'DEFAULT' ? 'default' : status.toUpperCase(), media: mediaOf(root, response.content) });
        }
      }
      const upper = method.toUpperCase();
      operations.push({
        key: `${upper} ${path}`,
        method: upper,
        path,
        operationId: typeof op.operationId === 'string' ? op.operationId : null,
        parameters,
        body,
        responses,
        security,
        secured: security.length > 0 && security.every((alternative) => alternative.length > 0),
        ownServers: Array.isArray(op.servers) || Array.isArray(item.servers),
      });
    }
  }
  return operations;
}

/** The declared response for a status: exact code, then its range (`2XX`), then `default`. */
export function declaredResponse<T extends { status: string }>(responses: readonly T[], status: number): T | undefined {
  const code = String(status);
  return responses.find((r) => r.status === code) ?? responses.find((r) => r.status === `${code[0]}XX`) ?? responses.find((r) => r.status === 'default');
}
