// Sending for the DAST engine: wraps ScanHttp so that a used-up budget unwinds the whole scan
// (BudgetStop) while ordinary failures (connection refused, timeouts, a host refused by the address
// policy) only lose that one request. Also the request/response excerpts findings carry.
import { BudgetExhaustedError, OutOfScopeError, splitUrl, type HttpExchange, type ScanHttp, type ScanRequest } from '../web/http.ts';
import { errorMessage } from '../../schemas/json-value.ts';

/** Thrown through the checks when the budget is used up; the scan ends with what it has. */
export class BudgetStop extends Error {}

export class Prober {
  failures = 0;
  lastFailure = '';
  /** The error behind lastFailure (a refused address ends the scan for good when nothing answered). */
  lastError: unknown = null;
  budgetHit = false;
  refusedOutOfScope = 0;
  private readonly startCount: number;

  constructor(
    readonly http: ScanHttp,
    readonly signal: AbortSignal,
  ) {
    this.startCount = http.requests;
  }

  /** Requests this scan sent. */
  get sent(): number {
    return this.http.requests - this.startCount;
  }

  /** The exchange, or null when this request failed; throws BudgetStop or the abort reason. */
  async send(req: ScanRequest): Promise<HttpExchange | null> {
    this.signal.throwIfAborted();
    if (this.budgetHit) throw new BudgetStop();
    try {
      return await this.http.send(req);
    } catch (err) {
      this.signal.throwIfAborted();
      if (err instanceof BudgetExhaustedError) {
        this.budgetHit = true;
        throw new BudgetStop(err.message);
      }
      // Callers check scope first; ScanHttp refusing anyway is counted like any lost request.
      if (err instanceof OutOfScopeError) this.refusedOutOfScope++;
      this.failures++;
      this.lastFailure = errorMessage(err);
      this.lastError = err;
      return null;
    }
  }
}

/** Runs `worker` over `items` with at most `concurrency` at once; a BudgetStop ends the whole pool. */
export async function runPool<T>(items: readonly T[], concurrency: number, worker: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let stop: unknown = null;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (stop === null && next < items.length) {
      const i = next++;
      try {
        await worker(items[i]!, i);
      } catch (err) {
        stop ??= err;
      }
    }
  });
  await Promise.all(lanes);
  if (stop !== null) throw stop;
}

export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `text` around `index` (±radius), whitespace folded, for evidence. */
export function around(text: string, index: number, length: number, radius = 60): string {
  const from = Math.max(0, index - radius);
  const to = Math.min(text.length, index + length + radius);
  return `${from > 0 ? '…' : ''}${text.slice(from, to).replace(/\s+/g, ' ')}${to < text.length ? '…' : ''}`;
}

/** A short request line (and body) for details.request. */
export function requestExcerpt(ex: HttpExchange): string {
  const { target } = splitUrl(ex.request.url);
  const line = `${ex.request.method} ${target}`;
  return clip(ex.request.body === undefined ? line : `${line}\n\n${ex.request.body}`, 600);
}

/** Status, a few telling headers and the part of the body that proves the finding. */
export function responseExcerpt(ex: HttpExchange, bodyPart?: string): string {
  const shown = ['content-type', 'location', 'server', 'x-powered-by', 'access-control-allow-origin', 'access-control-allow-credentials'];
  const headers = shown.filter((h) => ex.headers[h] !== undefined).map((h) => `${h}: ${ex.headers[h]}`);
  const head = [`HTTP ${ex.status}`, ...headers].join('\n');
  const body = bodyPart ?? clip(ex.body, 300);
  return `${head}\n\n${body}`.slice(0, 800);
}
