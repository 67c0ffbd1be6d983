// What an echo origin (express-echo.ts, flask_echo.py, php-echo.php) answers: the request as its
// framework parsed it. All three answer the same JSON shape, so the differential test compares them
// without knowing which framework spoke. Nested parameters (qs objects, PHP arrays, JSON documents)
// arrive flattened to [path, value] pairs, the path written with brackets (`a[b][0]`).

export type Pair = [name: string, value: string];

export interface ParsedFile {
  /** The form field the file came in. */
  field: string;
  filename: string;
  size: number;
}

export interface ParsedView {
  /** `express`, `flask` or `php`: tells an echo's answer from the gateway's own pages. */
  framework: string;
  /** The request's X-Shape header, so an answer is matched to the request that caused it. */
  tag: string;
  /** The method the application is dispatched with, after the method-override convention the echo honours. */
  method: string;
  /** The method of the request line, as the origin received it. */
  wireMethod: string;
  path: string;
  /** The absolute URL the application builds links from (scheme and host; behind a proxy from X-Forwarded-Host). */
  baseUrl: string;
  query: Pair[];
  /** Form fields (urlencoded and multipart text parts) and the scalars of a JSON body. */
  body: Pair[];
  cookies: Pair[];
  files: ParsedFile[];
  /** Request headers as the framework exposes them (raw order where it keeps one). */
  headers: Pair[];
  /** Body bytes the framework read (after any decompression it does). */
  bodyBytes: number;
  /** Why the framework refused the request before the application ran (a body parser's 4xx), or null. */
  refused: string | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function pairs(value: unknown): Pair[] | null {
  if (!Array.isArray(value)) return null;
  const out: Pair[] = [];
  for (const item of value) {
    if (!Array.isArray(item) || item.length !== 2 || typeof item[0] !== 'string' || typeof item[1] !== 'string') return null;
    out.push([item[0], item[1]]);
  }
  return out;
}

function files(value: unknown): ParsedFile[] | null {
  if (!Array.isArray(value)) return null;
  const out: ParsedFile[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.field !== 'string' || typeof item.filename !== 'string' || typeof item.size !== 'number') return null;
    out.push({ field: item.field, filename: item.filename, size: item.size });
  }
  return out;
}

/** The echo's answer, or null when the text is not one (a gateway page, an origin's error page). */
export function readParsedView(text: string): ParsedView | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  const { framework, tag, method, wireMethod, path, baseUrl, bodyBytes, refused } = value;
  const query = pairs(value.query);
  const body = pairs(value.body);
  const cookies = pairs(value.cookies);
  const headers = pairs(value.headers);
  const parsedFiles = files(value.files);
  if (typeof framework !== 'string' || typeof tag !== 'string' || typeof method !== 'string' || typeof wireMethod !== 'string' || typeof path !== 'string' || typeof baseUrl !== 'string') return null;
  if (typeof bodyBytes !== 'number' || (refused !== null && typeof refused !== 'string')) return null;
  if (!query || !body || !cookies || !headers || !parsedFiles) return null;
  return { framework, tag, method, wireMethod, path, baseUrl, query, body, cookies, files: parsedFiles, headers, bodyBytes, refused };
}

/** Nested values (qs objects, arrays, JSON documents) as [path, scalar] pairs, paths in bracket form. */
export function flatten(value: unknown, prefix: string, out: Pair[] = []): Pair[] {
  if (Array.isArray(value)) value.forEach((item, i) => flatten(item, prefix === '' ? String(i) : `${prefix}[${i}]`, out));
  else if (isRecord(value)) for (const [key, item] of Object.entries(value)) flatten(item, prefix === '' ? key : `${prefix}[${key}]`, out);
  else if (value !== undefined) out.push([prefix, typeof value === 'string' ? value : JSON.stringify(value)]);
  return out;
}
