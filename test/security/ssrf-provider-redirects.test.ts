// Finding 2, as the attack: a provider endpoint answers with a redirect to an internal address, and
// the connection metadata comes back with what the internal service said. Provider base URLs are
// checked when saved, but the calls made with them went through the global fetch and the SDKs' own,
// which follow any redirect. Now every provider call goes through the outbound policy's fetch:
// redirects are followed hop by hop, each hop's connection judged by the tenant rule.
//
//   - On a real server with default settings: the OpenAI-compatible and Anthropic endpoints the
//     operator configured (reachable: they are operator endpoints) redirect the key check to
//     127.0.0.2, the "internal service". The connection must fail, say why, and the internal
//     service must never see a connection — where before it was created with the internal data.
//   - The real connectors and fetch, built with a refusal predicate that treats 127.0.0.2 as
//     internal and allows 127.0.0.1 (no config seam): a Jira site, a self-managed GitLab and an
//     OpenAI-compatible base URL an admin gave, each redirecting to 127.0.0.2 — refused on that hop.
//   - The fetch's redirect rules: a hop limit, no other schemes, credentials kept from other
//     origins, a DNS answer that changes to an internal address (real DNS server) refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitlabConnector } from '../../api/integrations/gitlab/connector.ts';
import { createJiraConnector } from '../../api/integrations/jira/connector.ts';
import { createOpenAiConnector } from '../../api/integrations/openai/connector.ts';
import { ProviderError } from '../../api/integrations/providers/errors.ts';
import { loadProviderSettings, type ProviderSettings } from '../../api/integrations/providers/settings.ts';
import { dnsServersResolver } from '../../platform/net/guarded-lookup.ts';
import { everywhere, outboundFetch, RefusedAddressError, RefusedRedirectError, tenantRefusal, type AddressRule, type OutboundPolicy } from '../../platform/net/outbound.ts';
import { startDnsServer } from '../support/dns-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { INTERNAL_SECRET, startTripwire, type Tripwire } from '../support/tripwire.ts';

/** Answers every request with a redirect to `target` + the same path. */
const redirectingTo = (target: () => string, status = 302) => startTripwire('127.0.0.1', (req, res) => res.writeHead(status, { location: `${target()}${req.url}` }).end());

const settingsAt = (url: string): ProviderSettings => ({ clientId: undefined, clientSecret: undefined, webUrl: url, apiUrl: url });

describe('provider calls that are redirected to an internal address (a server on default settings)', () => {
  let internal: Tripwire;
  let redirector: Tripwire;
  let t: TestServer;

  beforeAll(async () => {
    internal = await startTripwire('127.0.0.2');
    redirector = await redirectingTo(() => internal.url);
    t = await startTestServer({
      rateLimitPerMinute: 100_000,
      providers: { ...loadProviderSettings({}), openai: settingsAt(`${redirector.url}/v1`), anthropic: settingsAt(redirector.url) },
    });
  });
  afterAll(async () => {
    await Promise.all([t?.close(), internal?.close(), redirector?.close()]);
  });

  it.each(['openai', 'anthropic'])('%s: the key check is refused on the redirect; nothing internal comes back', async (provider) => {
    const before = redirector.requests.length;
    const res = await t.call('POST', `/api/v1/integrations/${provider}/connect`, { body: { token: 'sk-test-key-0000' } });
    expect(res.text).not.toContain(INTERNAL_SECRET);
    expect(res.status, res.text).toBe(502);
    expect(res.body.error.message).toMatch(/127\.0\.0\.2: 127\.0\.0\.2 is a private, loopback, link-local or reserved address \(set AEGIS_ALLOW_PRIVATE_TARGETS=true to allow\)/);
    expect(redirector.requests.slice(before).some((r) => r.startsWith('GET /v1/models'))).toBe(true);
    expect(internal.connections).toBe(0);
    expect((await t.call('GET', `/api/v1/integrations?provider=${provider}`)).body.data).toEqual([]);
  });
});

describe('the connectors and their fetch under a policy that holds 127.0.0.2 internal', () => {
  let internal: Tripwire;
  let redirector: Tripwire;
  /** The tenant rule with one difference: 127.0.0.1 is where "public" services live on this machine. */
  const onlyLoopbackTwoIsInternal: AddressRule = {
    trust: 'tenant',
    refuse: (address) => (address === '127.0.0.2' ? `${address} is a private, loopback, link-local or reserved address` : null),
    resolve: (hostname, options, callback) => callback(null, [{ address: hostname, family: 4 }]),
    refusal: tenantRefusal,
  };
  const policy: OutboundPolicy = everywhere(onlyLoopbackTwoIsInternal);

  beforeAll(async () => {
    internal = await startTripwire('127.0.0.2');
    redirector = await redirectingTo(() => internal.url);
  });
  afterAll(async () => {
    await Promise.all([internal?.close(), redirector?.close()]);
  });

  it('follows a redirect between allowed addresses, and refuses the hop to an internal one', async () => {
    const fetcher = outboundFetch(policy, { redirects: { follow: 5 } });
    const direct = await fetcher(`${redirector.url}/x`, { redirect: 'manual' });
    expect(direct.status).toBe(302);
    await expect(fetcher(`${redirector.url}/x`)).rejects.toThrow(RefusedAddressError);
    await expect(fetcher(internal.url)).rejects.toThrow(/127\.0\.0\.2: 127\.0\.0\.2 is a private/);
    expect(internal.connections).toBe(0);
  });

  it('a Jira site an admin gave: identify is refused on the redirect', async () => {
    const jira = createJiraConnector(settingsAt('https://auth.atlassian.invalid'), policy);
    const { session } = jira.tokenSession({ token: 'api-token', email: 'a@example.com', url: redirector.url });
    const failure = await jira.identify(session).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as Error).message).toMatch(/127\.0\.0\.2: 127\.0\.0\.2 is a private/);
    expect(internal.connections).toBe(0);
  });

  it('a self-managed GitLab: its calls refuse redirects outright', async () => {
    const gitlab = createGitlabConnector(settingsAt('https://gitlab.invalid'), policy);
    const { session } = gitlab.tokenSession({ token: 'glpat-x', url: redirector.url });
    await expect(gitlab.identify(session)).rejects.toThrow(ProviderError);
    expect(internal.connections).toBe(0);
  });

  it('an OpenAI-compatible base URL: the SDK is given the policy\'s fetch', async () => {
    const openai = createOpenAiConnector(settingsAt('https://api.openai.invalid/v1'), policy);
    const { session } = openai.tokenSession({ token: 'sk-test-key-0000', url: `${redirector.url}/v1` });
    await expect(openai.identify(session)).rejects.toThrow(/127\.0\.0\.2: 127\.0\.0\.2 is a private/);
    expect(internal.connections).toBe(0);
  });
});

