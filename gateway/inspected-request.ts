// The parts of a request the rule engines look at, read once per request by the gateway and only as
// far as some rule asks: the query string is split, cookies read and the path decoded on first use;
// the body is read (inspect/body.ts) only when a rule of the site needs it.
import type { IncomingHttpHeaders } from 'node:http';
import type { BodyInspection, BodyRefusal } from './inspect/body.ts';
import { FieldCollector } from './inspect/collector.ts';
import type { Anomaly, Field } from './inspect/fields.ts';
import { decodePercent, newDecodeFlags } from './inspect/percent.ts';

export type BodyState = 'none' | 'json' | 'form' | 'multipart' | 'unparsable' | 'too_large' | 'not_inspected' | 'other';

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
  /** Parsed JSON body when bodyState is `json` (the last of repeated keys, as JSON.parse reads it). */
  json?: unknown;
  /**
   * The path percent-decoded leniently (inspect/percent.ts) with nothing else done: NUL, `\`, `;`
   * and dot segments are still there. What a traversal attempt looks like to the origin.
   */
  readonly decodedPath: string;
  /** Every parameter of the request, from every place it can be sent (inspect/fields.ts). */
  readonly fields: readonly Field[];
  /**
   * The decoded body as text when it is text but not parsed into fields (XML, plain text that is
   * neither JSON nor a form), up to the inspection cap; null otherwise.
   */
  readonly bodyText: string | null;
  /** Encoding oddities met in the path, parameters and body (inspect/fields.ts). */
  readonly anomalies: ReadonlySet<Anomaly>;
  /** Why the request could not be inspected (body or parameters), or null. */
  readonly refusal: BodyRefusal | null;
}

/** The gateway's InspectedRequest: each part is computed on first use. */
export class LazyInspectedRequest implements InspectedRequest {
  bodyState: BodyState = 'none';
  #collector: FieldCollector | undefined;
  #body: BodyInspection | null = null;
  #query: URLSearchParams | undefined;
  #json: { value: unknown } | undefined;
  #decodedPath: string | undefined;
  #fieldsDone = false;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly rawQuery: string,
    readonly headers: IncomingHttpHeaders,
    readonly contentType: string,
  ) {}

  /** Collects body fields when the body is inspected, then query and cookie fields on first use; made when first needed. */
  get collector(): FieldCollector {
    return (this.#collector ??= new FieldCollector());
  }

  /** Records the inspected body (its fields are already in `collector`). */
  setBody(body: BodyInspection): void {
    this.#body = body;
    this.bodyState = body.state;
  }

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.rawQuery));
  }

  get json(): unknown {
    const text = this.#body?.jsonText;
    if (text === undefined) return undefined;
    if (!this.#json) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        // The field scanner accepted it, so this does not happen; no document is the safe answer.
        value = undefined;
      }
      this.#json = { value };
    }
    return this.#json.value;
  }

  get decodedPath(): string {
    if (this.#decodedPath === undefined) {
      const flags = newDecodeFlags();
      this.#decodedPath = decodePercent(this.path, false, flags);
      this.collector.noteFlags(flags);
      if (this.#decodedPath.includes('\0')) this.collector.anomalies.add('nul_byte');
    }
    return this.#decodedPath;
  }

  get fields(): readonly Field[] {
    if (!this.#fieldsDone) {
      this.#fieldsDone = true;
      this.collector.addUrlEncoded(this.rawQuery, 'query');
      const cookie = this.headers.cookie;
      this.collector.addCookies(Array.isArray(cookie) ? cookie.join('; ') : cookie);
      this.collector.addJoinedRepeats();
    }
    return this.collector.fields;
  }

  get bodyText(): string | null {
    return this.#body?.text ?? null;
  }

  get anomalies(): ReadonlySet<Anomaly> {
    void this.fields;
    void this.decodedPath;
    return this.collector.anomalies;
  }

  get refusal(): BodyRefusal | null {
    if (this.#body?.refusal) return this.#body.refusal;
    if (this.bodyState === 'too_large') return 'body_too_large';
    void this.fields;
    return this.collector.overflow ? 'too_many_parameters' : null;
  }
}
