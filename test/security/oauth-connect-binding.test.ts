// Finding 6: an OAuth connect started with an API key returned an authorize URL that any browser
// could complete: whoever followed it landed their own provider grant in the key's organisation
// (or, sent to a victim, the victim's grant in the attacker's). The class: a connect completes only
// for whoever started it — started in a browser, that browser (its flow cookie) and that person;
// started with a key, the browser of a signed-in admin of the key's organisation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProviderSettings } from '../../api/integrations/providers/settings.ts';
import { joinDefaultOrganization } from '../support/people.ts';
import { startGithubStandIn, type GithubStandIn } from '../support/providers/github/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { asUser, SESSION_COOKIE, signInWithMagicLink } from '../support/sessions.ts';
import { startSmtpServer, type SmtpCapture } from '../support/smtp.ts';

let github: GithubStandIn;
let smtp: SmtpCapture;
let t: TestServer;

beforeAll(async () => {
  github = await startGithubStandIn();
  smtp = await startSmtpServer();
  t = await startTestServer({ providers: { ...loadProviderSettings({}), github: github.settings }, allowPrivateTargets: true, smtpUrl: smtp.url, rateLimitPerMinute: 100_000 });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await github?.close();
  await smtp?.close();
});

/** The provider's approval: the callback URL it sends the browser back to. */
async function approve(authorizeUrl: string): Promise<string> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return res.headers.get('location') ?? '';
}

const status = async (id: string) => (await t.call('GET', `/api/v1/integrations/${id}`)).body.status as string;

describe('an OAuth connect completes only for whoever started it', () => {
  it('started with a key: a browser without a session, or another organisation’s admin, completes nothing', async () => {
    const started = await t.call('POST', '/api/v1/integrations/github/connect', { body: {} });
    expect(started.status, started.text).toBe(201);
    const callback = await approve(started.body.authorize_url);

    expect((await fetch(callback, { redirect: 'manual' })).status).toBe(401);
    const stranger = await signInWithMagicLink(t, smtp, 'stranger@elsewhere.example');
    const foreign = await fetch(callback, { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${stranger}`, origin: t.url } });
    expect(foreign.status).toBe(403);
    expect(await status(started.body.integration.id)).toBe('pending');
    // The stranger's organisation got no connection either.
    expect((await asUser(t, stranger, 'GET', '/api/v1/integrations')).body.data).toEqual([]);
  });

  it('started with a key: a signed-in admin of the same organisation completes it', async () => {
    const admin = await joinDefaultOrganization(t, 'admin@default.example', 'admin', smtp);
    const started = await t.call('POST', '/api/v1/integrations/github/connect', { body: {} });
    const callback = await approve(started.body.authorize_url);
    const member = await joinDefaultOrganization(t, 'member@default.example', 'member', smtp);
    expect((await fetch(callback, { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${member}` } })).status).toBe(403);
    const started2 = await t.call('POST', '/api/v1/integrations/github/connect', { body: {} });
    const done = await fetch(await approve(started2.body.authorize_url), { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${admin}` } });
    expect(done.status).toBe(303);
    expect(await status(started2.body.integration.id)).toBe('active');
  });

  it('started in a browser: another admin of the same organisation, or the same person in another browser, completes nothing', async () => {
    const alice = await joinDefaultOrganization(t, 'alice@default.example', 'admin', smtp);
    const bob = await joinDefaultOrganization(t, 'bob@default.example', 'admin', smtp);
    const started = await asUser(t, alice, 'POST', '/api/v1/integrations/github/connect', { body: {} });
    expect(started.status, started.text).toBe(201);
    const flowCookie = (started.headers.getSetCookie().find((c) => c.startsWith('aegis_connect_flow=')) ?? '').split(';')[0]!;
    expect(flowCookie).not.toBe('');
    const callback = await approve(started.body.authorize_url);

    // Bob has the URL (say Alice pasted it), with his own session but not Alice's browser.
    expect((await fetch(callback, { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${bob}` } })).status).toBe(401);
    expect(await status(started.body.integration.id)).toBe('pending');

    const again = await asUser(t, alice, 'POST', '/api/v1/integrations/github/connect', { body: {} });
    const againCookie = (again.headers.getSetCookie().find((c) => c.startsWith('aegis_connect_flow=')) ?? '').split(';')[0]!;
    const againCallback = await approve(again.body.authorize_url);
    // Bob with Alice's flow cookie is still not Alice.
    expect((await fetch(againCallback, { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${bob}; ${againCookie}` } })).status).toBe(401);
    const third = await asUser(t, alice, 'POST', '/api/v1/integrations/github/connect', { body: {} });
    const thirdCookie = (third.headers.getSetCookie().find((c) => c.startsWith('aegis_connect_flow=')) ?? '').split(';')[0]!;
    const done = await fetch(await approve(third.body.authorize_url), { redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${alice}; ${thirdCookie}` } });
    expect(done.status).toBe(303);
    expect(await status(third.body.integration.id)).toBe('active');
    expect(flowCookie).not.toBe(againCookie);
  });
});