describe('the outbound fetch\'s redirect rules', () => {
  const everyAddress = everywhere({ trust: 'tenant', refuse: () => null, resolve: (hostname, _options, callback) => callback(null, [{ address: hostname === 'localhost' ? '127.0.0.1' : hostname, family: 4 }]), refusal: tenantRefusal });

  it('keeps credentials from another origin, keeps them on the same one, and stops after the hop limit', async () => {
    const seen: Record<string, string | undefined>[] = [];
    const other = await startTripwire('127.0.0.1', (req, res) => {
      seen.push({ authorization: req.headers.authorization, 'x-api-key': req.headers['x-api-key'] as string | undefined, accept: req.headers.accept });
      res.writeHead(200).end('ok');
    });
    const same = await startTripwire('127.0.0.1', (req, res) => {
      if (req.url === '/start') res.writeHead(301, { location: '/moved' }).end();
      else if (req.url === '/moved') res.writeHead(307, { location: `${other.url}/elsewhere` }).end();
      else res.writeHead(302, { location: req.url! + '/' }).end();
    });
    try {
      const fetcher = outboundFetch(everyAddress, { redirects: { follow: 5 } });
      const res = await fetcher(`${same.url}/start`, { headers: { authorization: 'Bearer secret', 'x-api-key': 'sk-secret', accept: 'application/json' } });
      expect(await res.text()).toBe('ok');
      expect(res.redirected).toBe(true);
      expect(res.url).toBe(`${other.url}/elsewhere`);
      expect(seen).toEqual([{ authorization: undefined, 'x-api-key': undefined, accept: 'application/json' }]);
      expect(same.requests).toEqual(['GET /start', 'GET /moved']);
      await expect(fetcher(`${same.url}/loop`)).rejects.toThrow(new RefusedRedirectError(`${same.url} redirected more than 5 times`));
      await expect(outboundFetch(everyAddress, { redirects: 'refuse' })(`${same.url}/start`)).resolves.toMatchObject({ status: 301 });
    } finally {
      await Promise.all([other.close(), same.close()]);
    }
  });

  it('does not follow a redirect to another scheme', async () => {
    const ftp = await startTripwire('127.0.0.1', (_req, res) => res.writeHead(302, { location: 'ftp://127.0.0.1/x' }).end());
    try {
      await expect(outboundFetch(everyAddress, { redirects: { follow: 5 } })(ftp.url)).rejects.toThrow(/redirected to a ftp: URL, which is not followed/);
    } finally {
      await ftp.close();
    }
  });

  it('judges the address of every new connection: a DNS answer changed to an internal address is refused (real DNS server)', async () => {
    const dns = await startDnsServer();
    const service = await startTripwire('127.0.0.1', (_req, res) => res.writeHead(200, { connection: 'close' }).end('public'));
    const internal = await startTripwire('127.0.0.2');
    try {
      // The name first answers the service's address, then the internal one's: the second request
      // opens a new connection, whose address is judged again and refused before any packet.
      const rule: AddressRule = { trust: 'tenant', refuse: (a) => (a === '127.0.0.2' ? `${a} is a private, loopback, link-local or reserved address` : null), resolve: dnsServersResolver([dns.server]), refusal: tenantRefusal };
      const fetcher = outboundFetch(everywhere(rule), { redirects: 'refuse' });
      dns.set('api.rebind.test', ['127.0.0.1']);
      expect(await (await fetcher(`http://api.rebind.test:${service.port}/`)).text()).toBe('public');
      dns.set('api.rebind.test', ['127.0.0.2']);
      await expect(fetcher(`http://api.rebind.test:${internal.port}/`)).rejects.toThrow(/api\.rebind\.test: 127\.0\.0\.2 is a private.*AEGIS_ALLOW_PRIVATE_TARGETS/);
      expect(internal.connections).toBe(0);
      expect(dns.queries.filter((q) => q === 'A api.rebind.test').length).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.all([dns.close(), service.close(), internal.close()]);
    }
  });
});
