// Domain proof for Shield sites (issue 41), end to end: real servers with their gateways, a real DNS
// server for the TXT records (and the names the HTTP proof resolves), a real HTTP server standing in
// for the domain's current server, real origins. With proof `required`, an unverified site gets no
// traffic until DNS proves it and loses it when the record goes; with `contested`, an organisation
// that proves control takes an unverified domain over (audited and evented to the loser, naming
// nobody), never a verified one; ACME counts only where it can; a deleted site frees the domain.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { txtLookup } from '../../platform/net/txt-records.ts';
import { recordDomainProof } from '../../api/shield/domain-proof/record.ts';
import { recheckSiteDomains } from '../../api/shield/domain-proof/recheck.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { viaGateway } from '../support/gateway.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { keyInOrganization } from '../support/orgs.ts';
import { startOrigin, type Origin } from '../support/origin.ts';
import { request, startTestServer, type TestServer } from '../support/server.ts';

let dns: DnsServer;
/** What the domains' current server (before DNS moves to Aegis) answers at /.well-known/aegis-verify/<token>. */
const published = new Map<string, string>();
let currentServer: { url: string; close(): Promise<void> };
let originA: Origin;
let originB: Origin;

beforeAll(async () => {
  [dns, originA, originB] = await Promise.all([startDnsServer(), startOrigin(), startOrigin()]);
  const server = createServer((req, res) => {
    const body = published.get(`${(req.headers.host ?? '').split(':')[0]}${req.url ?? ''}`);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' });
    res.end(body ?? 'not here');
  });
  currentServer = await listenOnLoopback(server);
});
afterAll(async () => {
  await Promise.all([dns?.close(), currentServer?.close(), originA?.close(), originB?.close()]);
});

async function proofServer(domainProof: 'required' | 'contested', extra: Record<string, unknown> = {}): Promise<TestServer> {
  return startTestServer({
    rateLimitPerMinute: 1_000_000,
    shieldEnabled: true,
    shieldPort: 0,
    shieldDomainProof: domainProof,
    verificationDnsServers: [dns.server],
    // The HTTP proof resolves the site's domain like any tenant URL (here: to the stand-in current server on loopback).
    dnsServers: [dns.server],
    allowPrivateTargets: true,
    shieldDomainProofHttpPort: Number(new URL(currentServer.url).port),
    ...extra,
  });
}

const as = (t: TestServer, key: string) => ({
  call: <T = any>(method: string, path: string, body?: unknown) => request<T>(t.url, method, path, { key, ...(body === undefined ? {} : { body }) }),
});

