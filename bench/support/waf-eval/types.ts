// The requests the managed-rule evaluation sends (bench/managed-rules-eval.ts): attack requests
// built from public payload collections placed the way WAF testing tools place them, and benign
// requests built from public text and data sources. Each says where it came from, so the report can
// break results down per class, placement and source.

/** Where a payload (or a benign text) sits in the request. */
export type Placement = 'query' | 'path' | 'form' | 'multipart' | 'json' | 'xml' | 'header' | 'user_agent' | 'body' | 'raw';

export interface EvalRequest {
  method: string;
  /** Request target as sent on the wire: path and query, already percent-encoded as the client sends it. */
  target: string;
  /** Header names in lower case; `host` and `content-length` are set by the sender. */
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Attack class (`sqli`, `xss`, `cmdi`, `traversal`, `crlf`, …) or `benign`. */
  class: string;
  placement: Placement;
  /** Encoding applied to the payload before placement (`plain`, `url`, `base64`, `js_unicode`, …). */
  encoding: string;
  /** The corpus and file (or source) the input came from, e.g. `gotestwaf:owasp/crlf.yml`. */
  source: string;
}
