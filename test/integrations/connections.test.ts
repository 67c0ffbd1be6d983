// Provider connections end to end against the local GitHub stand-in: the OAuth round trip (state,
// PKCE, sealed tokens, refresh before expiry, revocation of this connection's token on disconnect —
// another connection of the same GitHub user keeps working), GitLab pasted tokens revoked on
// disconnect where they can revoke themselves, pasted tokens validated
// against the provider, a private repository scanned through a connection, and a refused token
// turning the connection to `error` with an `integration.error` event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';
import { startGitlabStandIn, type GitlabStandIn } from '../support/providers/gitlab.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { joinDefaultOrganization } from '../support/people.ts';
import { SESSION_COOKIE } from '../support/sessions.ts';

let github: GithubStandIn;
let gitlab: GitlabStandIn;
let t: TestServer;
/** A signed-in admin of the default organisation: OAuth connections started with its key complete in such a browser. */
let adminCookie: string;
const asAdmin = () => ({ cookie: `${SESSION_COOKIE}=${adminCookie}` });

beforeAll(async () => {
  // Tokens live 2 minutes: inside the 5-minute margin, so every use refreshes first.
  github = await startGithubStandIn({ tokenLifetimeSeconds: 120 });
  gitlab = await startGitlabStandIn();
  t = await startTestServer({ providers: { ...loadProviderSettings({}), github: github.settings, gitlab: gitlab.settings }, allowPrivateTargets: true, rateLimitPerMinute: 10_000 });
  adminCookie = await joinDefaultOrganization(t, 'admin@acme.example', 'admin');
  await github.createRepository('acme', 'payments', { 'config.js': `const key = "AKIA${'Q'.repeat(4)}7MXRWZ2ELXGA";\nmodule.exports = { key };\n` }, { private: true });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await github?.close();
  await gitlab?.close();
});

const eventually = async <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
};

const finished = (id: string) =>
  eventually(
    () => t.call('GET', `/api/v1/scans/${id}`),
    (r) => ['completed', 'failed'].includes(r.body.status),
  );

/** The metadata of the `integration.disconnected` audit entry of connection `id`. */
const disconnectAudit = async (id: string) =>
  (await t.server.database.db.selectFrom('audit_events').select('metadata').where('action', '=', 'integration.disconnected').where('target_id', '=', id).executeTakeFirstOrThrow()).metadata as Record<string, unknown>;

const storedRow = (id: string) => t.server.database.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Follows the stand-in's authorize page (it approves at once) to the callback URL it redirects to. */
async function authorize(authorizeUrl: string): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

async function connectWithOAuth(): Promise<string> {
  const started = await t.call('POST', '/api/v1/integrations/github/connect', { body: {} });
  expect(started.status).toBe(201);
  const callback = await authorize(started.body.authorize_url);
  const done = await fetch(callback, { redirect: 'manual', headers: asAdmin() });
  expect(done.status).toBe(303);
  return started.body.integration.id;
}

