// Cloud attack-surface discovery end to end (issue 25, item 4): a real server with its worker and
// the AWS SDK talking to the AWS stand-in (test/support/providers/aws.ts), which checks SigV4 and
// answers in each service's wire protocol. Connect in two steps (the role trusts Aegis with the
// generated external id), discovery lists two internet-facing load balancers, a CloudFront
// distribution and a public Route 53 record; coverage follows Shield sites and schedules made
// afterwards; one call schedules a DAST scan of an uncovered host; a second discovery diffs; a
// service the role may not read keeps its assets; a revoked role puts the connection in `error`
// without touching the inventory; the scheduler queues one run when one is due.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscoveryScheduler } from '../../api/attack-surface/index.ts';
import { eventually } from '../support/gateway.ts';
import { startAwsStandIn, type AwsStandIn } from '../support/providers/aws.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Asset {
  id: string;
  object: string;
  host: string;
  kind: string;
  provider: string;
  integration_id: string;
  resource: { id: string; name: string | null; region: string | null };
  details: Record<string, unknown>;
  first_seen_at: string;
  last_seen_at: string;
  gone_at: string | null;
  coverage: { covered: boolean; shield_site_id: string | null; scan_schedule_id: string | null; scan_id: string | null };
}

interface Run {
  id: string;
  object: string;
  integration_id: string;
  status: string;
  trigger: string;
  counts: { total: number; added: number; removed: number; unchanged: number } | null;
  errors: { scope: string; code: string; message: string }[];
  error: string | null;
}

const LB1 = { region: 'us-east-1', name: 'shop-web', dnsName: 'shop-web-1234567890.us-east-1.elb.amazonaws.com', scheme: 'internet-facing' as const, type: 'application' as const };
const LB2 = { region: 'us-east-1', name: 'shop-api', dnsName: 'shop-api-2345678901.us-east-1.elb.amazonaws.com', scheme: 'internet-facing' as const, type: 'application' as const };
const LB3 = { region: 'us-east-1', name: 'shop-admin', dnsName: 'shop-admin-3456789012.us-east-1.elb.amazonaws.com', scheme: 'internet-facing' as const, type: 'network' as const };
const CDN = { id: 'E2QWRUHAPOMQZL', domainName: 'd111111abcdef8.cloudfront.net', aliases: [], comment: 'static assets' };
const RECORD_HOST = 'www.shop-example.com';

let aws: AwsStandIn;
let t: TestServer;
let integrationId: string;
let externalId: string;
const roleArn = (): string => `arn:aws:iam::${aws.accountId}:role/AegisDiscovery`;

async function assets(query = ''): Promise<Asset[]> {
  const res = await t.call('GET', `/api/v1/attack-surface${query}`);
  expect(res.status, res.text).toBe(200);
  return (res.body as { data: Asset[] }).data;
}

const byHost = (list: Asset[], host: string): Asset => {
  const found = list.find((a) => a.host === host);
  if (!found) throw new Error(`no asset ${host} in ${list.map((a) => a.host).join(', ')}`);
  return found;
};

/** Waits for the run to finish and answers it as listed. */
async function finished(runId: string): Promise<Run> {
  let run: Run | undefined;
  await eventually(
    async () => {
      const res = await t.call('GET', `/api/v1/attack-surface/runs?integration=${integrationId}`);
      run = (res.body as { data: Run[] }).data.find((r) => r.id === runId);
      return run?.status === 'completed' || run?.status === 'failed';
    },
    30_000,
    50,
  );
  return run!;
}

async function discover(): Promise<Run> {
  const res = await t.call('POST', `/api/v1/integrations/${integrationId}/discover`);
  expect(res.status, res.text).toBe(202);
  return finished((res.body as Run).id);
}

beforeAll(async () => {
  aws = await startAwsStandIn({
    inventory: {
      loadBalancers: [LB1, LB2, { region: 'us-east-1', name: 'internal', dnsName: 'internal-db-1.us-east-1.elb.amazonaws.com', scheme: 'internal', type: 'application' }],
      distributions: [CDN],
      hostedZones: [
        { id: 'Z0PUBLIC', name: 'shop-example.com.', private: false, records: [{ name: `${RECORD_HOST}.`, type: 'CNAME', values: [CDN.domainName] }, { name: 'shop-example.com.', type: 'NS', values: ['ns-1.awsdns-00.org.'] }] },
        { id: 'Z0PRIVATE', name: 'corp.internal.', private: true, records: [{ name: 'db.corp.internal.', type: 'A', values: ['10.0.0.5'] }] },
      ],
    },
  });
  t = await startTestServer({ allowPrivateTargets: true, rateLimitPerMinute: 100_000, cloud: { aws: aws.settings } });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await aws?.close();
});

