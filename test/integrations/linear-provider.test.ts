// The Linear connector against the Linear stand-in (which validates every GraphQL request against
// an SDL of Linear's schema): OAuth with PKCE and refresh tokens, personal API keys, identify,
// tickets from findings (create → find → close with comment and completed state), webhook
// signatures with replay protection, and the error mapping of GraphQL errors.
import { startWebhookSink } from '../support/providers/webhook-sink.ts';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLinearConnector } from '../../api/integrations/linear/connector.ts';
import { createLinearWebhooks, linearSignature } from '../../api/integrations/linear/webhooks.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError } from '../../api/integrations/providers/errors.ts';
import type { ProviderConnector, ProviderSession } from '../../api/integrations/providers/types.ts';
import { startLinearStandIn, type LinearStandIn } from '../support/providers/linear.ts';

let linear: LinearStandIn;
let connector: ProviderConnector;
const redirectUri = 'https://aegis.example/api/v1/integrations/oauth/linear/callback';

beforeAll(async () => {
  linear = await startLinearStandIn({ tokenLifetimeSeconds: 3600 });
  connector = createLinearConnector(linear.settings);
});
afterAll(async () => {
  expect(linear.rejected).toEqual([]);
  await linear.close();
});

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function authorizeCode(challenge: string | null): Promise<string> {
  const url = connector.oauth!.authorizeUrl({ state: 'st4te', redirectUri, codeChallenge: challenge });
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(location.searchParams.get('state')).toBe('st4te');
  return location.searchParams.get('code')!;
}

async function oauthSession(): Promise<{ session: ProviderSession; accessToken: string; refreshToken: string | null }> {
  const { verifier, challenge } = pkcePair();
  const tokens = await connector.oauth!.exchangeCode({ code: await authorizeCode(challenge), redirectUri, codeVerifier: verifier });
  return { session: connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} }), accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
}

const keySession = (): ProviderSession => connector.tokenSession({ token: linear.issueToken() }).session;

