// Requests to the Shield gateway as a client on the internet would send them: with the site's Host
// header and, through a trusted proxy hop, the client address in X-Forwarded-For.
import { request as undiciRequest } from 'undici';

export interface GatewayResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface GatewayRequest {
  host: string;
  method?: string;
  /** Client address, sent as X-Forwarded-For (the test gateway trusts loopback as a proxy). */
  from?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  json?: unknown;
}

export async function viaGateway(gatewayUrl: string, path: string, options: GatewayRequest): Promise<GatewayResponse> {
  const headers: Record<string, string> = { host: options.host, ...options.headers };
  if (options.from) headers['x-forwarded-for'] = options.from;
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await undiciRequest(gatewayUrl + path, { method: (options.method ?? 'GET') as 'GET', headers, body: body ?? null });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: <T>() => JSON.parse(text) as T };
}

/** Polls until `check` holds or `timeoutMs` passes; returns how long it took. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000, stepMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Test-server options for impact previews: the gateway listens, trusts loopback's X-Forwarded-For
 * (tests send as many clients), and keeps every request's values, so that even value-reading rules
 * are counted exactly.
 */
export const recordingGateway = (): { shieldEnabled: true; shieldPort: number; trustedProxies: string[]; shieldTrafficValueSampleRate: number } => ({
  shieldEnabled: true,
  shieldPort: 0,
  trustedProxies: ['127.0.0.1', '::1'],
  shieldTrafficValueSampleRate: 1,
});
