// SAML 2.0 SSO end to end against a local identity provider (test/support/saml-idp.ts): the IdP's
// metadata read from a URL and from inline XML, "Try login" without enforcement, enforcement (a
// member's e-mail link then refused, an IdP sign-in admitted), and responses that must be refused
// and audited: a broken signature, a foreign signing key, no signature, a wrong audience, recipient
// or issuer, an expired assertion, another request's InResponseTo, and a replayed assertion.
// The ACS starts no session itself: it redirects to a completion that only the browser which
// started the sign-in (its flow cookie) completes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../api/accounts/people/plans.ts';
import { guardedFetch } from '../../platform/net/guarded-fetch.ts';
import { startFlow } from '../../api/accounts/sign-in/flows.ts';
import { readIdpMetadata } from '../../api/accounts/sso/saml-metadata.ts';
import type { Db } from '../../platform/db/database.ts';
import { idpMetadataXml, OTHER_CERT, readAuthnRequest, startSamlIdp, type PostedResponse, type ResponseKnobs, type SamlIdp } from '../support/saml-idp.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';
import { linkIn, startSmtpServer, type SmtpCapture } from '../support/smtp.ts';
import { asUser, sessionCookieFrom, signInWithMagicLink } from '../support/sessions.ts';
import { joinDefaultOrganization } from '../support/people.ts';
import { FLOW_COOKIE } from '../../api/accounts/auth/cookies.ts';

let t: TestServer;
let smtp: SmtpCapture;
let idp: SamlIdp;
let db: Db;
let orgId: string;

/** The default organisation's owner, whose session enforces SSO. */
let ownerCookie: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  idp = await startSamlIdp();
  t = await startTestServer({ allowPrivateTargets: true, smtpUrl: smtp.url, rateLimitPerMinute: 100_000 });
  db = t.server.database.db;
  orgId = (await db.selectFrom('organizations').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow()).id;
  await setPlan(db, undefined, orgId, 'enterprise');
  ownerCookie = await joinDefaultOrganization(t, 'saml-owner@example.com', 'owner', smtp);
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
  await smtp?.close();
});

const admin = <T = any>(method: string, path: string, body?: unknown) => request<T>(t.url, method, path, { key: t.adminKey, body });

const answerOf = async (res: globalThis.Response) => {
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
};

/**
 * The IdP's browser post to our ACS (what its auto-posting form does), and — as the browser that
 * started the sign-in — the redirect to the completion it answers with, carrying the flow cookie
 * (whose value is the flow's state, the RelayState). `sameBrowser: false` stops after the ACS.
 */
async function postToAcs(posted: Pick<PostedResponse, 'acsUrl' | 'SAMLResponse' | 'RelayState'>, { sameBrowser = true } = {}) {
  const res = await fetch(posted.acsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: idp.url },
    body: new URLSearchParams({ SAMLResponse: posted.SAMLResponse, RelayState: posted.RelayState }),
    redirect: 'manual',
  });
  if (!sameBrowser || res.status !== 303 || res.headers.get('location') !== '/auth/sso/saml/complete') return answerOf(res);
  await res.body?.cancel();
  return answerOf(await fetch(`${t.url}/auth/sso/saml/complete`, { headers: { cookie: `${FLOW_COOKIE}=${posted.RelayState}` }, redirect: 'manual' }));
}

/** GET /auth/sso?org=default: the redirect to the IdP (an AuthnRequest over HTTP-Redirect). */
async function startSignIn(): Promise<string> {
  const res = await fetch(`${t.url}/auth/sso?org=default`, { redirect: 'manual' });
  expect(res.status, await res.text()).toBe(302);
  const location = res.headers.get('location') ?? '';
  expect(location.startsWith(`${idp.ssoUrl}?`)).toBe(true);
  return location;
}

/** Starts a sign-in and has the IdP answer it with `knobs`. */
async function idpAnswer(knobs: ResponseKnobs): Promise<PostedResponse> {
  return idp.answer(await startSignIn(), knobs);
}

async function refusals(): Promise<string[]> {
  const rows = await db.selectFrom('audit_events').select(['metadata']).where('org_id', '=', orgId).where('action', '=', 'sso.login_refused').orderBy('created_at').execute();
  return rows.map((r) => String((r.metadata as Record<string, unknown>).reason));
}

async function expectRefused(posted: PostedResponse, check: string) {
  const before = (await refusals()).length;
  const res = await postToAcs(posted);
  expect(res.status, res.text).toBe(401);
  expect(res.body.error).toMatchObject({ code: 'unauthorized', details: { check } });
  expect(sessionCookieFrom(res.headers)).toBeUndefined();
  const after = await refusals();
  expect(after.length).toBe(before + 1);
  expect(after.at(-1)).toMatch(new RegExp(`^${check}: `));
  return res;
}

