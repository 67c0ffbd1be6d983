// A small AWS on 127.0.0.1 for tests: one HTTP server answering every service Aegis's discovery
// calls (the SDK clients get `endpoint: url`), each in its documented wire protocol so the SDK
// parses the answers unchanged:
//   - STS AssumeRole / GetCallerIdentity (awsQuery, 2011-06-15 namespace)
//   - ELBv2 DescribeLoadBalancers (awsQuery, Marker/NextMarker, PageSize ≤ 400)
//   - EC2 DescribeInstances (NextToken/MaxResults 5–1000, instance-state-name filter) and
//     DescribeAddresses (ec2 protocol, <requestId>, <Response><Errors> errors)
//   - CloudFront ListDistributions (restXml, Marker/MaxItems/IsTruncated/NextMarker)
//   - Route 53 ListHostedZones (marker, maxitems ≤ 100) and ListResourceRecordSets (name/type,
//     NextRecordName/NextRecordType, maxitems ≤ 300; `*` answered as `\052` as Route 53 does)
//   - API Gateway GetRestApis (position/limit ≤ 500), GetStages, and v2 GetApis (nextToken) — restJson1
// Every request must carry SigV4: the service comes from the credential scope; the signature is
// recomputed with @smithy/signature-v4 from the received method, path, query, signed headers and
// body, and compared. STS AssumeRole must be signed with Aegis's base key (GetCallerIdentity
// takes either key); every other service with a temporary key AssumeRole issued plus its
// x-amz-security-token; CloudFront and Route 53 for us-east-1. A request that breaks any of this,
// or a parameter the real API refuses (page sizes, unknown actions and filters), is recorded in
// `rejected` and answered with the protocol's own error. Refusals that are AWS working as designed
// are not: AssumeRole on a role that is unknown, revoked or given the wrong external id
// (AccessDenied), denyService (AccessDenied / UnauthorizedOperation / AccessDeniedException; API
// Gateway v1 and v2 share the signing name `apigateway`), and failService (throttling, 503).
import { createHash, createHmac, randomBytes, randomUUID, type Hash, type Hmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsSettings } from '../../../api/attack-surface/providers/settings.ts';
import { listenOnLoopback } from '../loopback.ts';

export interface AwsInventory {
  loadBalancers: { region: string; name: string; dnsName: string; scheme: 'internet-facing' | 'internal'; type: 'application' | 'network' }[];
  distributions: { id: string; domainName: string; aliases: string[]; comment?: string; enabled?: boolean }[];
  /** API Gateway v1 (REST). */
  restApis: { region: string; id: string; name: string; stages: string[] }[];
  /** API Gateway v2 (HTTP/WebSocket); ApiEndpoint https://<id>.execute-api.<region>.amazonaws.com. */
  httpApis: { region: string; id: string; name: string }[];
  instances: { region: string; id: string; name?: string; publicIp?: string; publicDnsName?: string; state?: 'running' | 'stopped' }[];
  addresses: { region: string; allocationId: string; publicIp: string; instanceId?: string }[];
  hostedZones: {
    id: string;
    name: string;
    private: boolean;
    records: { name: string; type: 'A' | 'AAAA' | 'CNAME' | 'TXT' | 'MX' | 'NS' | 'SOA'; values?: string[]; aliasTarget?: string }[];
  }[];
}

export interface AwsCall {
  service: string;
  action: string;
  region: string;
  accessKeyId: string;
}

export interface AwsStandIn {
  url: string;
  /** For ServerConfig.cloud.aws: endpointUrl = url, stsRegion 'us-east-1', principalArn of "Aegis", credentials = Aegis's fixed base keys. */
  settings: AwsSettings;
  accountId: string;
  /** A role Aegis may assume with that external id. */
  addRole(roleArn: string, externalId: string): void;
  /** AssumeRole → AccessDenied from now on. */
  revokeRole(roleArn: string): void;
  /** e.g. 'route53': that service answers AccessDenied (its protocol's error shape). */
  denyService(service: string): void;
  /** Undoes denyService. */
  allowService(service: string): void;
  /**
   * The next `times` requests of `service` (default: all from now on) answer its protocol's
   * throttling error ('throttle') or a 503 ('unavailable'); `times` 0 clears it.
   */
  failService(service: string, failure: 'throttle' | 'unavailable', times?: number): void;
  /** Mutable between runs. */
  inventory: AwsInventory;
  calls: AwsCall[];
  /** Requests that broke the protocol/SigV4 expectations. */
  rejected: { service: string; reason: string }[];
  close(): Promise<void>;
}

type Protocol = 'query' | 'ec2' | 'restXml' | 'restJson';

