// One HTTP request with a deadline, over node:http (so the gateway traffic can carry its own Host
// header), and a deterministic random source for the load.
import { Agent, request } from 'node:http';

export interface HttpResult {
  /** The response status, or 0 when no response came (refused, reset, timed out). */
  status: number;
  body: string;
  ms: number;
  error?: string;
}

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs?: number;
  agent?: Agent;
}

export function http(url: string, options: HttpOptions = {}): Promise<HttpResult> {
  const started = Date.now();
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<HttpResult, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, ms: Date.now() - started });
    };
    const req = request(url, { method: options.method ?? 'GET', headers, agent: options.agent, timeout: options.timeoutMs ?? 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => finish({ status: 0, body: '', error: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => finish({ status: 0, body: '', error: err.message }));
    req.end(payload);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