describe('provider connections', () => {
  it('connects through OAuth with state and PKCE, seals the tokens, refreshes before expiry and revokes on disconnect', async () => {
    const started = await t.call('POST', '/api/v1/integrations/github/connect', { body: {} });
    expect(started.status).toBe(201);
    expect(started.body.integration).toMatchObject({ provider: 'github', kind: 'source_control', status: 'pending', auth_type: 'oauth' });
    const authorizeUrl = new URL(started.body.authorize_url);
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${github.url}/login/oauth/authorize`);
    expect(authorizeUrl.searchParams.get('state')).toBe(started.body.state);
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(`${t.url}/api/v1/integrations/oauth/github/callback`);

    const callback = await authorize(started.body.authorize_url);
    expect(callback.searchParams.get('state')).toBe(started.body.state);

    // A state that was never issued, or a code with another state, is refused and completes nothing.
    const forged = new URL(callback);
    forged.searchParams.set('state', 'x'.repeat(43));
    expect((await fetch(forged, { redirect: 'manual', headers: asAdmin() })).status).toBe(401);
    expect((await storedRow(started.body.integration.id)).status).toBe('pending');

    // A flow started with a key completes only in the browser of a signed-in admin of its organisation.
    expect((await fetch(callback, { redirect: 'manual' })).status).toBe(401);
    const done = await fetch(callback, { redirect: 'manual', headers: asAdmin() });
    expect(done.status).toBe(303);
    // The state is single use.
    expect((await fetch(callback, { redirect: 'manual', headers: asAdmin() })).status).toBe(401);

    const id: string = started.body.integration.id;
    const shown = await t.call('GET', `/api/v1/integrations/${id}`);
    expect(shown.body).toMatchObject({ id, status: 'active', account: expect.any(String), auth_type: 'oauth', webhook_url: `${t.url}/api/v1/webhooks/github?integration=${id}` });
    expect(shown.body.token_expires_at).not.toBeNull();

    // Sealed at rest: no token the stand-in issued appears in the row, the answer or the list.
    const row = await storedRow(id);
    const issued = github.issuedTokens();
    expect(issued.length).toBeGreaterThan(0);
    const rowText = JSON.stringify(row);
    const listText = (await t.call('GET', '/api/v1/integrations')).text;
    for (const token of issued) {
      expect(rowText).not.toContain(token);
      expect(listText).not.toContain(token);
      expect(shown.text).not.toContain(token);
      expect(t.logs.join('\n')).not.toContain(token);
    }
    expect(row.access_token_sealed).toMatch(/^v1\./);
    expect(row.refresh_token_sealed).toMatch(/^v1\./);

    // A scan through the connection: the token expires within the margin, so Aegis refreshes first.
    const refreshesBefore = github.refreshCount();
    const scan = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${github.url}/acme/payments.git`, connection: id } });
    expect(scan.status).toBe(202);
    expect(scan.body.source).not.toHaveProperty('sealed_url');
    const result = await finished(scan.body.id);
    expect(result.body.status, result.body.error).toBe('completed');
    expect(github.refreshCount()).toBeGreaterThan(refreshesBefore);
    const refreshed = await storedRow(id);
    expect(refreshed.access_token_sealed).not.toBe(row.access_token_sealed);
    expect(refreshed.token_expires_at!.getTime()).toBeGreaterThan(row.token_expires_at!.getTime());

    // The same GitHub user connects again (another connection: another team's settings, say).
    const current = github.issuedTokens();
    const otherId = await connectWithOAuth();

    // Disconnect revokes this connection's token at the provider (not the user's grant), then deletes.
    const deleted = await t.call('DELETE', `/api/v1/integrations/${id}`);
    expect(deleted.status).toBe(204);
    expect(github.revokedGrants()).toEqual([]);
    expect(github.revokedTokens()).toHaveLength(1);
    expect(current).toContain(github.revokedTokens()[0]);
    expect(github.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([`/applications/${github.settings.clientId}/token`]);
    for (const token of current) expect(await github.tokenWorks(token)).toBe(false);
    expect((await t.call('GET', `/api/v1/integrations/${id}`)).status).toBe(404);
    expect(await disconnectAudit(id)).toMatchObject({ provider: 'github', revoked: true });

    // The other connection of the same user still works: it refreshes and clones.
    const otherScan = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${github.url}/acme/payments.git`, connection: otherId } });
    expect(otherScan.status).toBe(202);
    const otherResult = await finished(otherScan.body.id);
    expect(otherResult.body.status, otherResult.body.error).toBe('completed');
    expect((await t.call('GET', `/api/v1/integrations/${otherId}`)).body).toMatchObject({ status: 'active', error: null });
    expect((await t.call('DELETE', `/api/v1/integrations/${otherId}`)).status).toBe(204);

    const events = await t.call('GET', '/api/v1/events?type=integration.connected,integration.disconnected');
    expect(events.body.data.map((e: { type: string; data: { object: { id: string } } }) => [e.type, e.data.object.id])).toEqual(
      expect.arrayContaining([
        ['integration.connected', id],
        ['integration.disconnected', id],
      ]),
    );
  });

  it('validates a pasted token against the provider before saving it', async () => {
    const refused = await t.call('POST', '/api/v1/integrations/github/connect', { body: { token: 'ghp_not_a_token_the_provider_knows' } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toMatch(/github refused the credential/);

    const token = github.issueToken('octo-admin');
    const created = await t.call('POST', '/api/v1/integrations/github/connect', { body: { token } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', auth_type: 'token', account: 'octo-admin', token_expires_at: null });
    expect(created.body.webhook).toEqual({ url: `${t.url}/api/v1/webhooks/github?integration=${created.body.id}`, secret: expect.stringMatching(/^iwhsec_/) });
    expect(created.text).not.toContain(token);

    // A new webhook secret is shown once.
    const rotated = await t.call('POST', `/api/v1/integrations/${created.body.id}/webhook-secret`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.secret).not.toBe(created.body.webhook.secret);

    const patched = await t.call('PATCH', `/api/v1/integrations/${created.body.id}`, { body: { settings: { pull_requests: { enabled: true, scan_types: ['secrets'], fail_on: 'critical' } } } });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toEqual({ pull_requests: { enabled: true, scan_types: ['secrets'], fail_on: 'critical' } });
  });

  it('revokes a pasted GitLab personal access token on disconnect, and records a token that cannot revoke itself', async () => {
    const token = gitlab.issueToken();
    const created = await t.call('POST', '/api/v1/integrations/gitlab/connect', { body: { token } });
    expect(created.status, created.text).toBe(201);
    expect((await t.call('DELETE', `/api/v1/integrations/${created.body.id}`)).status).toBe(204);
    expect(gitlab.revokedTokens()).toEqual([token]);
    expect(gitlab.tokenWorks(token)).toBe(false);
    expect(await disconnectAudit(created.body.id)).toMatchObject({ provider: 'gitlab', revoked: true });

    // A project access token is refused self-revocation (as GitLab before 15.0 has no endpoint for
    // it): the connection is deleted all the same, and the audit entry says the token lives on.
    const projectToken = gitlab.issueToken({ type: 'project' });
    const project = await t.call('POST', '/api/v1/integrations/gitlab/connect', { body: { token: projectToken } });
    expect(project.status, project.text).toBe(201);
    expect((await t.call('DELETE', `/api/v1/integrations/${project.body.id}`)).status).toBe(204);
    expect((await t.call('GET', `/api/v1/integrations/${project.body.id}`)).status).toBe(404);
    expect(gitlab.tokenWorks(projectToken)).toBe(true);
    const audit = await disconnectAudit(project.body.id);
    expect(audit).toMatchObject({ provider: 'gitlab', revoked: false, revoke_reason: expect.stringMatching(/^gitlab answered 403.*revoke it in GitLab$/) });
    expect(audit).not.toHaveProperty('revoke_error');
    expect(JSON.stringify(audit)).not.toContain(projectToken);
    expect(gitlab.rejected).toEqual([]);
  });

  it('needs the admin scope, and keeps organisations apart', async () => {
    const member = await keyInOrganization(t, 'default', ['scans:write', 'vulnerabilities:write']);
    expect((await t.call('GET', '/api/v1/integrations', { key: member })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/integrations/github/connect', { key: member, body: { token: 'x' } })).status).toBe(403);

    const id = (await t.call('POST', '/api/v1/integrations/github/connect', { body: { token: github.issueToken('octo-other') } })).body.id;
    const otherAdmin = await keyInOrganization(t, 'other-org', ['admin']);
    expect((await t.call('GET', `/api/v1/integrations/${id}`, { key: otherAdmin })).status).toBe(404);
    expect((await t.call('DELETE', `/api/v1/integrations/${id}`, { key: otherAdmin })).status).toBe(404);
    // Another organisation cannot clone through it either.
    const scan = await t.call('POST', '/api/v1/secrets/scans', { key: otherAdmin, body: { target: `${github.url}/acme/payments.git`, connection: id } });
    expect(scan.status).toBe(422);
  });

  it('clones a private repository through a connection, only on the provider’s own host', async () => {
    const id = (await t.call('POST', '/api/v1/integrations/github/connect', { body: { token: github.issueToken('octo-scan') } })).body.id;

    const scan = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${github.url}/acme/payments.git`, connection: id } });
    expect(scan.status).toBe(202);
    const result = await finished(scan.body.id);
    expect(result.body.status, result.body.error).toBe('completed');
    const findings = await t.call('GET', `/api/v1/vulnerabilities?scan_id=${scan.body.id}`);
    expect(findings.body.data.map((f: { rule_id: string }) => f.rule_id)).toContain('aws-access-key-id');

    // Without the connection, the private repository cannot be cloned.
    const anonymous = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${github.url}/acme/payments.git` } });
    expect((await finished(anonymous.body.id)).body.status).toBe('failed');

    // The organisation's token never goes to a host the connection is not for, nor with a URL that carries its own credentials.
    const elsewhere = await t.call('POST', '/api/v1/secrets/scans', { body: { target: 'https://git.example.net/acme/payments.git', connection: id } });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.error.details.fields).toEqual([{ field: 'connection', message: expect.stringMatching(/clones only from/) }]);
    const withUser = new URL(`${github.url}/acme/payments.git`);
    withUser.username = 'someone';
    withUser.password = 'secret';
    expect((await t.call('POST', '/api/v1/secrets/scans', { body: { target: withUser.href, connection: id } })).status).toBe(422);
  });

  it('turns a connection whose grant the provider refuses to error, with an integration.error event', async () => {
    const id = await connectWithOAuth();
    // The grant is revoked at the provider: the refresh before the next use is refused.
    github.revokeAllTokens();
    const scan = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${github.url}/acme/payments.git`, connection: id } });
    const result = await finished(scan.body.id);
    expect(result.body.status).toBe('failed');
    expect(result.body.error).toMatch(/connection/);
    const broken = await t.call('GET', `/api/v1/integrations/${id}`);
    expect(broken.body).toMatchObject({ status: 'error', error: expect.stringMatching(/github/) });
    const events = await t.call('GET', '/api/v1/events?type=integration.error');
    expect(events.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toContain(id);

    // Until it is connected again, nothing uses it.
    const refused = await t.call('POST', '/api/v1/secrets/scans', { body: { target: `${github.url}/acme/payments.git`, connection: id } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toMatch(/is error/);
  });
});