async function createSite(t: TestServer, key: string, domain: string, origin: Origin): Promise<any> {
  const res = await as(t, key).call('POST', '/api/v1/shield/sites', { domain, origin_url: origin.url, mode: 'log' });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** What a site says of its domain proof (the parts these helpers publish). */
interface ProofInstructions {
  domain: string;
  domain_verification: { txt_record: { name: string; value: string }; http_token: { body: string } };
}
const publishTxt = (site: ProofInstructions) => dns.setTxt(site.domain_verification.txt_record.name, [site.domain_verification.txt_record.value]);
const publishHttp = (site: ProofInstructions) => published.set(`${site.domain}/.well-known/aegis-verify/${site.domain_verification.http_token.body}`, site.domain_verification.http_token.body);
const verify = (t: TestServer, key: string, site: { id: string }, method: 'dns' | 'http') => as(t, key).call('POST', `/api/v1/shield/sites/${site.id}/verify-domain`, { method });
const getSite = async (t: TestServer, key: string, id: string) => (await as(t, key).call('GET', `/api/v1/shield/sites/${id}`)).body;

/** Which origin the gateway sends `host`'s traffic to: 'a', 'b', or the gateway's own status when none. */
async function servedBy(t: TestServer, host: string, gateway = t.server.gateway!): Promise<'a' | 'b' | number> {
  await gateway.registry.refresh();
  const before = [originA.received.length, originB.received.length];
  const res = await viaGateway(`http://127.0.0.1:${gateway.port}`, '/hello', { host });
  if (res.status !== 200) return res.status;
  if (originA.received.length > before[0]!) return 'a';
  if (originB.received.length > before[1]!) return 'b';
  throw new Error('200 from the gateway with no origin reached');
}

describe('AEGIS_SHIELD_DOMAIN_PROOF=required', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await proofServer('required', { sandboxShieldPort: 0 });
    dns.set('req.example.test', ['127.0.0.1']);
    dns.set('byhttp.example.test', ['127.0.0.1']);
  }, 60_000);
  afterAll(() => t?.close());

  it('serves an unverified site nothing until a DNS TXT record proves it, then serves it; the record gone, it stops', async () => {
    const site = await createSite(t, t.adminKey, 'req.example.test', originA);
    expect(site.status).toBe('pending');
    expect(site.domain_verification).toMatchObject({ status: 'unverified', method: null });
    expect(await servedBy(t, 'req.example.test')).toBe(421);

    const missing = await verify(t, t.adminKey, site, 'dns');
    expect(missing.status, missing.text).toBe(422);
    expect(missing.body.error.details).toMatchObject({ reason: 'proof_not_found', method: 'dns', expected: site.domain_verification.txt_record, found: [] });
    expect(missing.body.error.message).toContain(site.domain_verification.txt_record.value);
    dns.setTxt(site.domain_verification.txt_record.name, ['aegis-verify=someone-elses-token']);
    const wrong = await verify(t, t.adminKey, site, 'dns');
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details.found).toEqual(['aegis-verify=someone-elses-token']);
    expect(await getSite(t, t.adminKey, site.id)).toMatchObject({ status: 'pending', domain_verification: { status: 'unverified', error: expect.stringContaining('do not hold') } });
    expect(await servedBy(t, 'req.example.test')).toBe(421);

    publishTxt(site);
    const verified = await verify(t, t.adminKey, site, 'dns');
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toMatchObject({ id: site.id, status: 'active', domain_verification: { status: 'verified', method: 'dns', error: null } });
    expect(verified.body.domain_verification.verified_at).not.toBeNull();
    expect(await servedBy(t, 'req.example.test')).toBe('a');
    const audit = (await t.call('GET', `/api/v1/audit-log?action=shield_site.domain_verified&target=${site.id}`)).body.data;
    expect(audit[0]).toMatchObject({ actor: { type: 'api_key' }, metadata: { domain: 'req.example.test', method: 'dns', took_over: false } });

    // The periodic re-check: a resolver that fails changes nothing…
    const db = t.server.database.db;
    const dead = await recheckSiteDomains(db, txtLookup(['127.0.0.1:9'], { timeoutMs: 200, tries: 1 }), 0);
    expect(dead).toEqual({ checked: 1, unverified: 0 });
    expect(await getSite(t, t.adminKey, site.id)).toMatchObject({ status: 'active', domain_verification: { status: 'verified', error: expect.stringContaining('failed') } });
    expect(await servedBy(t, 'req.example.test')).toBe('a');
    // …a record still there keeps it (and clears the error)…
    expect(await recheckSiteDomains(db, txtLookup([dns.server]), 0)).toEqual({ checked: 1, unverified: 0 });
    expect((await getSite(t, t.adminKey, site.id)).domain_verification.error).toBeNull();
    // …and a record gone unverifies the site: it gets no traffic again.
    dns.setTxt(site.domain_verification.txt_record.name, []);
    expect(await recheckSiteDomains(db, txtLookup([dns.server]), 0)).toEqual({ checked: 1, unverified: 1 });
    expect(await getSite(t, t.adminKey, site.id)).toMatchObject({ status: 'pending', domain_verification: { status: 'unverified', method: null, error: expect.stringContaining('no TXT record') } });
    expect(await servedBy(t, 'req.example.test')).toBe(421);
    const unverified = (await t.call('GET', `/api/v1/audit-log?action=shield_site.domain_unverified&target=${site.id}`)).body.data;
    expect(unverified[0]).toMatchObject({ actor: { type: 'system', id: 'domain-proof' }, metadata: { domain: 'req.example.test' } });
    // Not due yet: a fresh proof is not read again before the interval.
    publishTxt(site);
    expect((await verify(t, t.adminKey, site, 'dns')).status).toBe(200);
    expect(await recheckSiteDomains(db, txtLookup([dns.server]), 3_600_000)).toEqual({ checked: 0, unverified: 0 });
  });

  it('accepts an HTTP token served by the domain’s current server, and refuses a wrong answer with what it got', async () => {
    const site = await createSite(t, t.adminKey, 'byhttp.example.test', originA);
    expect(site.domain_verification.http_token.url).toBe(`http://byhttp.example.test:${new URL(currentServer.url).port}/.well-known/aegis-verify/${site.domain_verification.http_token.body}`);
    const absent = await verify(t, t.adminKey, site, 'http');
    expect(absent.status).toBe(422);
    expect(absent.body.error.message).toContain('answered HTTP 404');
    published.set(`byhttp.example.test/.well-known/aegis-verify/${site.domain_verification.http_token.body}`, 'not the token');
    expect((await verify(t, t.adminKey, site, 'http')).body.error.message).toContain('its body is not the token');
    publishHttp(site);
    const verified = await verify(t, t.adminKey, site, 'http');
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toMatchObject({ status: 'active', domain_verification: { status: 'verified', method: 'http' } });
    expect(await servedBy(t, 'byhttp.example.test')).toBe('a');
  });

  it('does not count an ACME validation, and needs no proof in the sandbox', async () => {
    const site = await createSite(t, t.adminKey, 'acme-required.example.test', originA);
    const result = await recordDomainProof(t.server.database.db, { siteId: site.id, domainProof: 'required' }, 'acme');
    expect(result).toMatchObject({ verified: false, reason: expect.stringContaining('only a DNS or HTTP proof counts') });
    // Left out, the mode is taken as `required`: the safe reading.
    expect((await recordDomainProof(t.server.database.db, { siteId: site.id }, 'acme')).verified).toBe(false);
    expect((await getSite(t, t.adminKey, site.id)).status).toBe('pending');

    const testKey = (await t.call('POST', '/api/v1/api-keys', { body: { name: 'sandbox', scopes: ['admin'], environment: 'test' } })).body.key as string;
    const sandboxSite = await createSite(t, testKey, 'sandbox.example.test', originB);
    expect(sandboxSite).toMatchObject({ livemode: false, status: 'active', domain_verification: { status: 'unverified' } });
    expect(await servedBy(t, 'sandbox.example.test', t.server.sandboxGateway!)).toBe('b');
    expect(await servedBy(t, 'sandbox.example.test')).toBe(421);
  });
});