const SERVICES: Record<string, { protocol: Protocol; version?: string; xmlns?: string; global?: boolean }> = {
  sts: { protocol: 'query', version: '2011-06-15', xmlns: 'https://sts.amazonaws.com/doc/2011-06-15/' },
  elasticloadbalancing: { protocol: 'query', version: '2015-12-01', xmlns: 'http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/' },
  ec2: { protocol: 'ec2', version: '2016-11-15', xmlns: 'http://ec2.amazonaws.com/doc/2016-11-15/' },
  cloudfront: { protocol: 'restXml', xmlns: 'http://cloudfront.amazonaws.com/doc/2020-05-31/', global: true },
  route53: { protocol: 'restXml', xmlns: 'https://route53.amazonaws.com/doc/2013-04-01/', global: true },
  apigateway: { protocol: 'restJson' },
};

/** An error in the wire shape of `protocol`. */
class AwsFault extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function xmlEscape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** `<name>value</name>`, or nothing when the value is absent. */
function el(name: string, value: string | number | boolean | undefined | null): string {
  return value === undefined || value === null ? '' : `<${name}>${xmlEscape(String(value))}</${name}>`;
}

const xml = (body: string, status = 200): Reply => ({ status, headers: { 'content-type': 'text/xml' }, body: `<?xml version="1.0" encoding="UTF-8"?>\n${body}` });
const json = (body: unknown, status = 200): Reply => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function faultReply(protocol: Protocol, fault: AwsFault, xmlns: string | undefined): Reply {
  const requestId = randomUUID();
  switch (protocol) {
    case 'ec2':
      return xml(`<Response><Errors><Error>${el('Code', fault.code)}${el('Message', fault.message)}</Error></Errors>${el('RequestID', requestId)}</Response>`, fault.status);
    case 'restJson':
      return { status: fault.status, headers: { 'content-type': 'application/json', 'x-amzn-errortype': fault.code, 'x-amzn-requestid': requestId }, body: JSON.stringify({ message: fault.message }) };
    default: {
      const type = fault.status >= 500 ? 'Receiver' : 'Sender';
      const ns = xmlns ? ` xmlns="${xmlns}"` : '';
      return xml(`<ErrorResponse${ns}><Error>${el('Type', type)}${el('Code', fault.code)}${el('Message', fault.message)}</Error>${el('RequestId', requestId)}</ErrorResponse>`, fault.status);
    }
  }
}

/** Throttling and outage errors as each protocol's services name them. */
function failureFault(protocol: Protocol, failure: 'throttle' | 'unavailable'): AwsFault {
  if (failure === 'throttle') {
    if (protocol === 'ec2') return new AwsFault(503, 'RequestLimitExceeded', 'Request limit exceeded.');
    if (protocol === 'restJson') return new AwsFault(429, 'TooManyRequestsException', 'Too Many Requests');
    return new AwsFault(400, 'Throttling', 'Rate exceeded');
  }
  if (protocol === 'ec2') return new AwsFault(503, 'Unavailable', 'The server is overloaded and cannot handle the request.');
  if (protocol === 'restJson') return new AwsFault(503, 'ServiceUnavailableException', 'Service Unavailable');
  return new AwsFault(503, 'ServiceUnavailable', 'Service is unavailable. Please try again later.');
}

/** node:crypto behind the Checksum interface @smithy/signature-v4 expects. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(this.secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBuffer(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

const AUTH_RE = /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]{16,128})\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** An opaque page token (what AWS hands out is opaque too): the index of the next item. */
const token = (index: number, salt: string): string => Buffer.from(`${salt}:${index}`).toString('base64');
function untoken(value: string | null | undefined, salt: string, what: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const [s, n] = Buffer.from(value, 'base64').toString('utf8').split(':');
  if (s !== salt || !n || !/^\d+$/.test(n)) throw new AwsFault(400, 'InvalidParameterValue', `Invalid ${what}: ${value}`);
  return Number(n);
}

/** A page size in [min, max], `fallback` when absent. */
function pageSize(raw: string | null | undefined, fallback: number, min: number, max: number, name: string, code = 'ValidationError'): number {
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new AwsFault(400, code, `${name} must be between ${min} and ${max}; got ${raw}`);
  return Number(raw);
}

const stableHex = (value: string, length: number): string => createHash('sha1').update(value).digest('hex').slice(0, length);

/** Route 53 answers `*` in names as the octal escape `\052`, and with the trailing dot. */
const r53Name = (name: string): string => {
  const dotted = name.endsWith('.') ? name : `${name}.`;
  return dotted.toLowerCase().replace(/\*/g, '\\052');
};
/** Route 53's listing order: labels compared right to left, then type. */
const r53Key = (name: string): string => name.split('.').reverse().join('\u0000');

