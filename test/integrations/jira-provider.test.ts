// The Jira Cloud connector against the Jira stand-in: OAuth 3LO (exchange, rotating refresh,
// identify moving the API base to the cloud id), API tokens over Basic, tickets from findings
// (create → find → close with comment and transition), webhook signatures and reading, and the
// error mapping (429, revoked token).
import { startWebhookSink } from '../support/providers/webhook-sink.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJiraConnector } from '../../api/integrations/jira/connector.ts';
import { jiraSignature } from '../../api/integrations/jira/webhooks.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderRequestError } from '../../api/integrations/providers/errors.ts';
import type { ProviderConnector, ProviderSession } from '../../api/integrations/providers/types.ts';
import { startJiraStandIn, type JiraStandIn } from '../support/providers/jira.ts';

let jira: JiraStandIn;
let connector: ProviderConnector;
const redirectUri = 'https://aegis.example/api/v1/integrations/oauth/jira/callback';

beforeAll(async () => {
  jira = await startJiraStandIn({ tokenLifetimeSeconds: 3600 });
  connector = createJiraConnector(jira.settings);
});
afterAll(async () => {
  expect(jira.rejected).toEqual([]);
  await jira.close();
});

async function authorizeCode(): Promise<string> {
  const oauth = connector.oauth!;
  const url = oauth.authorizeUrl({ state: 'st4te', redirectUri, codeChallenge: null });
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(location.searchParams.get('state')).toBe('st4te');
  return location.searchParams.get('code')!;
}

async function oauthSession(): Promise<ProviderSession> {
  const tokens = await connector.oauth!.exchangeCode({ code: await authorizeCode(), redirectUri, codeVerifier: null });
  // As the connect flow does: a fresh session on the default API base, then identify moves it.
  const fresh = connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} });
  const account = await connector.identify(fresh);
  return connector.oauthSession(tokens.accessToken, { apiBaseUrl: account.apiBaseUrl ?? null, metadata: account.metadata ?? {} });
}

function tokenSession(): ProviderSession {
  const { token, email } = jira.issueToken();
  return connector.tokenSession({ token, email, url: `${jira.url}/` }).session;
}

