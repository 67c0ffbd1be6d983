// What the load needs in the platform, made through the API as a user would: a site that collects
// the written ip rules, a site the gateway traffic goes to (with the rate-limit rule), and a webhook
// to the local receiver. Returns once the gateway enforces the rule.
import type { Limits } from './checks.ts';
import { http, sleep } from './http.ts';

export interface SetupInput {
  apiUrl: string;
  gatewayUrl: string;
  apiKey: string;
  originUrl: string;
  receiverUrl: string;
  loadHost: string;
  limits: Limits;
}

export interface SetupResult {
  writeSiteId: string;
  loadSiteId: string;
  webhookId: string;
}

async function create(input: SetupInput, path: string, body: unknown): Promise<string> {
  const res = await http(input.apiUrl + path, { method: 'POST', body, headers: { authorization: `Bearer ${input.apiKey}` }, timeoutMs: 15_000 });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body.slice(0, 400)}`);
  return (JSON.parse(res.body) as { id: string }).id;
}

export async function setUp(input: SetupInput): Promise<SetupResult> {
  const writeSiteId = await create(input, '/api/v1/shield/sites', { domain: 'writes.chaos.test', origin_url: input.originUrl, mode: 'block' });
  const loadSiteId = await create(input, '/api/v1/shield/sites', { domain: input.loadHost, origin_url: input.originUrl, mode: 'block' });
  await create(input, `/api/v1/shield/sites/${loadSiteId}/rate-limits`, {
    identity: 'header:X-Chaos-Client',
    url_pattern: '/limited/*',
    method: 'ANY',
    budget: input.limits.budget,
    window_seconds: input.limits.windowMs / 1000,
    action: 'block',
  });
  const webhookId = await create(input, '/api/v1/webhooks', { url: `${input.receiverUrl}/hook`, events: ['scan.*', 'api_key.*'] });
  // The gateway has the site and the rule once a warm-up client, over its budget, is refused.
  const deadline = Date.now() + 60_000;
  for (let n = 0; ; n++) {
    const res = await http(`${input.gatewayUrl}/limited/warm-${n}`, { headers: { host: input.loadHost, 'x-chaos-client': 'warm-up' }, timeoutMs: 5_000 });
    if (res.status === 429) break;
    if (Date.now() > deadline) throw new Error(`the gateway did not enforce the rate limit within 60 s (last status ${res.status})`);
    if (res.status !== 200) await sleep(100);
  }
  return { writeSiteId, loadSiteId, webhookId };
}

/**
 * A rule made through the API now, and how long until the gateway enforces it (null: not within
 * 30 s). Run after a PostgreSQL restart: the gateway must still follow configuration changes.
 */
export async function configPropagationMs(input: SetupInput, loadSiteId: string, tag: string): Promise<number | null> {
  const started = Date.now();
  await create(input, `/api/v1/shield/sites/${loadSiteId}/rate-limits`, { identity: 'header:X-Chaos-Client', url_pattern: `/${tag}/*`, method: 'ANY', budget: 1, window_seconds: 60, action: 'block' });
  for (let n = 0; Date.now() - started < 30_000; n++) {
    const res = await http(`${input.gatewayUrl}/${tag}/${n}`, { headers: { host: input.loadHost, 'x-chaos-client': tag }, timeoutMs: 5_000 });
    if (res.status === 429) return Date.now() - started;
    await sleep(50);
  }
  return null;
}
