// The load the faults land on, recorded request by request:
//   - writes: ip-access rules and API keys through both API processes, each with an Idempotency-Key
//     and retried with that same key until acknowledged (as a careful client does);
//   - scans: secrets scans of a local git repository (jobs; their events feed the webhook);
//   - gateway: pages through the Shield gateway, and one client that spends a rate limit.
import { Agent } from 'node:http';
import { http, sleep, type HttpResult } from './http.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';

export type Stream = 'write' | 'scan' | 'gateway' | 'limited';

/** One request as the load saw it. */
export interface Sample {
  stream: Stream;
  /** Which process it went to (api-1, api-2, shield). */
  target: string;
  start: number;
  end: number;
  status: number;
}

export interface Write {
  key: string;
  kind: 'ip_rule' | 'api_key';
  /** The rule's address or the key's name: how the check finds it. */
  value: string;
  acknowledged: boolean;
  /** A 4xx that retrying cannot fix (a bug in the load or the API). */
  rejected?: string;
  attempts: number;
}

export interface LoadSetup {
  apis: { name: string; url: string }[];
  gatewayUrl: string;
  apiKey: string;
  writeSiteId: string;
  loadHost: string;
  repo: string;
  seed: number;
  /** Writers running at once, pause between a writer's writes, pause between scans, gateway clients. */
  writers: number;
  writePauseMs: number;
  scanPauseMs: number;
  gatewayClients: number;
  /** Requests per second of the rate-limited client. */
  limitedRate: number;
}

const ok = (status: number) => status >= 200 && status < 300;
/** Worth retrying with the same key: no answer, a server error, or the same key still in flight (409). */
const retryable = (r: HttpResult) => r.status === 0 || r.status >= 500 || r.status === 409 || r.status === 429;

export class Load {
  readonly samples: Sample[] = [];
  readonly writes: Write[] = [];
  readonly scanIds = new Set<string>();
  /** Scans whose creation was never acknowledged (kept to explain a count, not checked). */
  scanAttemptsUnacknowledged = 0;
  #running = false;
  #loops: Promise<void>[] = [];
  #seq = 0;
  readonly #random: () => number;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(private readonly setup: LoadSetup) {
    this.#random = seededRandom(setup.seed);
  }

  start(): void {
    this.#running = true;
    for (let i = 0; i < this.setup.writers; i++) this.#loops.push(this.#writer());
    this.#loops.push(this.#scanner());
    for (let i = 0; i < this.setup.gatewayClients; i++) this.#loops.push(this.#gatewayClient(i));
    this.#loops.push(this.#limitedClient());
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    this.#loops = [];
    this.#agent.destroy();
  }

  /** An API call, recorded; the API is chosen by the seeded generator unless `api` says which. */
  async #api(stream: Stream, method: string, path: string, body: unknown, idempotencyKey: string, api: number): Promise<HttpResult> {
    const target = this.setup.apis[api % this.setup.apis.length]!;
    const start = Date.now();
    const result = await http(target.url + path, {
      method,
      body,
      headers: { authorization: `Bearer ${this.setup.apiKey}`, 'idempotency-key': idempotencyKey },
      timeoutMs: 10_000,
    });
    this.samples.push({ stream, target: target.name, start, end: Date.now(), status: result.status });
    return result;
  }

  /** Sends until acknowledged (2xx), refused for good (other 4xx) or the load stops and the deadline passes. */
  async #untilAcknowledged(stream: Stream, path: string, body: unknown, key: string): Promise<{ result: HttpResult; attempts: number }> {
    let api = Math.floor(this.#random() * this.setup.apis.length);
    let attempts = 0;
    let pause = 100;
    const deadline = Date.now() + 120_000;
    for (;;) {
      attempts++;
      const result = await this.#api(stream, 'POST', path, body, key, api);
      if (!retryable(result) || Date.now() > deadline) return { result, attempts };
      // The other API process next: a client with two addresses fails over.
      api++;
      await sleep(pause);
      pause = Math.min(pause * 2, 1_000);
    }
  }

  async #writer(): Promise<void> {
    while (this.#running) {
      const n = ++this.#seq;
      const key = `chaos-${this.setup.seed}-${n}`;
      const asKey = this.#random() < 0.3;
      const value = asKey ? `chaos-key-${this.setup.seed}-${n}` : `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
      const write: Write = { key, kind: asKey ? 'api_key' : 'ip_rule', value, acknowledged: false, attempts: 0 };
      this.writes.push(write);
      const { result, attempts } = asKey
        ? await this.#untilAcknowledged('write', '/api/v1/api-keys', { name: value, scopes: ['scans:read'] }, key)
        : await this.#untilAcknowledged('write', `/api/v1/shield/sites/${this.setup.writeSiteId}/ip-access`, { type: 'ip', value, action: 'deny' }, key);
      write.attempts = attempts;
      write.acknowledged = ok(result.status);
      if (!write.acknowledged && !retryable(result)) write.rejected = `${result.status} ${result.body.slice(0, 200)}`;
      await sleep(this.setup.writePauseMs);
    }
  }

  async #scanner(): Promise<void> {
    let n = 0;
    while (this.#running) {
      await this.scanOnce(`scan-${this.setup.seed}-${++n}`);
      await sleep(this.setup.scanPauseMs);
    }
  }

  /** Starts one secrets scan (retried with its key until acknowledged); returns its id. */
  async scanOnce(key: string): Promise<string | undefined> {
    const { result } = await this.#untilAcknowledged('scan', '/api/v1/secrets/scans', { target: `file://${this.setup.repo}` }, key);
    if (!ok(result.status)) {
      this.scanAttemptsUnacknowledged++;
      return undefined;
    }
    const id = (JSON.parse(result.body) as { id: string }).id;
    this.scanIds.add(id);
    return id;
  }

  async #gatewayClient(i: number): Promise<void> {
    let n = 0;
    while (this.#running) {
      await this.gatewayRequest('gateway', `/page/${i}/${++n}`, `client-${i}`);
      await sleep(20);
    }
  }

  /** One request through the gateway on the load site, recorded under `stream`. */
  async gatewayRequest(stream: Stream, path: string, client: string): Promise<number> {
    const start = Date.now();
    const result = await http(this.setup.gatewayUrl + path, { headers: { host: this.setup.loadHost, 'x-chaos-client': client }, agent: this.#agent, timeoutMs: 10_000 });
    this.samples.push({ stream, target: 'shield', start, end: Date.now(), status: result.status });
    return result.status;
  }

  /** One client at a fixed pace on the rate-limited path: its 200s are what the budget check counts. */
  async #limitedClient(): Promise<void> {
    const every = 1_000 / this.setup.limitedRate;
    let next = Date.now();
    let n = 0;
    const pending = new Set<Promise<number>>();
    while (this.#running) {
      // Not awaited one by one: a slow answer (Redis down) must not slow the pace the budget is checked against.
      const sent = this.gatewayRequest('limited', `/limited/${++n}`, 'limited-client');
      pending.add(sent);
      void sent.then(() => pending.delete(sent));
      next += every;
      await sleep(Math.max(0, next - Date.now()));
    }
    await Promise.all(pending);
  }
}

