// The AWS connector against the AWS stand-in: AssumeRole with the external id, every service in
// its own wire protocol (SigV4 re-verified by the stand-in on each request), pagination over more
// than one page for each paginated call, and per-scope failures.
import { createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAwsConnector } from '../../api/attack-surface/aws/connector.ts';
import type { CloudAccount, DiscoveredAsset, ScopeResult } from '../../api/attack-surface/providers/types.ts';
import { ProviderAuthError, ProviderRateLimitError, ProviderUnavailableError } from '../../api/integrations/providers/errors.ts';
import { listenOnLoopback } from '../support/loopback.ts';
import { startAwsStandIn, type AwsCall, type AwsInventory, type AwsStandIn } from '../support/providers/aws.ts';

const ROLE = 'arn:aws:iam::123456789012:role/AegisDiscoveryRole';
const EXTERNAL_ID = 'aegis-ext-7f3a9c';
const REGIONS = ['eu-west-1', 'us-east-1'];
const account: CloudAccount = { roleArn: ROLE, externalId: EXTERNAL_ID, regions: REGIONS };

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function inventory(): AwsInventory {
  return {
    loadBalancers: [
      // 1 200 internet-facing ALBs in one region (and one internal): four pages of 400.
      ...range(1200).map((i) => ({ region: 'eu-west-1', name: `web-${i}`, dnsName: `web-${i}-123.eu-west-1.elb.amazonaws.com`, scheme: 'internet-facing' as const, type: 'application' as const })),
      { region: 'eu-west-1', name: 'internal-api', dnsName: 'internal-internal-api-9.eu-west-1.elb.amazonaws.com', scheme: 'internal', type: 'application' },
      { region: 'us-east-1', name: 'edge-nlb', dnsName: 'Edge-NLB-42.elb.us-east-1.amazonaws.com', scheme: 'internet-facing', type: 'network' },
    ],
    distributions: [
      { id: 'E1SHOP', domainName: 'd111shop.cloudfront.net', aliases: ['www.example.com', 'Shop.Example.com'], comment: 'shop front' },
      // 249 more: three pages of 100.
      ...range(249).map((i) => ({ id: `E${i}X`, domainName: `d${i}x.cloudfront.net`, aliases: [] })),
    ],
    restApis: [
      { region: 'eu-west-1', id: 'a1b2c3d4e5', name: 'orders', stages: ['prod', 'dev'] },
      // 600 more: two pages of 500.
      ...range(600).map((i) => ({ region: 'eu-west-1', id: `r${String(i).padStart(9, '0')}`, name: `rest-${i}`, stages: ['v1'] })),
      { region: 'us-east-1', id: 'usrest0001', name: 'billing', stages: [] },
    ],
    httpApis: [
      { region: 'us-east-1', id: 'h0ttpapi01', name: 'webhooks' },
      ...range(501).map((i) => ({ region: 'eu-west-1', id: `h${String(i).padStart(9, '0')}`, name: `http-${i}` })),
    ],
    instances: [
      // 1 100 running with a public IP: two pages of 1 000.
      ...range(1100).map((i) => ({ region: 'eu-west-1', id: `i-${String(i).padStart(17, '0')}`, name: `app-${i}`, publicIp: `3.${Math.floor(i / 250)}.${i % 250}.10`, publicDnsName: `ec2-3-x-${i}.eu-west-1.compute.amazonaws.com`, state: 'running' as const })),
      { region: 'eu-west-1', id: 'i-stopped', name: 'old', publicIp: '3.99.99.99', state: 'stopped' },
      { region: 'eu-west-1', id: 'i-private', name: 'worker', state: 'running' },
      { region: 'us-east-1', id: 'i-0useast', publicIp: '54.1.2.3', state: 'running' },
    ],
    addresses: [
      { region: 'eu-west-1', allocationId: 'eipalloc-0aaa', publicIp: '52.10.0.1', instanceId: 'i-00000000000000001' },
      { region: 'us-east-1', allocationId: 'eipalloc-0bbb', publicIp: '52.20.0.2' },
    ],
    hostedZones: [
      {
        id: 'Z0EXAMPLE',
        name: 'example.com.',
        private: false,
        records: [
          { name: 'example.com.', type: 'SOA', values: ['ns-1.awsdns-00.com. hostmaster.example.com. 1 7200 900 1209600 86400'] },
          { name: 'example.com.', type: 'NS', values: ['ns-1.awsdns-00.com.'] },
          { name: 'example.com.', type: 'A', aliasTarget: 'd111shop.cloudfront.net.' },
          { name: 'example.com.', type: 'TXT', values: ['"v=spf1 -all"'] },
          { name: 'example.com.', type: 'MX', values: ['10 mail.example.com.'] },
          { name: '*.example.com.', type: 'A', values: ['3.3.3.3'] },
          { name: 'API.example.com.', type: 'CNAME', values: ['a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com'] },
          { name: 'v6.example.com.', type: 'AAAA', values: ['2001:db8::1'] },
          // 700 more: three pages of 300.
          ...range(700).map((i) => ({ name: `host-${i}.example.com.`, type: 'A' as const, values: [`10.1.${Math.floor(i / 250)}.${i % 250}`] })),
        ],
      },
      { id: 'Z0PRIVATE', name: 'corp.internal.', private: true, records: [{ name: 'db.corp.internal.', type: 'A', values: ['10.0.0.5'] }] },
      // 100 more public zones, each with one record: ListHostedZones takes two pages of 100.
      ...range(100).map((i) => ({ id: `Z${String(i).padStart(8, '0')}Q`, name: `zone-${i}.example.net.`, private: false, records: [{ name: `www.zone-${i}.example.net.`, type: 'CNAME' as const, values: [`zone-${i}.example.net`] }] })),
    ],
  };
}