describe('connecting an AWS account', () => {
  it('step 1 creates a pending connection with an external id and the policies of the role to create', async () => {
    const res = await t.call('POST', '/api/v1/integrations/aws/connect', { body: {} });
    expect(res.status, res.text).toBe(201);
    const body = res.body as { integration: { id: string; status: string; kind: string; provider: string; auth_type: string }; setup: { external_id: string; principal: string | null; trust_policy: unknown; permissions_policy: unknown } };
    expect(body.integration).toMatchObject({ status: 'pending', kind: 'cloud', provider: 'aws', auth_type: 'role' });
    expect(body.setup.external_id).toMatch(/^aegis-[0-9a-f]{32}$/);
    expect(body.setup.principal).toBe(aws.settings.principalArn);
    expect(JSON.stringify(body.setup.trust_policy)).toContain(body.setup.external_id);
    expect(JSON.stringify(body.setup.permissions_policy)).toContain('route53:ListResourceRecordSets');
    integrationId = body.integration.id;
    externalId = body.setup.external_id;
  });

  it('refuses a malformed role ARN, an unknown pending connection, and a role AWS will not let Aegis assume', async () => {
    const bad = await t.call('POST', '/api/v1/integrations/aws/connect', { body: { integration: integrationId, role_arn: 'arn:aws:iam::12:role/x' } });
    expect(bad.status, bad.text).toBe(422);
    expect((bad.body as { error: { code: string } }).error.code).toBe('validation_failed');
    const unknown = await t.call('POST', '/api/v1/integrations/aws/connect', { body: { integration: 'int_01jzzzzzzzzzzzzzzzzzzzzzzz', role_arn: roleArn() } });
    expect(unknown.status, unknown.text).toBe(404);
    const missing = await t.call('POST', '/api/v1/integrations/aws/connect', { body: { role_arn: roleArn() } });
    expect(missing.status, missing.text).toBe(422);
    // The role does not trust Aegis yet: AWS's refusal, named.
    const refused = await t.call('POST', '/api/v1/integrations/aws/connect', { body: { integration: integrationId, role_arn: roleArn() } });
    expect(refused.status, refused.text).toBe(422);
    const error = (refused.body as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('validation_failed');
    expect(error.message).toMatch(/AccessDenied|not authorized|assume/i);
    expect((await t.call('GET', `/api/v1/integrations/${integrationId}`)).body).toMatchObject({ status: 'pending' });
  });

  it('step 2 assumes the role with the external id, activates the connection and queues the first discovery', async () => {
    aws.addRole(roleArn(), externalId);
    const res = await t.call('POST', '/api/v1/integrations/aws/connect', { body: { integration: integrationId, role_arn: roleArn(), settings: { discovery: { regions: ['us-east-1'] } } } });
    expect(res.status, res.text).toBe(201);
    const body = res.body as { integration: { status: string; account: string; metadata: Record<string, unknown> }; run: Run };
    expect(body.integration).toMatchObject({ status: 'active', account: aws.accountId });
    expect(body.integration.metadata).toMatchObject({ external_id: externalId, role_arn: roleArn() });
    expect(body.run).toMatchObject({ object: 'attack_surface_run', trigger: 'connect', integration_id: integrationId });
    const run = await finished(body.run.id);
    expect(run.status, run.error ?? '').toBe('completed');
    expect(run.counts).toEqual({ total: 4, added: 4, removed: 0, unchanged: 0 });
    expect(run.errors).toEqual([]);
    const connected = await t.call('GET', '/api/v1/events?type=integration.connected');
    expect((connected.body as { data: { data: { object: { id: string } } }[] }).data.map((e) => e.data.object.id)).toContain(integrationId);
    expect(aws.rejected).toEqual([]);
  });
});

describe('the inventory', () => {
  it('lists the public endpoints with their kind, source resource and first/last seen; nothing private', async () => {
    const list = await assets();
    expect(list.map((a) => a.host).sort()).toEqual([CDN.domainName, LB2.dnsName, LB1.dnsName, RECORD_HOST].sort());
    const lb1 = byHost(list, LB1.dnsName);
    expect(lb1).toMatchObject({ object: 'attack_surface_asset', kind: 'load_balancer', provider: 'aws', integration_id: integrationId, gone_at: null, coverage: { covered: false } });
    expect(lb1.resource).toMatchObject({ name: LB1.name, region: 'us-east-1' });
    expect(lb1.first_seen_at).toBe(lb1.last_seen_at);
    expect(byHost(list, CDN.domainName)).toMatchObject({ kind: 'cloudfront_distribution', resource: { region: null } });
    expect(byHost(list, RECORD_HOST)).toMatchObject({ kind: 'dns_record', details: { type: 'CNAME' } });
    expect((await assets('?kind=load_balancer')).map((a) => a.host).sort()).toEqual([LB1.dnsName, LB2.dnsName].sort());
    const one = await t.call('GET', `/api/v1/attack-surface/${lb1.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: lb1.id, host: LB1.dnsName });
    // Cursor pagination.
    const page1 = await t.call('GET', '/api/v1/attack-surface?limit=3');
    const next = (page1.body as { pagination: { next: string | null } }).pagination.next;
    expect(next).not.toBeNull();
    const page2 = await t.call('GET', `/api/v1/attack-surface?limit=3&cursor=${next}`);
    expect([...(page1.body as { data: Asset[] }).data, ...(page2.body as { data: Asset[] }).data].map((a) => a.id).sort()).toEqual(list.map((a) => a.id).sort());
  });

  it('marks the load balancer behind a Shield site as covered, and only it', async () => {
    const site = await t.call('POST', '/api/v1/shield/sites', { body: { domain: 'shop.example.com', origin_url: `https://${LB1.dnsName}`, mode: 'log' } });
    expect(site.status, site.text).toBe(201);
    const list = await assets();
    expect(byHost(list, LB1.dnsName).coverage).toEqual({ covered: true, shield_site_id: (site.body as { id: string }).id, scan_schedule_id: null, scan_id: null });
    for (const host of [LB2.dnsName, CDN.domainName, RECORD_HOST]) expect(byHost(list, host).coverage.covered, host).toBe(false);
    expect((await assets('?covered=true')).map((a) => a.host)).toEqual([LB1.dnsName]);
    expect((await assets('?covered=false')).map((a) => a.host).sort()).toEqual([LB2.dnsName, CDN.domainName, RECORD_HOST].sort());
  });

  it('creates a DAST schedule for an uncovered host in one call, which then covers it', async () => {
    const lb2 = byHost(await assets(), LB2.dnsName);
    const res = await t.call('POST', `/api/v1/attack-surface/${lb2.id}/scan-schedule`, { body: {} });
    expect(res.status, res.text).toBe(201);
    const schedule = res.body as { id: string; scan_type: string; target: string; enabled: boolean; next_run_at: string | null };
    expect(schedule).toMatchObject({ scan_type: 'dast', target: `https://${LB2.dnsName}/`, enabled: true });
    expect(schedule.next_run_at).not.toBeNull();
    // The schedule is an ordinary one.
    expect((await t.call('GET', `/api/v1/scan-schedules/${schedule.id}`)).body).toMatchObject({ id: schedule.id, target: `https://${LB2.dnsName}/` });
    expect(byHost(await assets(), LB2.dnsName).coverage).toMatchObject({ covered: true, scan_schedule_id: schedule.id });
    const again = await t.call('POST', `/api/v1/attack-surface/${lb2.id}/scan-schedule`, { body: {} });
    expect(again.status, again.text).toBe(409);
    expect((again.body as { error: { code: string; details: { scan_schedule_id: string } } }).error).toMatchObject({ code: 'conflict', details: { scan_schedule_id: schedule.id } });
    const badCron = await t.call('POST', `/api/v1/attack-surface/${byHost(await assets(), RECORD_HOST).id}/scan-schedule`, { body: { cron: 'every day' } });
    expect(badCron.status, badCron.text).toBe(422);
  });

  it('creates a Shield site for an uncovered host in one call; a taken domain is a 409', async () => {
    const cdn = byHost(await assets(), CDN.domainName);
    const res = await t.call('POST', `/api/v1/attack-surface/${cdn.id}/shield-site`, { body: {} });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ domain: CDN.domainName, origin_url: `https://${CDN.domainName}`, mode: 'log' });
    expect(byHost(await assets(), CDN.domainName).coverage).toMatchObject({ covered: true, shield_site_id: (res.body as { id: string }).id });
    const taken = await t.call('POST', `/api/v1/attack-surface/${cdn.id}/shield-site`, { body: {} });
    expect(taken.status, taken.text).toBe(409);
    // The origin check of POST /api/v1/shield/sites applies.
    const record = byHost(await assets(), RECORD_HOST);
    const metadata = await t.call('POST', `/api/v1/attack-surface/${record.id}/shield-site`, { body: { origin_url: 'http://169.254.169.254' } });
    expect(metadata.status, metadata.text).toBe(422);
  });
});