describe('IdP metadata', () => {
  it('reads entity id, the HTTP-Redirect sign-in URL and the signing certificate', async () => {
    const meta = await readIdpMetadata({ xml: idp.metadataXml }, fetch);
    expect(meta).toMatchObject({ idpEntityId: idp.entityId, ssoUrl: idp.ssoUrl, metadataXml: idp.metadataXml });
    expect(meta.certificates).toHaveLength(1);
    // Without a Redirect binding, the POST one is used.
    const postOnly = idp.metadataXml.replace(/<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"[^>]*\/>/, '');
    expect((await readIdpMetadata({ xml: postOnly }, fetch)).ssoUrl).toBe(`${idp.ssoUrl}/post`);
    // Inside an EntitiesDescriptor too.
    const wrapped = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${idp.metadataXml.replace(/^<\?xml[^>]*\?>/, '')}</md:EntitiesDescriptor>`;
    expect((await readIdpMetadata({ xml: wrapped }, fetch)).idpEntityId).toBe(idp.entityId);
  });

  it('refuses metadata without a signing certificate, a sign-in URL, or that is not metadata', async () => {
    const noCert = idp.metadataXml.replace(/<md:KeyDescriptor[\s\S]*?<\/md:KeyDescriptor>/, '');
    await expect(readIdpMetadata({ xml: noCert }, fetch)).rejects.toThrow(/no signing certificate/);
    const encryptionOnly = idp.metadataXml.replace('use="signing"', 'use="encryption"');
    await expect(readIdpMetadata({ xml: encryptionOnly }, fetch)).rejects.toThrow(/no signing certificate/);
    const noSso = idp.metadataXml.replace(/<md:SingleSignOnService[^>]*\/>/g, '');
    await expect(readIdpMetadata({ xml: noSso }, fetch)).rejects.toThrow(/no SingleSignOnService/);
    await expect(readIdpMetadata({ xml: '<html><body>login</body></html>' }, fetch)).rejects.toThrow(/EntityDescriptor/);
    await expect(readIdpMetadata({ xml: '<md:EntityDescriptor' }, fetch)).rejects.toThrow(/not well-formed/);
    await expect(readIdpMetadata({ xml: `<!DOCTYPE x [<!ENTITY a "b">]>${idp.metadataXml.replace(/^<\?xml[^>]*\?>/, '')}` }, fetch)).rejects.toThrow(/DOCTYPE/);
  });

  it('fetches a metadata URL through the private-address guard', async () => {
    await expect(readIdpMetadata({ url: idp.metadataUrl }, guardedFetch({ allowPrivate: false }))).rejects.toThrow(/127\.0\.0\.1: .*AEGIS_ALLOW_PRIVATE_TARGETS/);
    const meta = await readIdpMetadata({ url: idp.metadataUrl }, guardedFetch({ allowPrivate: true }));
    expect(meta.idpEntityId).toBe(idp.entityId);
  });

  it('PUT …/sso refuses a metadata URL on a private address when private targets are not allowed', async () => {
    const fetchesBefore = idp.metadataFetches;
    const guarded = await startTestServer({ allowPrivateTargets: false });
    try {
      const org = await guarded.server.database.db.selectFrom('organizations').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow();
      await setPlan(guarded.server.database.db, undefined, org.id, 'enterprise');
      const res = await request<any>(guarded.url, 'PUT', '/api/v1/orgs/current/sso', { key: guarded.adminKey, body: { protocol: 'saml', metadata_url: idp.metadataUrl } });
      expect(res.status, res.text).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.message).toMatch(/127\.0\.0\.1: .*AEGIS_ALLOW_PRIVATE_TARGETS/);
      expect(idp.metadataFetches).toBe(fetchesBefore);
    } finally {
      await guarded.close();
    }
  });
});

describe('SAML SSO through HTTP', () => {
  const memberEmail = `saml-member-${Date.now().toString(36)}@example.com`;
  let memberCookie: string;
  let spEntityId: string;

  it('configures the connection from inline metadata XML, then from the metadata URL', async () => {
    const inline = await admin('PUT', '/api/v1/orgs/current/sso', { protocol: 'saml', metadata_xml: idpMetadataXml(idp.entityId, idp.ssoUrl, OTHER_CERT) });
    expect(inline.status, inline.text).toBe(200);
    expect(inline.body.saml).toMatchObject({ metadata_url: null, idp_entity_id: idp.entityId, sso_url: idp.ssoUrl, certificate_count: 1 });

    const byUrl = await admin('PUT', '/api/v1/orgs/current/sso', { protocol: 'saml', metadata_url: idp.metadataUrl });
    expect(byUrl.status, byUrl.text).toBe(200);
    expect(byUrl.body).toMatchObject({ protocol: 'saml', enforced: false, tested_at: null, saml: { metadata_url: idp.metadataUrl, idp_entity_id: idp.entityId, sso_url: idp.ssoUrl, certificate_count: 1 } });
    expect(byUrl.body.service_provider.acs_url).toBe(`${t.url}/auth/sso/saml/acs`);
    spEntityId = byUrl.body.service_provider.entity_id;

    // Our SP metadata, for the IdP's administrators.
    const sp = await fetch(byUrl.body.service_provider.metadata_url);
    expect(sp.status).toBe(200);
    expect(sp.headers.get('content-type')).toMatch(/samlmetadata\+xml/);
    const spXml = await sp.text();
    expect(spXml).toContain(`entityID="${spEntityId}"`);
    expect(spXml).toContain(`Location="${t.url}/auth/sso/saml/acs"`);
    const unknown = await request(t.url, 'GET', '/auth/sso/saml/metadata/org_zzzz');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'not_found' } });
  });

  it('"Try login" succeeds at the IdP and records tested_at, enforcing nothing', async () => {
    const started = await admin<{ url: string }>('POST', '/api/v1/orgs/current/sso/test');
    expect(started.status, started.text).toBe(200);
    const redirect = await fetch(started.body.url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location') ?? '';
    const { request: authn } = readAuthnRequest(location);
    expect(authn).toMatchObject({ issuer: spEntityId, acsUrl: `${t.url}/auth/sso/saml/acs`, destination: idp.ssoUrl });
    expect(authn.id).toMatch(/^_[0-9a-f]{40}$/);

    // Through the IdP's HTTP endpoint, as a browser would go.
    idp.next = { email: 'admin-tries@example.com' };
    const answered = await fetch(location);
    expect(answered.status).toBe(200);
    const posted = (await answered.json()) as PostedResponse;
    const res = await postToAcs(posted);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain('SSO works');
    expect(res.text).toContain('admin-tries@example.com');
    expect(sessionCookieFrom(res.headers)).toBeUndefined();

    const connection = await admin('GET', '/api/v1/orgs/current/sso');
    expect(connection.body.tested_at).not.toBeNull();
    expect(connection.body.enforced).toBe(false);
    const tested = await db.selectFrom('audit_events').select('metadata').where('org_id', '=', orgId).where('action', '=', 'sso.tested').executeTakeFirst();
    expect(tested?.metadata).toMatchObject({ protocol: 'saml', email: 'admin-tries@example.com' });
  });

  it('a member joins by e-mail link before enforcement', async () => {
    const invited = await admin('POST', '/api/v1/orgs/current/invite', { email: memberEmail, role: 'member' });
    expect(invited.status, invited.text).toBe(201);
    memberCookie = await signInWithMagicLink(t, smtp, memberEmail);
    const me = await asUser(t, memberCookie, 'GET', '/api/v1/me');
    expect(me.status, me.text).toBe(200);
  });

  it('after enforcement a magic-link login of the member is refused and an IdP login succeeds', async () => {
    // A link asked for before enforcement, used after it.
    const since = Date.now();
    expect((await request(t.url, 'POST', '/auth/login', { body: { email: memberEmail } })).status).toBe(202);
    const mail = await smtp.waitFor(memberEmail, (m) => m.text.includes('/auth/magic'), since);
    const token = new URL(linkIn(mail, `${t.url}/auth/magic`)).searchParams.get('token');

    const enforced = await asUser(t, ownerCookie, 'POST', '/api/v1/orgs/current/sso/enforcement', { body: { enforced: true } });
    expect(enforced.status, enforced.text).toBe(200);
    expect(enforced.body.enforced).toBe(true);

    const refused = await request(t.url, 'POST', '/auth/magic', { body: { token }, headers: { origin: t.url } });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'sso_required', details: { sso_url: '/auth/sso?org=default' } } });
    // The session the link gave before enforcement stops working too.
    expect((await asUser(t, memberCookie, 'GET', '/api/v1/me')).status).toBe(403);

    const posted = await idpAnswer({ email: memberEmail.toUpperCase(), name: 'Saml Member' });
    const res = await postToAcs(posted);
    expect(res.status, res.text).toBe(303);
    expect(res.headers.get('location')).toBe('/api/v1/me');
    const cookie = sessionCookieFrom(res.headers);
    expect(cookie).toBeDefined();
    const me = await asUser(t, cookie!, 'GET', '/api/v1/me');
    expect(me.status, me.text).toBe(200);
    expect(JSON.stringify(me.body)).toContain(memberEmail);
  });

  it('an e-mail address in an attribute (opaque NameID) signs in too', async () => {
    const res = await postToAcs(await idpAnswer({ email: memberEmail, emailAsAttribute: true }));
    expect(res.status, res.text).toBe(303);
  });

  it('refuses and audits a broken signature', async () => {
    await expectRefused(await idpAnswer({ email: memberEmail, breakSignature: true }), 'signature');
  });

  it('refuses and audits a signature by another key', async () => {
    await expectRefused(await idpAnswer({ email: memberEmail, signWithOtherKey: true }), 'signature');
  });

  it('refuses and audits an unsigned assertion', async () => {
    await expectRefused(await idpAnswer({ email: memberEmail, unsigned: true }), 'signature');
  });

  it('refuses and audits a wrong audience', async () => {
    await expectRefused(await idpAnswer({ email: memberEmail, audience: 'https://other-sp.example/saml' }), 'audience');
  });

  it('refuses and audits a wrong recipient, and a wrong destination', async () => {
    await expectRefused(await idpAnswer({ email: memberEmail, recipient: 'https://other-sp.example/acs' }), 'recipient');
    await expectRefused(await idpAnswer({ email: memberEmail, destination: 'https://other-sp.example/acs' }), 'destination');
  });

  it('refuses and audits another issuer, an expired assertion, and an answer to another request', async () => {
    await expectRefused(await idpAnswer({ email: memberEmail, issuer: 'https://impostor.example/idp' }), 'issuer');
    await expectRefused(await idpAnswer({ email: memberEmail, validForSeconds: -300 }), 'expired');
    await expectRefused(await idpAnswer({ email: memberEmail, inResponseTo: '_0123456789abcdef0123456789abcdef01234567' }), 'in_response_to');
  });

  it('refuses signature wrapping: a forged assertion beside or around the signed one', async () => {
    const attacker = `attacker-${Date.now().toString(36)}@example.com`;
    for (const wrap of ['sibling', 'nested'] as const) {
      const posted = await idpAnswer({ email: attacker, wrap, wrapAs: memberEmail });
      expect(posted.xml.match(/<saml:Assertion /g)).toHaveLength(2);
      expect(posted.xml).toContain(`>${memberEmail}</saml:NameID>`);
      await expectRefused(posted, 'signature');
    }
  });

  it('reads the whole NameID when a comment splits it (no truncation to a member\'s address)', async () => {
    const lookalike = `${memberEmail}.evil.example`;
    const posted = await idpAnswer({ email: lookalike, commentAfter: memberEmail });
    expect(posted.xml).toContain(`>${memberEmail}<!---->.evil.example</saml:NameID>`);
    const res = await postToAcs(posted);
    // The signature holds (comments are not signed), but the address is the whole text: not a member.
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ error: { code: 'forbidden' } });
    expect(sessionCookieFrom(res.headers)).toBeUndefined();
    expect((await refusals()).at(-1)).toContain(lookalike.toLowerCase());
  });

  it('refuses and audits a replayed assertion', async () => {
    const location = await startSignIn();
    const first = idp.answer(location, { email: memberEmail });
    const ok = await postToAcs(first);
    expect(ok.status, ok.text).toBe(303);

    // The same post again: its flow (RelayState) is finished.
    const again = await postToAcs(first);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ error: { code: 'unauthorized' } });

    // In a new flow that expects the same request id, only the assertion-id check can catch it.
    const { request: authn } = readAuthnRequest(location);
    const { state } = await startFlow(db, { kind: 'sso_saml', purpose: 'login', orgId, requestId: authn.id });
    await expectRefused({ ...first, RelayState: state }, 'replay');

    // In a new flow through HTTP, the InResponseTo check catches it first.
    const fresh = readAuthnRequest(await startSignIn());
    await expectRefused({ ...first, RelayState: fresh.relayState }, 'in_response_to');
  });

  it('answers unknown RelayState and malformed responses with 401 or 422 envelopes', async () => {
    const unknown = await postToAcs({ acsUrl: `${t.url}/auth/sso/saml/acs`, SAMLResponse: 'PHg+', RelayState: 'nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ error: { code: 'unauthorized' } });
    const garbage = await idpAnswer({ email: memberEmail });
    const bad = await postToAcs({ ...garbage, SAMLResponse: Buffer.from('<not-saml/>').toString('base64') });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ error: { code: 'unauthorized', details: { check: 'malformed' } } });
    const missing = await fetch(`${t.url}/auth/sso/saml/acs`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'RelayState=x' });
    expect(missing.status).toBe(422);
    expect(await missing.json()).toMatchObject({ error: { code: 'validation_failed' } });
  });
});