let aws: AwsStandIn;

beforeAll(async () => {
  aws = await startAwsStandIn({ inventory: inventory() });
});
afterAll(async () => {
  await aws.close();
});
beforeEach(() => {
  aws.addRole(ROLE, EXTERNAL_ID);
  aws.calls.length = 0;
});

const assetsOf = (results: ScopeResult[]): DiscoveredAsset[] => results.flatMap((r) => ('assets' in r ? r.assets : []));
const byKind = (assets: DiscoveredAsset[], kind: DiscoveredAsset['kind']): DiscoveredAsset[] => assets.filter((a) => a.kind === kind);
const callsOf = (calls: AwsCall[], action: string, region?: string): number => calls.filter((c) => c.action === action && (region === undefined || c.region === region)).length;

describe('AWS connector: setup and verify', () => {
  it('shows the trust policy for the external id and exactly the read-only permissions it uses', () => {
    const setup = createAwsConnector(aws.settings).setup(EXTERNAL_ID);
    expect(setup.principal).toBe(aws.settings.principalArn);
    expect(setup.trustPolicy).toEqual({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { AWS: aws.settings.principalArn }, Action: 'sts:AssumeRole', Condition: { StringEquals: { 'sts:ExternalId': EXTERNAL_ID } } }],
    });
    const statements = (setup.permissionsPolicy as { Statement: { Action: string | string[] }[] }).Statement;
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])).sort();
    expect(actions).toEqual(
      ['apigateway:GET', 'cloudfront:ListDistributions', 'ec2:DescribeAddresses', 'ec2:DescribeInstances', 'elasticloadbalancing:DescribeLoadBalancers', 'route53:ListHostedZones', 'route53:ListResourceRecordSets'].sort(),
    );
    expect(actions.every((a) => /:(Describe|List|GET$)/.test(a))).toBe(true);

    const anonymous = createAwsConnector({ ...aws.settings, principalArn: undefined }).setup('x');
    expect(anonymous.principal).toBeNull();
    expect(JSON.stringify(anonymous.trustPolicy)).toContain('<your Aegis principal ARN>');
  });

  it('verifies by assuming the role and asking STS who that is', async () => {
    const identity = await createAwsConnector(aws.settings).verify(account);
    expect(identity).toEqual({ accountId: '123456789012', arn: 'arn:aws:sts::123456789012:assumed-role/AegisDiscoveryRole/aegis-discovery' });
    const sts = aws.calls.filter((c) => c.service === 'sts');
    expect(sts.map((c) => c.action)).toEqual(['AssumeRole', 'GetCallerIdentity']);
    expect(sts[0]!.accessKeyId).toBe(aws.settings.credentials!.accessKeyId);
    expect(sts[1]!.accessKeyId).toMatch(/^ASIA/);
    expect(aws.rejected).toEqual([]);
  });

  it('refuses a wrong external id with AWS’s message', async () => {
    const error = await createAwsConnector(aws.settings)
      .verify({ ...account, externalId: 'someone-elses-id' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect((error as ProviderAuthError).message).toContain('is not authorized to perform: sts:AssumeRole');
    expect((error as ProviderAuthError).status).toBe(403);
  });

  it('refuses a revoked role, for verify and for discover (nothing is read)', async () => {
    aws.revokeRole(ROLE);
    const connector = createAwsConnector(aws.settings);
    await expect(connector.verify(account)).rejects.toBeInstanceOf(ProviderAuthError);
    await expect(connector.discover(account, {})).rejects.toBeInstanceOf(ProviderAuthError);
    expect(aws.calls.filter((c) => c.service !== 'sts')).toEqual([]);
  });

  it('says AWS is unavailable when STS cannot be reached', async () => {
    const gone = await listenOnLoopback(createServer());
    await gone.close();
    const error = await createAwsConnector({ ...aws.settings, endpointUrl: gone.url })
      .verify(account)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderUnavailableError);
  });
});