describe('Jira OAuth 2.0 (3LO)', () => {
  it('builds the documented authorize URL, without PKCE', () => {
    expect(connector.oauth?.pkce).toBe(false);
    const url = new URL(connector.oauth!.authorizeUrl({ state: 's', redirectUri, codeChallenge: null }));
    expect(url.pathname).toBe('/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      audience: 'api.atlassian.com',
      client_id: 'aegis-test-client',
      scope: 'read:jira-work write:jira-work read:jira-user offline_access',
      redirect_uri: redirectUri,
      state: 's',
      response_type: 'code',
      prompt: 'consent',
    });
    expect(connector.oauth?.revoke).toBeUndefined();
  });

  it('exchanges the code, identifies the site by cloud id and refreshes with rotation', async () => {
    const tokens = await connector.oauth!.exchangeCode({ code: await authorizeCode(), redirectUri, codeVerifier: null });
    expect(tokens.refreshToken).toBeTruthy();
    expect(tokens.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect(tokens.scopes).toContain('write:jira-work');

    const fresh = connector.oauthSession(tokens.accessToken, { apiBaseUrl: null, metadata: {} });
    expect(fresh.apiBaseUrl).toBe(jira.settings.apiUrl);
    const account = await connector.identify(fresh);
    expect(account).toMatchObject({
      id: jira.cloudId,
      name: 'aegis-test',
      apiBaseUrl: `${jira.settings.apiUrl}/ex/jira/${jira.cloudId}`,
      metadata: { cloud_id: jira.cloudId, site_url: jira.url },
    });

    const refreshed = await connector.oauth!.refresh!(tokens.refreshToken!);
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken);
    // The spent refresh token is refused: the grant is gone as far as that token goes.
    await expect(connector.oauth!.refresh!(tokens.refreshToken!)).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('refuses a code used twice or sent with another redirect URI', async () => {
    const code = await authorizeCode();
    await expect(connector.oauth!.exchangeCode({ code, redirectUri: 'https://elsewhere.example/cb', codeVerifier: null })).rejects.toBeInstanceOf(ProviderAuthError);
    await expect(connector.oauth!.exchangeCode({ code, redirectUri, codeVerifier: null })).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('has no OAuth flow without a client id', () => {
    expect(createJiraConnector({ ...jira.settings, clientId: undefined }).oauth).toBeNull();
  });
});

describe('Jira API tokens', () => {
  it('identifies with Basic e-mail:token against the site', async () => {
    const { token, email } = jira.issueToken();
    const { session, metadata } = connector.tokenSession({ token, email, url: jira.url });
    expect(session.authorization).toBe(`Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`);
    expect(metadata).toEqual({ email, url: jira.url, site_url: jira.url });
    const account = await connector.identify(session);
    expect(account).toMatchObject({ id: jira.url, name: 'Aegis Test Jira', metadata: { site_url: jira.url, account_id: jira.account.accountId } });
  });

  it('needs the e-mail and the site URL', () => {
    expect(() => connector.tokenSession({ token: 't', url: jira.url })).toThrow(ProviderRequestError);
    expect(() => connector.tokenSession({ token: 't', email: 'a@b.c' })).toThrow(/site URL/);
  });

  it('maps a revoked token to ProviderAuthError', async () => {
    const { token, email } = jira.issueToken();
    const { session } = connector.tokenSession({ token, email, url: jira.url });
    jira.revokeToken(token);
    await expect(connector.identify(session)).rejects.toBeInstanceOf(ProviderAuthError);
  });

  it('maps 429 to ProviderRateLimitError with Retry-After', async () => {
    const session = tokenSession();
    jira.failNext(1, 429, { 'retry-after': '7' });
    const err = await connector.identify(session).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderRateLimitError);
    expect((err as ProviderRateLimitError).retryAfterMs).toBe(7000);
  });
});

describe('Jira tickets', () => {
  const input = {
    project: 'SEC',
    title: 'SQL injection in orders endpoint',
    description: 'A query is built from user input.\nSee below.\n\n```ts\ndb.query(`SELECT * FROM t WHERE id = ${id}`)\n```\n\nFix: use parameters.',
    labels: ['security', 'high severity'],
    findingId: 'fnd_01ABC',
  };

  for (const mode of ['oauth', 'token'] as const) {
    it(`creates, finds and closes an issue (${mode})`, async () => {
      const session = mode === 'oauth' ? await oauthSession() : tokenSession();
      const tickets = connector.tickets!;
      const findingId = `${input.findingId}-${mode}`;
      const ticket = await tickets.createTicket(session, { ...input, findingId, assignee: jira.account.accountId });
      expect(ticket.key).toMatch(/^SEC-\d+$/);
      expect(ticket.url).toBe(`${jira.url}/browse/${ticket.key}`);
      const stored = jira.issues.get(ticket.externalId)!;
      expect(stored.labels).toEqual(['security', 'high-severity', `aegis-${findingId}`]);
      expect(stored.issuetype).toBe('Bug');
      expect(stored.assignee).toBe(jira.account.accountId);
      expect(stored.description).toMatchObject({ type: 'doc', version: 1 });
      expect((stored.description as { content: { type: string }[] }).content.map((n) => n.type)).toEqual(['paragraph', 'codeBlock', 'paragraph']);

      expect(await tickets.findTicket(session, 'SEC', findingId)).toEqual(ticket);
      expect(await tickets.findTicket(session, 'SEC', 'fnd_nothing')).toBeNull();

      await tickets.closeTicket(session, { externalId: ticket.externalId }, 'Fixed: the finding is gone from the latest scan.');
      expect(stored.status.name).toBe('Done');
      expect(stored.comments).toHaveLength(1);
      // Already done: only the comment.
      await tickets.closeTicket(session, { externalId: ticket.externalId }, 'Still fixed.');
      expect(stored.comments).toHaveLength(2);
      expect(stored.status.name).toBe('Done');
    });
  }

  it('reports an unknown project as a request error', async () => {
    await expect(connector.tickets!.createTicket(tokenSession(), { ...input, project: 'NOPE' })).rejects.toBeInstanceOf(ProviderRequestError);
  });
});

describe('Jira webhooks', () => {
  const secret = 'whsec-jira-test';

  it('verifies X-Hub-Signature over the raw body and reads status changes', async () => {
    const sink = await startWebhookSink();
    const { received } = sink;
    try {
      const session = tokenSession();
      const ticket = await connector.tickets!.createTicket(session, { project: 'SEC', title: 'XSS', description: 'x', labels: [], findingId: 'fnd_hook' });
      jira.setWebhook(sink.url, secret);
      expect(await jira.transitionIssue(ticket.key, 'Done')).toBe(200);
      expect(await jira.transitionIssue(ticket.key, 'To Do')).toBe(200);
      expect(received).toHaveLength(2);

      const [done, reopened] = received as [(typeof received)[number], (typeof received)[number]];
      const hooks = connector.webhooks;
      expect(hooks.verify(done.headers, done.raw, secret)).toBe(true);
      expect(hooks.verify(done.headers, done.raw, 'another-secret')).toBe(false);
      expect(hooks.verify(done.headers, Buffer.from(done.raw.toString().replace('Done', 'Dune')), secret)).toBe(false);
      expect(hooks.verify({ ...done.headers, 'x-hub-signature': undefined }, done.raw, secret)).toBe(false);
      expect(hooks.deliveryId(done.headers, null)).toBe(done.headers['x-atlassian-webhook-identifier']);

      expect(hooks.read(done.headers, JSON.parse(done.raw.toString()))).toEqual({ type: 'ticket', change: { externalId: ticket.externalId, state: 'closed' } });
      expect(hooks.read(reopened.headers, JSON.parse(reopened.raw.toString()))).toEqual({ type: 'ticket', change: { externalId: ticket.externalId, state: 'open' } });
    } finally {
      jira.setWebhook('http://127.0.0.1:9/unused', secret);
      await sink.close();
    }
  });

  it('ignores events that are not status changes', () => {
    const hooks = connector.webhooks;
    const body = { webhookEvent: 'jira:issue_updated', issue: { id: '1', fields: {} }, changelog: { items: [{ field: 'summary', fieldId: 'summary' }] } };
    expect(hooks.read({}, body)).toBeNull();
    expect(hooks.read({}, { webhookEvent: 'comment_created' })).toBeNull();
    const raw = Buffer.from(JSON.stringify(body));
    expect(hooks.verify({ 'x-hub-signature': jiraSignature(raw, secret) }, raw, secret)).toBe(true);
  });
});

describe('the Jira stand-in', () => {
  it("refuses what Jira would refuse with Jira's 400 shape", async () => {
    const { token, email } = jira.issueToken();
    const authorization = `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`;
    const create = (fields: Record<string, unknown>) =>
      fetch(`${jira.url}/rest/api/3/issue`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ fields }) });
    const base = { project: { key: 'SEC' }, summary: 's', issuetype: { name: 'Bug' } };
    const before = jira.rejected.length;
    const markdown = await create({ ...base, description: 'plain *markdown*' });
    expect(markdown.status).toBe(400);
    expect(await markdown.json()).toMatchObject({ errorMessages: [], errors: { description: expect.any(String) } });
    expect((await create({ ...base, labels: ['two words'] })).status).toBe(400);
    expect((await create({ ...base, description: { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: '' }] }] } })).status).toBe(400);
    expect((await create({ ...base, severity: 'high' })).status).toBe(400);
    expect((await create(base)).status).toBe(201);
    expect(jira.rejected.length - before).toBe(4);
    jira.rejected.splice(before);
  });
});