describe('later discoveries', () => {
  it('diffs against the previous run: one removed (gone_at set), one added, the rest last seen again', async () => {
    const before = await assets();
    aws.inventory.loadBalancers = aws.inventory.loadBalancers.filter((lb) => lb.name !== LB2.name);
    aws.inventory.loadBalancers.push(LB3);
    const run = await discover();
    expect(run.status, run.error ?? '').toBe('completed');
    expect(run.counts).toEqual({ total: 4, added: 1, removed: 1, unchanged: 3 });
    const gone = await assets('?status=gone');
    expect(gone.map((a) => a.host)).toEqual([LB2.dnsName]);
    expect(gone[0]!.gone_at).not.toBeNull();
    const after = await assets();
    expect(after.map((a) => a.host).sort()).toEqual([LB1.dnsName, LB3.dnsName, CDN.domainName, RECORD_HOST].sort());
    const lb1Before = byHost(before, LB1.dnsName);
    const lb1After = byHost(after, LB1.dnsName);
    expect(lb1After.id).toBe(lb1Before.id);
    expect(lb1After.first_seen_at).toBe(lb1Before.first_seen_at);
    expect(Date.parse(lb1After.last_seen_at)).toBeGreaterThan(Date.parse(lb1Before.last_seen_at));
    expect((await assets('?status=all')).length).toBe(5);
  });

  it('a service the role may not read is a scope error; its assets are not marked gone', async () => {
    aws.denyService('route53');
    const record = byHost(await assets(), RECORD_HOST);
    const run = await discover();
    expect(run.status, run.error ?? '').toBe('completed');
    expect(run.errors).toHaveLength(1);
    expect(run.errors[0]).toMatchObject({ scope: 'route53' });
    expect(run.counts).toMatchObject({ removed: 0, total: 4 });
    const still = await t.call('GET', `/api/v1/attack-surface/${record.id}`);
    expect(still.body).toMatchObject({ id: record.id, gone_at: null, last_seen_at: record.last_seen_at });
  });

  it('the scheduler queues one run when one is due, however many schedulers tick', async () => {
    const db = t.server.database.db;
    const a = new DiscoveryScheduler({ db, log: t.server.app.log });
    const b = new DiscoveryScheduler({ db, log: t.server.app.log });
    // The latest run is minutes old: nothing is due.
    expect(await a.tick()).toBe(0);
    // A day and an hour later (the default interval is 24 hours).
    const later = new Date(Date.now() + 25 * 3_600_000);
    const created = await Promise.all([a.tick(later), b.tick(later)]);
    expect(created[0] + created[1]).toBe(1);
    const runs = (await t.call('GET', `/api/v1/attack-surface/runs?integration=${integrationId}`)).body as { data: Run[] };
    const scheduled = runs.data.filter((r) => r.trigger === 'schedule');
    expect(scheduled).toHaveLength(1);
    expect(await a.tick(later)).toBe(0);
    expect((await finished(scheduled[0]!.id)).status).toBe('completed');
  });

  it('a revoked role puts the connection in error with the reason, fails the run and keeps the inventory', async () => {
    const before = await assets();
    aws.revokeRole(roleArn());
    const run = await discover();
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/AccessDenied|not authorized/i);
    const connection = (await t.call('GET', `/api/v1/integrations/${integrationId}`)).body as { status: string; error: string | null };
    expect(connection.status).toBe('error');
    expect(connection.error).toMatch(/AccessDenied|not authorized/i);
    const events = (await t.call('GET', '/api/v1/events?type=integration.error')).body as { data: { data: { object: { id: string; status: string } } }[] };
    expect(events.data.map((e) => e.data.object)).toEqual([expect.objectContaining({ id: integrationId, status: 'error' })]);
    const after = await assets();
    expect(after.map((a) => [a.id, a.gone_at, a.last_seen_at])).toEqual(before.map((a) => [a.id, a.gone_at, a.last_seen_at]));
    // Not retried: one AssumeRole for that run.
    const jobs = await t.server.database.db.selectFrom('jobs').select(['state', 'attempts']).where(sql<boolean>`payload @> ${JSON.stringify({ run_id: run.id })}::jsonb`).execute();
    expect(jobs).toEqual([{ state: 'failed', attempts: 1 }]);
    // A connection in `error` is not scheduled.
    expect(await new DiscoveryScheduler({ db: t.server.database.db, log: t.server.app.log }).tick(new Date(Date.now() + 48 * 3_600_000))).toBe(0);
  });

  it('a manual discovery that works again puts the connection back to active', async () => {
    aws.addRole(roleArn(), externalId);
    aws.allowService('route53');
    const run = await discover();
    expect(run.status, run.error ?? '').toBe('completed');
    expect((await t.call('GET', `/api/v1/integrations/${integrationId}`)).body).toMatchObject({ status: 'active', error: null });
  });

  it('disconnecting removes the inventory and the runs', async () => {
    const deleted = await t.call('DELETE', `/api/v1/integrations/${integrationId}`);
    expect(deleted.status, deleted.text).toBe(204);
    expect(await assets('?status=all')).toEqual([]);
    expect(((await t.call('GET', '/api/v1/attack-surface/runs')).body as { data: Run[] }).data).toEqual([]);
    expect(aws.rejected).toEqual([]);
  });
});