describe('AWS connector: discover', () => {
  let results: ScopeResult[];
  let assets: DiscoveredAsset[];
  /** The run's calls (the outer beforeEach clears `aws.calls` before each test). */
  let calls: AwsCall[];
  const progress: [number, number][] = [];

  beforeAll(async () => {
    aws.addRole(ROLE, EXTERNAL_ID);
    aws.calls.length = 0;
    results = await createAwsConnector(aws.settings).discover(account, { onScope: (done, total) => progress.push([done, total]) });
    assets = assetsOf(results);
    calls = [...aws.calls];
  });

  it('lists every scope once, each succeeding, and reports progress', () => {
    expect(results.map((r) => r.scope).sort()).toEqual(
      ['elbv2:eu-west-1', 'apigateway:eu-west-1', 'ec2:eu-west-1', 'elbv2:us-east-1', 'apigateway:us-east-1', 'ec2:us-east-1', 'cloudfront', 'route53'].sort(),
    );
    expect(results.filter((r) => 'error' in r)).toEqual([]);
    expect(progress).toHaveLength(8);
    expect(progress.at(-1)).toEqual([8, 8]);
  });

  it('keeps only internet-facing load balancers, by lower-case DNS name', () => {
    const lbs = byKind(assets, 'load_balancer');
    expect(lbs).toHaveLength(1201);
    expect(lbs.some((a) => a.host.startsWith('internal-'))).toBe(false);
    const nlb = lbs.find((a) => a.resourceName === 'edge-nlb');
    expect(nlb).toMatchObject({ host: 'edge-nlb-42.elb.us-east-1.amazonaws.com', region: 'us-east-1', details: { scheme: 'internet-facing', type: 'network' } });
    expect(nlb!.resourceId).toMatch(/^arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer\/net\/edge-nlb\//);
  });

  it('lists each CloudFront distribution domain and each alias under the distribution ARN', () => {
    const cf = byKind(assets, 'cloudfront_distribution');
    expect(cf).toHaveLength(252);
    const shop = cf.filter((a) => a.resourceId === 'arn:aws:cloudfront::123456789012:distribution/E1SHOP');
    expect(shop.map((a) => a.host).sort()).toEqual(['d111shop.cloudfront.net', 'shop.example.com', 'www.example.com']);
    expect(shop.every((a) => a.resourceName === 'shop front' && a.region === null)).toBe(true);
  });

  it('lists one API Gateway asset per REST stage and one per HTTP API', () => {
    const apis = byKind(assets, 'api_gateway');
    const orders = apis.filter((a) => a.details.api_id === 'a1b2c3d4e5');
    expect(orders.map((a) => a.details.stage).sort()).toEqual(['dev', 'prod']);
    expect(orders.find((a) => a.details.stage === 'prod')).toMatchObject({
      host: 'a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com',
      resourceId: 'arn:aws:apigateway:eu-west-1::/restapis/a1b2c3d4e5/stages/prod',
      resourceName: 'orders',
      region: 'eu-west-1',
      details: { stage: 'prod', path: '/prod' },
    });
    expect(apis.filter((a) => a.details.api_type === 'rest')).toHaveLength(602);
    const http = apis.filter((a) => a.details.api_type === 'http');
    expect(http).toHaveLength(502);
    expect(http.find((a) => a.resourceName === 'webhooks')).toMatchObject({ host: 'h0ttpapi01.execute-api.us-east-1.amazonaws.com', region: 'us-east-1' });
  });

  it('lists running instances with a public IP, and Elastic IPs', () => {
    const instances = byKind(assets, 'ec2_instance');
    expect(instances).toHaveLength(1101);
    expect(instances.some((a) => a.details.instance_id === 'i-stopped' || a.details.instance_id === 'i-private')).toBe(false);
    expect(instances.find((a) => a.details.instance_id === 'i-00000000000000007')).toMatchObject({
      host: '3.0.7.10',
      resourceName: 'app-7',
      region: 'eu-west-1',
      details: { public_dns_name: 'ec2-3-x-7.eu-west-1.compute.amazonaws.com', name: 'app-7' },
    });
    const eips = byKind(assets, 'elastic_ip');
    expect(eips.map((a) => [a.host, a.details.instance_id]).sort()).toEqual([
      ['52.10.0.1', 'i-00000000000000001'],
      ['52.20.0.2', null],
    ]);
  });

  it('lists A, AAAA and CNAME records of public zones, wildcards as *.zone', () => {
    const dns = byKind(assets, 'dns_record');
    expect(dns).toHaveLength(4 + 700 + 100);
    expect(dns.some((a) => a.host.endsWith('corp.internal'))).toBe(false);
    expect(dns.some((a) => a.details.type === 'TXT' || a.details.type === 'MX' || a.details.type === 'NS' || a.details.type === 'SOA')).toBe(false);
    const find = (host: string, type: string) => dns.find((a) => a.host === host && a.details.type === type);
    expect(find('*.example.com', 'A')?.details).toMatchObject({ wildcard: true, values: ['3.3.3.3'] });
    expect(find('example.com', 'A')?.details).toMatchObject({ alias_target: 'd111shop.cloudfront.net' });
    expect(find('api.example.com', 'CNAME')?.details).toMatchObject({ values: ['a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com'] });
    expect(find('v6.example.com', 'AAAA')).toBeDefined();
    expect(find('host-699.example.com', 'A')).toBeDefined();
    expect(new Set(dns.map((a) => `${a.resourceId}|${a.host}`)).size).toBe(dns.length);
  });

  it('follows every paginated call past its first page', () => {
    // 1 201 load balancers in eu-west-1 (with the internal one): four pages of 400.
    expect(callsOf(calls, 'DescribeLoadBalancers', 'eu-west-1')).toBe(4);
    expect(callsOf(calls, 'ListDistributions')).toBe(3);
    expect(callsOf(calls, 'GetRestApis', 'eu-west-1')).toBe(2);
    expect(callsOf(calls, 'GetApis', 'eu-west-1')).toBe(2);
    expect(callsOf(calls, 'DescribeInstances', 'eu-west-1')).toBe(2);
    expect(callsOf(calls, 'ListHostedZones')).toBe(2);
    // The big zone takes three pages of 300, each other public zone one.
    expect(callsOf(calls, 'ListResourceRecordSets')).toBe(3 + 100);
  });

  it('assumes the role once, then signs every call with the temporary key; global services for us-east-1', () => {
    expect(aws.rejected).toEqual([]);
    const sts = calls.filter((c) => c.service === 'sts');
    expect(sts).toEqual([{ service: 'sts', action: 'AssumeRole', region: 'us-east-1', accessKeyId: aws.settings.credentials!.accessKeyId }]);
    const others = calls.filter((c) => c.service !== 'sts');
    const keys = new Set(others.map((c) => c.accessKeyId));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^ASIA/);
    expect(keys.has(aws.settings.credentials!.accessKeyId)).toBe(false);
    const global = others.filter((c) => c.service === 'cloudfront' || c.service === 'route53');
    expect(global.length).toBeGreaterThan(0);
    expect(global.every((c) => c.region === 'us-east-1')).toBe(true);
    expect(new Set(others.filter((c) => c.service === 'ec2').map((c) => c.region))).toEqual(new Set(REGIONS));
  });
});