describe('AEGIS_SHIELD_DOMAIN_PROOF=contested', () => {
  let t: TestServer;
  let keyB: string;
  beforeAll(async () => {
    t = await proofServer('contested');
    keyB = await keyInOrganization(t, 'second-org', ['admin']);
    for (const name of ['shared.example.test', 'loop.example.test', 'acme.example.test', 'alone.example.test']) dns.set(name, ['127.0.0.1']);
  }, 60_000);
  afterAll(() => t?.close());

  const events = async (key: string) => (await as(t, key).call('GET', '/api/v1/events?type=shield.site.domain_taken_over&limit=200')).body.data as any[];
  const auditOf = async (key: string, action: string) => (await as(t, key).call('GET', `/api/v1/audit-log?action=${action}&limit=200`)).body.data as any[];

  it('serves an unverified site at once; a second organisation that proves control by DNS takes the domain over, audited and evented without naming anyone', async () => {
    const a = await createSite(t, t.adminKey, 'shared.example.test', originA);
    expect(a.status).toBe('active');
    expect(await servedBy(t, 'shared.example.test')).toBe('a');
    const b = await createSite(t, keyB, 'shared.example.test', originB);
    expect(b.status).toBe('pending');
    expect(await servedBy(t, 'shared.example.test')).toBe('a');

    publishTxt(b);
    const taken = await verify(t, keyB, b, 'dns');
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({ status: 'active', domain_verification: { status: 'verified', method: 'dns' } });
    expect(await servedBy(t, 'shared.example.test')).toBe('b');
    expect(await getSite(t, t.adminKey, a.id)).toMatchObject({ status: 'superseded', domain_verification: { status: 'unverified' } });

    const orgA = (await as(t, t.adminKey).call('GET', '/api/v1/me')).body.organization.id as string;
    const orgB = (await as(t, keyB).call('GET', '/api/v1/me')).body.organization.id as string;
    const [lost] = await events(t.adminKey);
    expect(lost).toMatchObject({ type: 'shield.site.domain_taken_over', data: { object: { object: 'shield_site_takeover', site_id: a.id, domain: 'shared.example.test', was_serving: true } } });
    expect(JSON.stringify(lost)).not.toContain(orgB);
    expect(JSON.stringify(lost)).not.toContain(b.id);
    expect(await events(keyB)).toEqual([]);
    const [loserAudit] = await auditOf(t.adminKey, 'shield_site.domain_taken_over');
    expect(loserAudit).toMatchObject({ actor: { type: 'system', id: 'domain-proof' }, target: { type: 'shield_site', id: a.id }, metadata: { domain: 'shared.example.test', was_serving: true } });
    expect(JSON.stringify(loserAudit)).not.toContain(orgB);
    expect(JSON.stringify(loserAudit)).not.toContain(b.id);
    const [winnerAudit] = await auditOf(keyB, 'shield_site.domain_verified');
    expect(winnerAudit).toMatchObject({ target: { id: b.id }, metadata: { domain: 'shared.example.test', method: 'dns', took_over: true } });
    expect(JSON.stringify(winnerAudit)).not.toContain(orgA);
    expect(JSON.stringify(winnerAudit)).not.toContain(a.id);

    // A verified domain is never taken over: the first organisation's own proof is refused now.
    publishTxt(a);
    const refused = await verify(t, t.adminKey, a, 'dns');
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.error.message).toContain('a verified domain is never taken over');
    expect(JSON.stringify(refused.body)).not.toContain(orgB);
    publishHttp(a);
    expect((await verify(t, t.adminKey, a, 'http')).status).toBe(409);
    expect(await servedBy(t, 'shared.example.test')).toBe('b');
    expect(await getSite(t, t.adminKey, a.id)).toMatchObject({ status: 'superseded', domain_verification: { status: 'unverified', error: expect.stringContaining('never taken over') } });

    // A deleted site frees the domain: the other organisation's site serves it again.
    expect((await as(t, keyB).call('DELETE', `/api/v1/shield/sites/${b.id}`)).status).toBe(204);
    expect((await getSite(t, t.adminKey, a.id)).status).toBe('active');
    expect(await servedBy(t, 'shared.example.test')).toBe('a');
  });

  it('takes a domain over by HTTP proof; the site the gateway already serves cannot prove itself by HTTP against another organisation', async () => {
    const a = await createSite(t, t.adminKey, 'loop.example.test', originA);
    const b = await createSite(t, keyB, 'loop.example.test', originB);
    // A's site receives the domain's traffic through Aegis: its HTTP answer could be its own origin's.
    publishHttp(a);
    const loop = await verify(t, t.adminKey, a, 'http');
    expect(loop.status, loop.text).toBe(409);
    expect(loop.body.error.message).toContain('prove with DNS');
    expect(await servedBy(t, 'loop.example.test')).toBe('a');
    // B's site is not served: the token can only come from whoever answers for the domain.
    publishHttp(b);
    const taken = await verify(t, keyB, b, 'http');
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({ status: 'active', domain_verification: { method: 'http' } });
    expect(await servedBy(t, 'loop.example.test')).toBe('b');
    expect((await events(t.adminKey)).map((e) => e.data.object.site_id)).toContain(a.id);
    expect(await getSite(t, t.adminKey, a.id)).toMatchObject({ status: 'superseded' });
  });

  it('counts an ACME validation only when no other organisation has a site on the domain', async () => {
    const db = t.server.database.db;
    const alone = await createSite(t, t.adminKey, 'alone.example.test', originA);
    const ok = await recordDomainProof(db, { siteId: alone.id, domainProof: 'contested' }, 'acme');
    expect(ok).toMatchObject({ verified: true, tookOver: 0 });
    expect(await getSite(t, t.adminKey, alone.id)).toMatchObject({ status: 'active', domain_verification: { status: 'verified', method: 'acme' } });
    // A later DNS proof replaces it; a later ACME validation (a renewal) does not replace the DNS one.
    publishTxt(alone);
    expect((await verify(t, t.adminKey, alone, 'dns')).body.domain_verification.method).toBe('dns');
    expect(await recordDomainProof(db, { siteId: alone.id, domainProof: 'contested' }, 'acme')).toMatchObject({ verified: true });
    expect((await getSite(t, t.adminKey, alone.id)).domain_verification).toMatchObject({ status: 'verified', method: 'dns' });

    // Two organisations on one domain: ACME proves neither.
    const shared = await createSite(t, t.adminKey, 'acme.example.test', originA);
    const other = await createSite(t, keyB, 'acme.example.test', originB);
    for (const site of [shared, other]) {
      expect(await recordDomainProof(db, { siteId: site.id, domainProof: 'contested' }, 'acme')).toMatchObject({ verified: false, reason: expect.stringContaining('cannot tell which of you controls it') });
    }
    expect(await servedBy(t, 'acme.example.test')).toBe('a');
    expect(await getSite(t, keyB, other.id)).toMatchObject({ status: 'pending', domain_verification: { status: 'unverified' } });
  });
});
