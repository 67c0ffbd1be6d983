// What the gateway extracts from a request for its rules to read: every parameter value wherever it
// was sent (query, form, multipart, JSON body, cookies), under the names an origin framework could
// know it by, and the oddities met on the way (anomalies), which managed rules may refuse.

export type FieldSource = 'query' | 'form' | 'multipart' | 'json' | 'cookie' | 'file_name';

export interface Field {
  source: FieldSource;
  /**
   * The name as sent (`q[]`, `user[name]`, a multipart part's name, a cookie's name) or, for a JSON
   * value, its dotted path (`user.name`, `items.0.id`; `` for a top-level scalar). For `file_name`,
   * the name of the multipart part that carried the file.
   */
  raw: string;
  /**
   * The names a rule's parameter is compared with, lower case: the name without `[…]` suffixes
   * (`q`, `q[]`, `Q`, `q[0]`, `q[key]` → `q`) and its bracket path in dotted form (`user[name]` →
   * `user.name`); for JSON, the key at any depth (`name`) and the dotted path (`user.name`).
   */
  names: readonly string[];
  /**
   * The value as the origin's framework would see it: percent-decoded (query, form), unescaped
   * (JSON; numbers, booleans and null as their JSON text), the part's text (multipart), the file
   * name (`file_name`).
   */
  value: string;
}

/**
 * Oddities of the request's encoding that a legitimate client does not produce, found while
 * extracting fields and paths. Managed rules refuse them as protocol anomalies (`protocol.<id>`).
 *
 * - `overlong_utf8`: an overlong UTF-8 form in a percent-encoding (`%C0%AF`) in the path or a parameter
 * - `percent_u`: an IIS `%uXXXX` escape in the path or a parameter
 * - `invalid_utf8`: a percent-encoded byte run that is not UTF-8 (`%FF`), kept as written
 * - `nul_byte`: a NUL character in the path, a parameter name or value, or a header
 * - `multipart_invalid`: a multipart body that does not parse cleanly (no boundary, unterminated, malformed part headers)
 * - `duplicate_json_key`: an object in a JSON body with the same key twice (every value is inspected)
 * - `parameter_pollution`: a parameter sent more than once under one name (every value, and the values joined with `,`, are inspected)
 */
export type Anomaly = 'overlong_utf8' | 'percent_u' | 'invalid_utf8' | 'nul_byte' | 'multipart_invalid' | 'duplicate_json_key' | 'parameter_pollution';

export const ANOMALIES: readonly Anomaly[] = ['overlong_utf8', 'percent_u', 'invalid_utf8', 'nul_byte', 'multipart_invalid', 'duplicate_json_key', 'parameter_pollution'];