describe('AWS connector: scopes the role may not read', () => {
  afterAll(() => {
    for (const service of ['route53', 'ec2', 'apigateway']) aws.allowService(service);
  });

  it('fails only the denied scopes, as access_denied, in each protocol’s error shape', async () => {
    aws.denyService('route53');
    aws.denyService('ec2');
    aws.denyService('apigateway');
    const results = await createAwsConnector(aws.settings).discover({ ...account, regions: ['eu-west-1'] }, {});
    const errors = Object.fromEntries(results.flatMap((r) => ('error' in r ? [[r.scope, r.error.code]] : [])));
    expect(errors).toEqual({ route53: 'access_denied', 'ec2:eu-west-1': 'access_denied', 'apigateway:eu-west-1': 'access_denied' });
    const denied = results.find((r) => r.scope === 'route53');
    expect(denied && 'error' in denied ? denied.error.message : '').toContain('not authorized');
    const ok = results.filter((r) => 'assets' in r);
    expect(ok.map((r) => r.scope).sort()).toEqual(['cloudfront', 'elbv2:eu-west-1']);
    expect(byKind(assetsOf(ok), 'load_balancer')).toHaveLength(1200);
    expect(aws.rejected).toEqual([]);
  });
});

describe('AWS connector: throttling and outages', () => {
  afterAll(() => {
    for (const service of ['sts', 'ec2', 'elasticloadbalancing']) aws.failService(service, 'throttle', 0);
  });

  it('retries a throttled AssumeRole, and reports lasting throttling as a rate limit', async () => {
    aws.failService('sts', 'throttle', 2);
    await expect(createAwsConnector(aws.settings).verify(account)).resolves.toMatchObject({ accountId: '123456789012' });
    expect(aws.calls.filter((c) => c.action === 'AssumeRole')).toHaveLength(3);

    aws.failService('sts', 'throttle');
    await expect(createAwsConnector(aws.settings).verify(account)).rejects.toBeInstanceOf(ProviderRateLimitError);
  });

  it('reports an STS outage as unavailable', async () => {
    aws.failService('sts', 'unavailable');
    await expect(createAwsConnector(aws.settings).discover(account, {})).rejects.toBeInstanceOf(ProviderUnavailableError);
    aws.failService('sts', 'unavailable', 0);
  });

  it('fails a scope whose service stays down with AWS’s error name; a briefly throttled one recovers', async () => {
    aws.failService('ec2', 'unavailable');
    aws.failService('elasticloadbalancing', 'throttle', 1);
    const results = await createAwsConnector(aws.settings).discover({ ...account, regions: ['eu-west-1'] }, {});
    const ec2 = results.find((r) => r.scope === 'ec2:eu-west-1');
    expect(ec2 && 'error' in ec2 ? ec2.error.code : null).toBe('Unavailable');
    // Four attempts in all, then the scope gives up.
    expect(aws.calls.filter((c) => c.action === 'DescribeInstances')).toHaveLength(4);
    const elb = results.find((r) => r.scope === 'elbv2:eu-west-1');
    expect(elb && 'assets' in elb ? elb.assets.length : null).toBe(1200);
    expect(results.filter((r) => 'error' in r).map((r) => r.scope)).toEqual(['ec2:eu-west-1']);
  });
});

describe('AWS connector: abort', () => {
  it('stops when the signal aborts mid-run', async () => {
    const controller = new AbortController();
    const run = createAwsConnector(aws.settings).discover(account, { signal: controller.signal, onScope: () => controller.abort(new Error('stopped by test')) });
    await expect(run).rejects.toThrow('stopped by test');
  });

  it('reads nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(createAwsConnector(aws.settings).discover(account, { signal: controller.signal })).rejects.toThrow();
    expect(aws.calls).toEqual([]);
  });
});
