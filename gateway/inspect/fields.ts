// What the gateway extracts from a request for its rules to read: every parameter value wherever it
// was sent (query, form, multipart, JSON or XML body, cookies), under the names an origin framework could
// know it by, and the oddities met on the way (anomalies), which managed rules may refuse.

export type FieldSource = 'query' | 'form' | 'multipart' | 'json' | 'xml' | 'cookie' | 'file_name';

export interface Field {
  source: FieldSource;
  /**
   * The name as sent (`q[]`, `user[name]`, a multipart part's name, a cookie's name) or, for a JSON
   * value, its dotted path (`user.name`, `items.0.id`; `` for a top-level scalar); for XML, the
   * path of local element names (`envelope.body.login.user`, `root.a@probe` for an attribute). For `file_name`,
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

export type { Anomaly } from '../../schemas/managed-rules/anomalies.ts';