export async function startAwsStandIn(options: { inventory?: Partial<AwsInventory> } = {}): Promise<AwsStandIn> {
  const accountId = '123456789012';
  const base = { accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(20).toString('base64') };
  const principalArn = 'arn:aws:iam::999999999999:role/AegisDiscovery';
  const roles = new Map<string, string>();
  const revoked = new Set<string>();
  const denied = new Set<string>();
  const failures = new Map<string, { failure: 'throttle' | 'unavailable'; remaining: number }>();
  const sessions = new Map<string, { secretAccessKey: string; sessionToken: string; roleArn: string; expires: number }>();
  const calls: AwsCall[] = [];
  const rejected: { service: string; reason: string }[] = [];
  const salt = randomBytes(4).toString('hex');

  const standIn: AwsStandIn = {
    url: '',
    settings: { endpointUrl: '', stsRegion: 'us-east-1', principalArn, credentials: { ...base } },
    accountId,
    addRole: (roleArn, externalId) => {
      roles.set(roleArn, externalId);
      revoked.delete(roleArn);
    },
    revokeRole: (roleArn) => {
      revoked.add(roleArn);
    },
    denyService: (service) => {
      denied.add(service);
    },
    allowService: (service) => {
      denied.delete(service);
    },
    failService: (service, failure, times = Number.POSITIVE_INFINITY) => {
      if (times <= 0) failures.delete(service);
      else failures.set(service, { failure, remaining: times });
    },
    inventory: {
      loadBalancers: [],
      distributions: [],
      restApis: [],
      httpApis: [],
      instances: [],
      addresses: [],
      hostedZones: [],
      ...options.inventory,
    },
    calls,
    rejected,
    close: async () => {},
  };

  // --- SigV4 -------------------------------------------------------------------------------------

  /** Which service and region signed the request, and with which key; throws the auth fault. */
  async function authenticate(req: IncomingMessage, path: string, rawQuery: string, body: Buffer): Promise<{ service: string; region: string; accessKeyId: string; temporary: boolean }> {
    const auth = req.headers.authorization;
    const match = typeof auth === 'string' ? AUTH_RE.exec(auth) : null;
    if (!match) throw new AwsFault(403, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
    const [, accessKeyId, day, region, service, signedList, signature] = match as unknown as [string, string, string, string, string, string, string];
    if (!SERVICES[service]) throw new AwsFault(403, 'InvalidClientTokenId', `Credential should be scoped to a valid service: ${service}`);
    const amzDate = req.headers['x-amz-date'];
    if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate)) throw new AwsFault(403, 'IncompleteSignature', 'x-amz-date is missing or malformed');
    if (amzDate.slice(0, 8) !== day) throw new AwsFault(403, 'SignatureDoesNotMatch', 'Credential date does not match x-amz-date');
    const signed = signedList.split(';');
    if (!signed.includes('host') || !signed.includes('x-amz-date')) throw new AwsFault(403, 'IncompleteSignature', 'SignedHeaders must include host and x-amz-date');
    if (SERVICES[service]!.global && region !== 'us-east-1') throw new AwsFault(403, 'SignatureDoesNotMatch', `Credential should be scoped to a valid region: ${region} (expecting us-east-1)`);

    let secretAccessKey: string;
    let sessionToken: string | undefined;
    let temporary = false;
    if (accessKeyId === base.accessKeyId) {
      secretAccessKey = base.secretAccessKey;
      if (req.headers['x-amz-security-token'] !== undefined) throw new AwsFault(403, 'InvalidClientTokenId', 'The security token included in the request is invalid');
    } else {
      const session = sessions.get(accessKeyId);
      if (!session) throw new AwsFault(403, 'InvalidClientTokenId', 'The security token included in the request is invalid');
      if (session.expires < Date.now()) throw new AwsFault(403, 'ExpiredToken', 'The security token included in the request is expired');
      if (req.headers['x-amz-security-token'] !== session.sessionToken || !signed.includes('x-amz-security-token')) {
        throw new AwsFault(403, 'InvalidClientTokenId', 'The security token included in the request is invalid');
      }
      secretAccessKey = session.secretAccessKey;
      sessionToken = session.sessionToken;
      temporary = true;
    }

    // Re-sign what arrived (only the headers the client signed) and compare.
    const headers: Record<string, string> = {};
    for (const name of signed) {
      const value = req.headers[name];
      if (value === undefined) throw new AwsFault(403, 'SignatureDoesNotMatch', `Signed header ${name} is missing`);
      headers[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const contentHash = req.headers['x-amz-content-sha256'];
    if (typeof contentHash === 'string' && contentHash !== createHash('sha256').update(body).digest('hex')) {
      throw new AwsFault(403, 'SignatureDoesNotMatch', 'x-amz-content-sha256 does not match the body');
    }
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of new URLSearchParams(rawQuery)) {
      const prior = query[key];
      query[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
    }
    const signer = new SignatureV4({
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
      region,
      service,
      sha256: NodeSha256,
      applyChecksum: false,
    });
    const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const host = headers.host ?? '';
    const resigned = await signer.sign(
      { method: req.method ?? 'GET', protocol: 'http:', hostname: host.split(':')[0] ?? '', path, query, headers, body: body.length ? body : undefined },
      { signingDate, signableHeaders: new Set(signed) },
    );
    const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization ?? resigned.headers.Authorization))?.[1];
    if (expected !== signature) throw new AwsFault(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    return { service, region, accessKeyId, temporary };
  }

  // --- STS ---------------------------------------------------------------------------------------

  function sts(action: string, form: URLSearchParams, caller: { accessKeyId: string; temporary: boolean }): Reply {
    const ns = SERVICES.sts!.xmlns!;
    const meta = `<ResponseMetadata>${el('RequestId', randomUUID())}</ResponseMetadata>`;
    if (action === 'GetCallerIdentity') {
      const session = sessions.get(caller.accessKeyId);
      const arn = session ? assumedArn(session.roleArn) : principalArn;
      const account = session ? roleAccount(session.roleArn) : '999999999999';
      const userId = session ? `AROA${stableHex(session.roleArn, 16).toUpperCase()}:aegis-discovery` : 'AROAAEGISPRINCIPAL';
      return xml(`<GetCallerIdentityResponse xmlns="${ns}"><GetCallerIdentityResult>${el('Arn', arn)}${el('UserId', userId)}${el('Account', account)}</GetCallerIdentityResult>${meta}</GetCallerIdentityResponse>`);
    }
    if (action !== 'AssumeRole') throw new AwsFault(400, 'InvalidAction', `Could not find operation ${action} for version 2011-06-15`);
    if (caller.temporary) throw new AwsFault(403, 'AccessDenied', 'AssumeRole must be called with Aegis base credentials in this stand-in');
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    const externalId = form.get('ExternalId');
    const duration = form.get('DurationSeconds');
    if (!/^arn:aws:iam::\d{12}:role\/[\w+=,.@/-]+$/.test(roleArn)) throw new AwsFault(400, 'ValidationError', `1 validation error detected: Value '${roleArn}' at 'roleArn' failed to satisfy constraint`);
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName)) throw new AwsFault(400, 'ValidationError', `1 validation error detected: Value '${sessionName}' at 'roleSessionName' failed to satisfy constraint`);
    if (duration !== null && (!/^\d+$/.test(duration) || Number(duration) < 900 || Number(duration) > 3600)) {
      throw new AwsFault(400, 'ValidationError', 'The requested DurationSeconds exceeds the MaxSessionDuration set for this role.');
    }
    const expectedExternalId = roles.get(roleArn);
    if (expectedExternalId === undefined || revoked.has(roleArn) || externalId !== expectedExternalId) {
      throw new AwsFault(403, 'AccessDenied', `User: ${principalArn} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`);
    }
    const seconds = duration === null ? 3600 : Number(duration);
    const keyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const session = { secretAccessKey: randomBytes(20).toString('base64'), sessionToken: randomBytes(48).toString('base64'), roleArn, expires: Date.now() + seconds * 1000 };
    sessions.set(keyId, session);
    const credentials = `<Credentials>${el('AccessKeyId', keyId)}${el('SecretAccessKey', session.secretAccessKey)}${el('SessionToken', session.sessionToken)}${el('Expiration', new Date(session.expires).toISOString())}</Credentials>`;
    const user = `<AssumedRoleUser>${el('AssumedRoleId', `AROA${stableHex(roleArn, 16).toUpperCase()}:${sessionName}`)}${el('Arn', assumedArn(roleArn, sessionName))}</AssumedRoleUser>`;
    return xml(`<AssumeRoleResponse xmlns="${ns}"><AssumeRoleResult>${credentials}${user}</AssumeRoleResult>${meta}</AssumeRoleResponse>`);
  }
  const roleAccount = (roleArn: string): string => roleArn.split(':')[4] ?? accountId;
  const assumedArn = (roleArn: string, sessionName = 'aegis-discovery'): string => `arn:aws:sts::${roleAccount(roleArn)}:assumed-role/${roleArn.split('/').pop()}/${sessionName}`;

  // --- ELBv2 -------------------------------------------------------------------------------------

  function elb(action: string, form: URLSearchParams, region: string): Reply {
    if (action !== 'DescribeLoadBalancers') throw new AwsFault(400, 'InvalidAction', `Could not find operation ${action} for version 2015-12-01`);
    const size = pageSize(form.get('PageSize'), 400, 1, 400, 'PageSize');
    const start = untoken(form.get('Marker'), `${salt}elb${region}`, 'Marker');
    const all = standIn.inventory.loadBalancers.filter((lb) => lb.region === region);
    const page = all.slice(start, start + size);
    const members = page
      .map((lb) => {
        const kind = lb.type === 'application' ? 'app' : 'net';
        const arn = `arn:aws:elasticloadbalancing:${region}:${accountId}:loadbalancer/${kind}/${lb.name}/${stableHex(lb.name + region, 16)}`;
        return (
          `<member>${el('LoadBalancerArn', arn)}${el('DNSName', lb.dnsName)}${el('CanonicalHostedZoneId', 'Z35SXDOTRQ7X7K')}` +
          `${el('CreatedTime', '2024-01-02T03:04:05.000Z')}${el('LoadBalancerName', lb.name)}${el('Scheme', lb.scheme)}${el('VpcId', 'vpc-0abc')}` +
          `<State>${el('Code', 'active')}</State>${el('Type', lb.type)}${el('IpAddressType', 'ipv4')}</member>`
        );
      })
      .join('');
    const next = start + size < all.length ? el('NextMarker', token(start + size, `${salt}elb${region}`)) : '';
    const ns = SERVICES.elasticloadbalancing!.xmlns!;
    return xml(`<DescribeLoadBalancersResponse xmlns="${ns}"><DescribeLoadBalancersResult><LoadBalancers>${members}</LoadBalancers>${next}</DescribeLoadBalancersResult><ResponseMetadata>${el('RequestId', randomUUID())}</ResponseMetadata></DescribeLoadBalancersResponse>`);
  }

  // --- EC2 ---------------------------------------------------------------------------------------

  /** EC2's Filter.N.Name / Filter.N.Value.M lists. */
  function ec2Filters(form: URLSearchParams): Map<string, string[]> {
    const filters = new Map<string, string[]>();
    for (const [key, value] of form) {
      const m = /^Filter\.(\d+)\.Name$/.exec(key);
      if (!m) continue;
      const values: string[] = [];
      for (let i = 1; form.has(`Filter.${m[1]}.Value.${i}`); i++) values.push(form.get(`Filter.${m[1]}.Value.${i}`)!);
      filters.set(value, values);
    }
    return filters;
  }

  function ec2(action: string, form: URLSearchParams, region: string): Reply {
    const ns = SERVICES.ec2!.xmlns!;
    const requestId = el('requestId', randomUUID());
    const filters = ec2Filters(form);
    for (const name of filters.keys()) {
      if (name !== 'instance-state-name' && name !== 'domain') throw new AwsFault(400, 'InvalidParameterValue', `The filter '${name}' is invalid`);
    }
    if (action === 'DescribeInstances') {
      if (form.has('MaxResults') && [...form.keys()].some((k) => k.startsWith('InstanceId.'))) {
        throw new AwsFault(400, 'InvalidParameterCombination', 'The parameter instancesSet cannot be used with the parameter maxResults');
      }
      const states = filters.get('instance-state-name');
      const all = standIn.inventory.instances.filter((i) => i.region === region && (!states || states.includes(i.state ?? 'running')));
      const size = pageSize(form.get('MaxResults'), all.length || 1, 5, 1000, 'MaxResults', 'InvalidParameterValue');
      const start = untoken(form.get('NextToken'), `${salt}ec2${region}`, 'NextToken');
      const page = all.slice(start, start + size);
      const items = page
        .map((i) => {
          const state = i.state ?? 'running';
          const tags = i.name === undefined ? '' : `<tagSet><item>${el('key', 'Name')}${el('value', i.name)}</item></tagSet>`;
          const instance =
            `<item>${el('instanceId', i.id)}${el('imageId', 'ami-0abc')}<instanceState>${el('code', state === 'running' ? 16 : 80)}${el('name', state)}</instanceState>` +
            `${el('privateDnsName', `ip-10-0-0-1.${region}.compute.internal`)}${el('dnsName', i.publicDnsName ?? '')}${el('instanceType', 't3.micro')}` +
            `${el('privateIpAddress', '10.0.0.1')}${el('ipAddress', i.publicIp)}${tags}</item>`;
          return `<item>${el('reservationId', `r-${stableHex(i.id, 17)}`)}${el('ownerId', accountId)}<groupSet/><instancesSet>${instance}</instancesSet></item>`;
        })
        .join('');
      const next = start + size < all.length ? el('nextToken', token(start + size, `${salt}ec2${region}`)) : '';
      return xml(`<DescribeInstancesResponse xmlns="${ns}">${requestId}<reservationSet>${items}</reservationSet>${next}</DescribeInstancesResponse>`);
    }
    if (action === 'DescribeAddresses') {
      // DescribeAddresses is not paginated: AWS answers every address of the region at once.
      if (form.has('MaxResults') || form.has('NextToken')) throw new AwsFault(400, 'InvalidParameterValue', 'DescribeAddresses takes no MaxResults/NextToken');
      const items = standIn.inventory.addresses
        .filter((a) => a.region === region)
        .map((a) => `<item>${el('publicIp', a.publicIp)}${el('allocationId', a.allocationId)}${el('domain', 'vpc')}${el('instanceId', a.instanceId)}${el('networkBorderGroup', region)}</item>`)
        .join('');
      return xml(`<DescribeAddressesResponse xmlns="${ns}">${requestId}<addressesSet>${items}</addressesSet></DescribeAddressesResponse>`);
    }
    throw new AwsFault(400, 'InvalidAction', `The action ${action} is not valid for this web service.`);
  }

  // --- CloudFront --------------------------------------------------------------------------------

  function cloudfront(method: string, path: string, query: URLSearchParams): { action: string; reply: () => Reply } {
    if (method !== 'GET' || path !== '/2020-05-31/distribution') throw new AwsFault(404, 'NoSuchResource', `Unknown CloudFront resource ${method} ${path}`);
    return {
      action: 'ListDistributions',
      reply: () => {
        const size = pageSize(query.get('MaxItems'), 100, 1, 1000, 'MaxItems', 'InvalidArgument');
        const marker = query.get('Marker') ?? '';
        const start = untoken(marker, `${salt}cf`, 'Marker');
        const all = standIn.inventory.distributions;
        const page = all.slice(start, start + size);
        const truncated = start + size < all.length;
        const items = page
          .map((d) => {
            const aliases = d.aliases.length ? `<Items>${d.aliases.map((a) => el('CNAME', a)).join('')}</Items>` : '';
            return (
              `<DistributionSummary>${el('Id', d.id)}${el('ARN', `arn:aws:cloudfront::${accountId}:distribution/${d.id}`)}${el('Status', 'Deployed')}` +
              `${el('LastModifiedTime', '2024-01-02T03:04:05.000Z')}${el('DomainName', d.domainName)}<Aliases>${el('Quantity', d.aliases.length)}${aliases}</Aliases>` +
              `<Origins>${el('Quantity', 1)}<Items><Origin>${el('Id', 'origin-1')}${el('DomainName', 'origin.example.com')}</Origin></Items></Origins>` +
              `${el('Comment', d.comment ?? '')}${el('PriceClass', 'PriceClass_All')}${el('Enabled', d.enabled ?? true)}${el('HttpVersion', 'http2')}${el('IsIPV6Enabled', true)}${el('Staging', false)}</DistributionSummary>`
            );
          })
          .join('');
        const body =
          `<DistributionList xmlns="${SERVICES.cloudfront!.xmlns}">${el('Marker', marker)}${truncated ? el('NextMarker', token(start + size, `${salt}cf`)) : ''}` +
          `${el('MaxItems', size)}${el('IsTruncated', truncated)}${el('Quantity', page.length)}${page.length ? `<Items>${items}</Items>` : ''}</DistributionList>`;
        return xml(body);
      },
    };
  }

  // --- Route 53 ----------------------------------------------------------------------------------

  const zoneId = (id: string): string => id.replace(/^\/hostedzone\//, '');

  function route53(method: string, path: string, query: URLSearchParams): { action: string; reply: () => Reply } {
    const ns = SERVICES.route53!.xmlns!;
    if (method === 'GET' && path === '/2013-04-01/hostedzone') {
      return {
        action: 'ListHostedZones',
        reply: () => {
          const size = pageSize(query.get('maxitems'), 100, 1, 100, 'maxitems', 'InvalidInput');
          const marker = query.get('marker') ?? '';
          const zones = standIn.inventory.hostedZones;
          const start = marker ? zones.findIndex((z) => zoneId(z.id) === marker) : 0;
          if (start < 0) throw new AwsFault(400, 'InvalidInput', `Invalid marker: ${marker}`);
          const page = zones.slice(start, start + size);
          const truncated = start + size < zones.length;
          const items = page
            .map(
              (z) =>
                `<HostedZone>${el('Id', `/hostedzone/${zoneId(z.id)}`)}${el('Name', r53Name(z.name))}${el('CallerReference', `ref-${zoneId(z.id)}`)}` +
                `<Config>${el('PrivateZone', z.private)}</Config>${el('ResourceRecordSetCount', z.records.length)}</HostedZone>`,
            )
            .join('');
          const next = truncated ? el('NextMarker', zoneId(zones[start + size]!.id)) : '';
          return xml(`<ListHostedZonesResponse xmlns="${ns}"><HostedZones>${items}</HostedZones>${el('Marker', marker)}${el('IsTruncated', truncated)}${next}${el('MaxItems', size)}</ListHostedZonesResponse>`);
        },
      };
    }
    const m = /^\/2013-04-01\/hostedzone\/([A-Z0-9]+)\/rrset\/?$/.exec(path);
    if (method === 'GET' && m) {
      return {
        action: 'ListResourceRecordSets',
        reply: () => {
          const zone = standIn.inventory.hostedZones.find((z) => zoneId(z.id) === m[1]);
          if (!zone) throw new AwsFault(404, 'NoSuchHostedZone', `No hosted zone found with ID: ${m[1]}`);
          const size = pageSize(query.get('maxitems'), 300, 1, 300, 'maxitems', 'InvalidInput');
          const startName = query.get('name');
          const startType = query.get('type');
          if (startType !== null && startName === null) throw new AwsFault(400, 'InvalidInput', 'The input is not valid: type requires name');
          const records = zone.records
            .map((r) => ({ ...r, wire: r53Name(r.name) }))
            .sort((a, b) => (r53Key(a.wire) < r53Key(b.wire) ? -1 : r53Key(a.wire) > r53Key(b.wire) ? 1 : a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
          let start = 0;
          if (startName !== null) {
            const key = r53Key(r53Name(startName));
            start = records.findIndex((r) => r53Key(r.wire) > key || (r53Key(r.wire) === key && (startType === null || r.type >= startType)));
            if (start < 0) start = records.length;
          }
          const page = records.slice(start, start + size);
          const truncated = start + size < records.length;
          const sets = page
            .map((r) => {
              const values = r.aliasTarget ? '' : `${el('TTL', 300)}<ResourceRecords>${(r.values ?? []).map((v) => `<ResourceRecord>${el('Value', v)}</ResourceRecord>`).join('')}</ResourceRecords>`;
              const alias = r.aliasTarget ? `<AliasTarget>${el('HostedZoneId', 'Z2FDTNDATAQYW2')}${el('DNSName', r53Name(r.aliasTarget))}${el('EvaluateTargetHealth', false)}</AliasTarget>` : '';
              return `<ResourceRecordSet>${el('Name', r.wire)}${el('Type', r.type)}${values}${alias}</ResourceRecordSet>`;
            })
            .join('');
          const following = truncated ? records[start + size]! : null;
          const next = following ? `${el('NextRecordName', following.wire)}${el('NextRecordType', following.type)}` : '';
          return xml(`<ListResourceRecordSetsResponse xmlns="${ns}"><ResourceRecordSets>${sets}</ResourceRecordSets>${el('IsTruncated', truncated)}${next}${el('MaxItems', size)}</ListResourceRecordSetsResponse>`);
        },
      };
    }
    throw new AwsFault(404, 'NoSuchResource', `Unknown Route 53 resource ${method} ${path}`);
  }

  // --- API Gateway (v1 and v2 share the signing name) ----------------------------------------------

  function apigateway(method: string, path: string, query: URLSearchParams, region: string): { action: string; reply: () => Reply } {
    if (method === 'GET' && path === '/restapis') {
      return {
        action: 'GetRestApis',
        reply: () => {
          const size = pageSize(query.get('limit'), 25, 1, 500, 'limit', 'BadRequestException');
          const start = untoken(query.get('position'), `${salt}rest${region}`, 'position');
          const all = standIn.inventory.restApis.filter((a) => a.region === region);
          const page = all.slice(start, start + size);
          const item = page.map((a) => ({ id: a.id, name: a.name, createdDate: 1704164645, apiKeySource: 'HEADER', endpointConfiguration: { types: ['EDGE'] }, disableExecuteApiEndpoint: false }));
          return json({ item, ...(start + size < all.length ? { position: token(start + size, `${salt}rest${region}`) } : {}) });
        },
      };
    }
    const stages = /^\/restapis\/([^/]+)\/stages$/.exec(path);
    if (method === 'GET' && stages) {
      return {
        action: 'GetStages',
        reply: () => {
          const api = standIn.inventory.restApis.find((a) => a.region === region && a.id === decodeURIComponent(stages[1]!));
          if (!api) throw new AwsFault(404, 'NotFoundException', 'Invalid API identifier specified');
          return json({ item: api.stages.map((stageName) => ({ stageName, deploymentId: stableHex(api.id + stageName, 6), createdDate: 1704164645, lastUpdatedDate: 1704164645, tracingEnabled: false })) });
        },
      };
    }
    if (method === 'GET' && path === '/v2/apis') {
      return {
        action: 'GetApis',
        reply: () => {
          const size = pageSize(query.get('maxResults'), 25, 1, 500, 'maxResults', 'BadRequestException');
          const start = untoken(query.get('nextToken'), `${salt}http${region}`, 'nextToken');
          const all = standIn.inventory.httpApis.filter((a) => a.region === region);
          const page = all.slice(start, start + size);
          const items = page.map((a) => ({
            apiId: a.id,
            apiEndpoint: `https://${a.id}.execute-api.${region}.amazonaws.com`,
            name: a.name,
            protocolType: 'HTTP',
            routeSelectionExpression: '$request.method $request.path',
            apiKeySelectionExpression: '$request.header.x-api-key',
            createdDate: '2024-01-02T03:04:05Z',
            disableExecuteApiEndpoint: false,
          }));
          return json({ items, ...(start + size < all.length ? { nextToken: token(start + size, `${salt}http${region}`) } : {}) });
        },
      };
    }
    throw new AwsFault(404, 'NotFoundException', `Unknown API Gateway resource ${method} ${path}`);
  }

  // --- the server --------------------------------------------------------------------------------

  async function handle(req: IncomingMessage): Promise<Reply> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const rawQuery = q < 0 ? '' : target.slice(q + 1);
    const method = req.method ?? 'GET';
    const scope = /Credential=[^/]+\/\d{8}\/[^/]+\/([a-z0-9-]+)\//.exec(String(req.headers.authorization ?? ''))?.[1];
    const guess = scope && SERVICES[scope] ? scope : method === 'POST' ? 'sts' : 'unknown';
    const protocolOf = (service: string): Protocol => SERVICES[service]?.protocol ?? 'restXml';

    let caller: Awaited<ReturnType<typeof authenticate>>;
    try {
      caller = await authenticate(req, path, rawQuery, body);
    } catch (error) {
      if (!(error instanceof AwsFault)) throw error;
      rejected.push({ service: guess, reason: `${error.code}: ${error.message}` });
      return faultReply(protocolOf(guess), error, SERVICES[guess]?.xmlns);
    }
    const { service, region, accessKeyId } = caller;
    const info = SERVICES[service]!;
    const fail = (error: AwsFault, record: boolean): Reply => {
      if (record) rejected.push({ service, reason: `${error.code}: ${error.message}` });
      return faultReply(info.protocol, error, info.xmlns);
    };

    // Which key may call what: STS AssumeRole with the base key, the rest with a temporary one.
    if (service !== 'sts' && !caller.temporary) {
      return fail(new AwsFault(403, info.protocol === 'ec2' ? 'AuthFailure' : info.protocol === 'restJson' ? 'UnrecognizedClientException' : 'InvalidClientTokenId', 'Discovery calls must use the temporary credentials AssumeRole issued'), true);
    }

    try {
      let action: string;
      let reply: () => Reply;
      if (info.protocol === 'query' || info.protocol === 'ec2') {
        if (method !== 'POST' || path !== '/' || !String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
          throw new AwsFault(400, 'MalformedQueryString', `${service} expects a form POST to /`);
        }
        const form = new URLSearchParams(body.toString('utf8'));
        action = form.get('Action') ?? '';
        if (form.get('Version') !== info.version) throw new AwsFault(400, 'InvalidParameterValue', `Unsupported Version ${form.get('Version')}`);
        if (service === 'sts') reply = () => sts(action, form, caller);
        else if (service === 'ec2') reply = () => ec2(action, form, region);
        else reply = () => elb(action, form, region);
      } else {
        const query = new URLSearchParams(rawQuery);
        const route = service === 'cloudfront' ? cloudfront(method, path, query) : service === 'route53' ? route53(method, path, query) : apigateway(method, path, query, region);
        action = route.action;
        reply = route.reply;
      }
      calls.push({ service, action, region, accessKeyId });
      const failing = failures.get(service);
      if (failing && failing.remaining > 0) {
        failing.remaining -= 1;
        return fail(failureFault(info.protocol, failing.failure), false);
      }
      if (denied.has(service)) {
        const code = info.protocol === 'ec2' ? 'UnauthorizedOperation' : info.protocol === 'restJson' ? 'AccessDeniedException' : 'AccessDenied';
        const who = caller.temporary ? assumedArn(sessions.get(accessKeyId)!.roleArn) : principalArn;
        return fail(new AwsFault(403, code, `User: ${who} is not authorized to perform: ${service}:${action} with an explicit deny`), false);
      }
      return reply();
    } catch (error) {
      if (!(error instanceof AwsFault)) throw error;
      // Refusals the customer's setup explains (a role Aegis may not assume) are AWS working as
      // designed; anything else is a request AWS would not have accepted.
      return fail(error, !(error.status === 403 && error.code === 'AccessDenied'));
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    handle(req).then(
      (reply) => {
        res.writeHead(reply.status, { ...reply.headers, 'x-amzn-requestid': reply.headers['x-amzn-requestid'] ?? randomUUID() });
        res.end(reply.body);
      },
      (error: unknown) => {
        rejected.push({ service: 'unknown', reason: `stand-in failure: ${error instanceof Error ? error.message : String(error)}` });
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('internal error');
      },
    );
  });
  const listening = await listenOnLoopback(server);
  standIn.url = listening.url;
  standIn.settings.endpointUrl = listening.url;
  standIn.close = listening.close;
  return standIn;
}