describe('Linear OAuth 2.0 with PKCE', () => {
  it('builds the documented authorize URL with an S256 challenge', () => {
    expect(connector.oauth?.pkce).toBe(true);
    const url = new URL(connector.oauth!.authorizeUrl({ state: 's', redirectUri, codeChallenge: 'abc' }));
    expect(url.pathname).toBe('/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'aegis-test-client',
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'read,write',
      state: 's',
      code_challenge: 'abc',
      code_challenge_method: 'S256',
    });
  });

  it('exchanges the code with the verifier, identifies, refreshes with rotation and revokes', async () => {
    const { session, accessToken, refreshToken } = await oauthSession();
    expect(session.authorization).toBe(`Bearer ${accessToken}`);
    expect(refreshToken).toBeTruthy();
    expect(await connector.identify(session)).toEqual({
      id: linear.organization.id,
      name: 'Aegis Test',
      metadata: { url_key: 'aegis-test', user: 'Aegis Bot' },
    });

    const refreshed = await connector.oauth!.refresh!(refreshToken!);
    expect(refreshed.scopes).toEqual(['read', 'write']);
    expect(refreshed.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect(refreshed.refreshToken).not.toBe(refreshToken);
    await expect(connector.oauth!.refresh!(refreshToken!)).rejects.toBeInstanceOf(ProviderAuthError);

    const fresh = connector.oauthSession(refreshed.accessToken, { apiBaseUrl: null, metadata: {} });
    await connector.identify(fresh);
    await connector.oauth!.revoke!({ accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken });
    await expect(connector.identify(fresh)).rejects.toBeInstanceOf(ProviderAuthError);
    await expect(connector.oauth!.refresh!(refreshed.refreshToken!)).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('refuses a wrong PKCE verifier', async () => {
    const { challenge } = pkcePair();
    const code = await authorizeCode(challenge);
    await expect(connector.oauth!.exchangeCode({ code, redirectUri, codeVerifier: pkcePair().verifier })).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('takes tokens without a refresh token (apps not on refresh tokens)', async () => {
    const legacy = await startLinearStandIn({ refreshTokens: false });
    try {
      const flow = createLinearConnector(legacy.settings).oauth!;
      const { verifier, challenge } = pkcePair();
      const response = await fetch(flow.authorizeUrl({ state: 's', redirectUri, codeChallenge: challenge }), { redirect: 'manual' });
      const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
      const tokens = await flow.exchangeCode({ code, redirectUri, codeVerifier: verifier });
      expect(tokens.refreshToken).toBeNull();
      expect(tokens.accessToken).toMatch(/^lin_oauth_/);
      expect(legacy.rejected).toEqual([]);
    } finally {
      await legacy.close();
    }
  });
});

describe('Linear API keys and errors', () => {
  it('sends a personal key as is and identifies with it', async () => {
    const key = linear.issueToken();
    const { session } = connector.tokenSession({ token: key });
    expect(session.authorization).toBe(key);
    expect((await connector.identify(session)).id).toBe(linear.organization.id);
  });

  it('maps a revoked key (AUTHENTICATION_ERROR) to ProviderAuthError', async () => {
    const key = linear.issueToken();
    linear.revokeToken(key);
    await expect(connector.identify(connector.tokenSession({ token: key }).session)).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('maps RATELIMITED to ProviderRateLimitError, waiting until the documented reset', async () => {
    const session = keySession();
    linear.failNext(1, 400, { 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(Date.now() + 5000) });
    const err = await connector.identify(session).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderRateLimitError);
    expect((err as ProviderRateLimitError).retryAfterMs).toBeGreaterThan(3000);
    expect((err as ProviderRateLimitError).retryAfterMs).toBeLessThanOrEqual(5000);

    linear.failNext(1, 429, { 'retry-after': '2' });
    const err429 = await connector.identify(session).catch((e: unknown) => e);
    expect(err429).toBeInstanceOf(ProviderRateLimitError);
    expect((err429 as ProviderRateLimitError).retryAfterMs).toBe(2000);
  });

  it('has no OAuth flow without a client id', () => {
    expect(createLinearConnector({ ...linear.settings, clientId: undefined }).oauth).toBeNull();
  });
});

describe('Linear tickets', () => {
  const input = {
    title: 'Hard-coded AWS key in config.ts',
    description: 'An access key is committed.\n\n```ts\nconst key = "AKIA…";\n```',
    labels: ['security', 'no-such-label'],
  };

  for (const mode of ['oauth', 'key'] as const) {
    it(`creates, finds and closes an issue (${mode}, team by ${mode === 'oauth' ? 'key' : 'id'})`, async () => {
      const session = mode === 'oauth' ? (await oauthSession()).session : keySession();
      const team = linear.teams[0]!;
      const project = mode === 'oauth' ? team.key : team.id;
      const findingId = `fnd_01${mode}`;
      const tickets = connector.tickets!;
      const ticket = await tickets.createTicket(session, { ...input, project, findingId, assignee: linear.viewer.id });
      expect(ticket.key).toMatch(/^ENG-\d+$/);
      expect(ticket.url).toBe(`${linear.url}/aegis-test/issue/${ticket.key}`);
      const stored = linear.issues.get(ticket.externalId)!;
      expect(stored.labelIds).toEqual([linear.labels.find((l) => l.name === 'security')!.id]);
      expect(stored.assigneeId).toBe(linear.viewer.id);
      expect(stored.description).toContain(`\`aegis-finding:${findingId}\``);

      expect(await tickets.findTicket(session, project, findingId)).toEqual(ticket);
      // A prefix of the id is another finding.
      expect(await tickets.findTicket(session, project, 'fnd_01')).toBeNull();

      await tickets.closeTicket(session, { externalId: ticket.externalId }, 'Fixed in the latest scan.');
      expect(linear.stateOf(ticket.key)).toBe('Done');
      expect(stored.comments).toEqual(['Fixed in the latest scan.']);
      await tickets.closeTicket(session, { externalId: ticket.externalId }, 'Still fixed.');
      expect(stored.comments).toHaveLength(2);
    });
  }

  it('reports an unknown team as a request error', async () => {
    await expect(connector.tickets!.createTicket(keySession(), { ...input, project: 'NOPE', findingId: 'f' })).rejects.toBeInstanceOf(ProviderRequestError);
    await expect(connector.tickets!.closeTicket(keySession(), { externalId: '00000000-0000-4000-8000-000000000000' }, 'x')).rejects.toBeInstanceOf(
      ProviderRequestError,
    );
  });
});

describe('Linear webhooks', () => {
  const secret = 'lin_wh_test_secret';

  it('verifies Linear-Signature and the timestamp, and reads state changes', async () => {
    const sink = await startWebhookSink();
    const { received } = sink;
    try {
      const ticket = await connector.tickets!.createTicket(keySession(), { project: 'ENG', title: 'XSS', description: 'x', labels: [], findingId: 'fnd_hook' });
      linear.setWebhook(sink.url, secret);
      expect(await linear.setIssueState(ticket.key, 'Done')).toBe(200);
      expect(await linear.setIssueState(ticket.key, 'Todo')).toBe(200);
      expect(await linear.setIssueState(ticket.key, 'Canceled', { webhookTimestamp: Date.now() - 120_000 })).toBe(200);
      const [done, reopened, stale] = received as [(typeof received)[number], (typeof received)[number], (typeof received)[number]];

      const hooks = connector.webhooks;
      expect(hooks.verify(done.headers, done.raw, secret)).toBe(true);
      expect(hooks.verify(done.headers, done.raw, 'wrong-secret')).toBe(false);
      expect(hooks.verify(done.headers, Buffer.from(done.raw.toString().replace('"Done"', '"Dome"')), secret)).toBe(false);
      expect(hooks.verify({ ...done.headers, 'linear-signature': 'zz' }, done.raw, secret)).toBe(false);
      // Correctly signed but more than a minute old: a replay.
      expect(hooks.verify(stale.headers, stale.raw, secret)).toBe(false);
      expect(hooks.deliveryId(done.headers, null)).toBe(done.headers['linear-delivery']);

      expect(hooks.read(done.headers, JSON.parse(done.raw.toString()))).toEqual({ type: 'ticket', change: { externalId: ticket.externalId, state: 'closed' } });
      expect(hooks.read(reopened.headers, JSON.parse(reopened.raw.toString()))).toEqual({ type: 'ticket', change: { externalId: ticket.externalId, state: 'open' } });
      expect(hooks.read(stale.headers, JSON.parse(stale.raw.toString()))).toEqual({ type: 'ticket', change: { externalId: ticket.externalId, state: 'closed' } });
    } finally {
      await sink.close();
    }
  });

  it('ignores other events and checks the window against its clock', () => {
    const hooks = connector.webhooks;
    expect(hooks.read({}, { type: 'Issue', action: 'update', data: { id: 'i', state: { type: 'completed' } }, updatedFrom: { title: 'old' } })).toBeNull();
    expect(hooks.read({}, { type: 'Comment', action: 'create', data: { id: 'c' } })).toBeNull();
    const raw = Buffer.from(JSON.stringify({ type: 'Issue', webhookTimestamp: 1_000_000 }));
    const at = (now: number) => createLinearWebhooks(() => now).verify({ 'linear-signature': linearSignature(raw, secret) }, raw, secret);
    expect(at(1_000_000 + 59_000)).toBe(true);
    expect(at(1_000_000 + 61_000)).toBe(false);
  });
});

describe('the Linear stand-in', () => {
  it('refuses what Linear would refuse: an unknown field, a wrong argument, a Bearer-prefixed API key', async () => {
    const key = linear.issueToken();
    const ask = (authorization: string, query: string, variables: Record<string, unknown> = {}) =>
      fetch(`${linear.url}/graphql`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const before = linear.rejected.length;
    const unknownField = await ask(key, '{ viewer { id nickname } }');
    expect(unknownField.status).toBe(400);
    expect(((await unknownField.json()) as { errors: { message: string }[] }).errors[0]!.message).toMatch(/nickname/);
    expect((await ask(key, '{ issues(filter: { title: { eq: "x" } }) { nodes { id } } }')).status).toBe(400);
    expect((await ask(key, 'query ($id: Int!) { issue(id: $id) { id } }', { id: 1 })).status).toBe(400);
    expect((await ask(`Bearer ${key}`, '{ viewer { id } }')).status).toBe(400);
    expect(linear.rejected.length - before).toBe(4);
    // A key in the wrong form is refused as Linear refuses an unknown credential.
    await expect(connector.identify({ ...connector.tokenSession({ token: key }).session, apiBaseUrl: linear.url, authorization: `Bearer ${key}` })).rejects.toBeInstanceOf(ProviderAuthError);
    linear.rejected.splice(before);
  });
});
