// The inventory of outbound connections: every hand-written source file of the server, the command
// line, the reconciler, the Terraform provider and the build scripts is scanned for what can open a
// connection (test/support/outbound-scan.ts: fetch(), undici, node:http(s) clients, node:net/tls
// connects, node:dgram, spawning git/ssh/curl, the SDK clients, database and Redis drivers, SMTP,
// the OTLP exporter, connections handed out by the outbound policy module). Each file that has one
// must be in INVENTORY below with what it does, its trust class and why; a file that is not
// fails the test, and so does an entry whose primitives changed. Files of the server that reach a
// tenant's or an origin's address must obtain their connections from the policy module
// (platform/net/outbound.ts, guarded-fetch.ts) — directly, or through an adapter listed here that does.
// The policy module itself (platform/net/) is where connections are made and is not listed.
//
// So an `await fetch(url)` added to a route file fails here twice: the file is not listed, and a
// listed tenant file must import the policy module (the "a new call site" test shows it on a copy of a
// real route file). No server is started: this reads files only.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outboundPrimitives, valueImports, type Primitive } from '../support/outbound-scan.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SCANNED = ['api', 'platform', 'gateway', 'scanners', 'client', 'build', 'cli', 'reconciler', 'provider', 'bin'];
/** The outbound policy module: where connections are made, under a trust class. */
const POLICY_MODULE = 'platform/net/';
/** What the module hands out connections through. */
const POLICY_ENTRIES = ['platform/net/outbound.ts', 'platform/net/guarded-fetch.ts'];

type Trust = 'tenant' | 'origin' | 'operator' | 'self' | 'local';

interface Entry {
  primitives: Primitive[];
  /**
   * tenant: URLs a customer gives (refused private addresses unless AEGIS_ALLOW_PRIVATE_TARGETS);
   * origin: Shield origins; operator: endpoints from the operator's environment; self: this API
   * or the clone's own egress proxy, or a command run on the user's own machine; local: no network.
   */
  trust: Trust[];
  /** The file its connections come from (the policy module, or an entry here that imports it); null: a driver of the operator's own infrastructure or client-side code. */
  via: string | null;
  why: string;
}

const PROVIDER_TRUST: Trust[] = ['tenant', 'operator'];
const PROVIDERS_VIA = 'api/integrations/providers/http.ts';
const AWS_VIA = 'api/attack-surface/aws/clients.ts';
const awsService = (what: string): Entry => ({
  primitives: ['@aws-sdk'],
  trust: ['operator'],
  via: AWS_VIA,
  why: `${what} with the assumed role's credentials; endpoints are AWS's (<service>.<region>.amazonaws.com, regions pattern-checked) or AEGIS_AWS_ENDPOINT_URL, agents from clientConfig`,
});

export const INVENTORY: Record<string, Entry> = {
  // Tenant traffic: URLs customers give.
  'platform/git/clone.ts': { primitives: ['spawn git'], trust: ['tenant'], via: 'platform/git/egress.ts', why: 'clones scan targets, config repositories and pull-request heads; git, curl and ssh reach the network only through the clone\'s egress proxy (http.proxy, core.gitProxy, ssh ProxyCommand); redirects followed by curl, each hop judged by the proxy' },
  'platform/git/egress.ts': { primitives: ['outbound policy'], trust: ['tenant'], via: 'platform/net/outbound.ts', why: 'starts the per-clone egress proxy under the clone\'s policy (the tenant policy; the operator\'s configured provider endpoints excepted)' },
  'api/webhooks/send.ts': { primitives: ['undici', 'outbound policy'], trust: ['tenant'], via: 'platform/net/outbound.ts', why: 'webhook deliveries: an undici request through the outbound agent (tenant rule, AEGIS_WEBHOOK_DNS_SERVERS); redirects refused (a 3xx is a failed delivery); 4 KiB read' },
  'scanners/web/http.ts': { primitives: ['outbound policy'], trust: ['tenant'], via: 'platform/net/outbound.ts', why: 'URL scans (DAST, API, CVE) and their OpenAPI document_url: the outbound agent under the tenant rule with pinned names (scope.resolve); redirects never followed (they are findings\' data)' },
  'api/accounts/sign-in/oidc-client.ts': { primitives: ['openid-client', 'outbound policy'], trust: ['tenant'], via: 'platform/net/guarded-fetch.ts', why: 'OpenID Connect discovery, JWKS and token calls of organisations\' SSO issuers (and Google\'s, which login/google.ts holds to the same rule) through guardedFetch; redirects refused; 1 MiB, 10 s' },
  'api/accounts/sso/sso-routes.ts': { primitives: ['outbound policy'], trust: ['tenant'], via: 'platform/net/guarded-fetch.ts', why: 'SAML metadata URLs organisations give, fetched with guardedFetch; redirects refused; 1 MiB, 10 s' },
  'api/shield/domain-proof/http-proof.ts': { primitives: ['outbound policy'], trust: ['tenant'], via: 'platform/net/outbound.ts', why: 'HTTP domain proofs: GET http://<site domain>/.well-known/aegis-verify/<token> with outboundFetch under the server\'s tenant policy; redirects refused except once to the same URL over HTTPS; 4 KiB, 10 s' },
  // Provider APIs: a base URL an admin gives is tenant traffic; the configured endpoints are the operator's.
  'api/integrations/providers/http.ts': { primitives: ['outbound policy'], trust: PROVIDER_TRUST, via: 'platform/net/outbound.ts', why: 'the connectors\' fetch: the server\'s tenant policy, AEGIS_<PROVIDER>_URL/_API_URL endpoints as operator; up to 5 redirects, each judged, credentials dropped across origins; 16 MiB' },
  'api/integrations/github/client.ts': { primitives: ['@octokit'], trust: PROVIDER_TRUST, via: PROVIDERS_VIA, why: 'Octokit with the session\'s outbound fetch (sessionFetch), not its global one' },
  'api/integrations/openai/connector.ts': { primitives: ['openai'], trust: PROVIDER_TRUST, via: PROVIDERS_VIA, why: 'the OpenAI SDK given the session\'s outbound fetch; an OpenAI-compatible base URL is the admin\'s' },
  'api/integrations/anthropic/connector.ts': { primitives: ['@anthropic-ai/sdk'], trust: PROVIDER_TRUST, via: PROVIDERS_VIA, why: 'the Anthropic SDK given the session\'s outbound fetch; another base URL is the admin\'s' },
  // Shield origins.
  'gateway/proxy/forward.ts': { primitives: ['undici', 'outbound policy'], trust: ['origin'], via: 'platform/net/outbound.ts', why: 'the gateway\'s pools to origins, connected by the outbound connector under the origin rule (no metadata or link-local unless AEGIS_ALLOW_METADATA_ORIGINS); responses are streamed, redirects passed to the client' },
  'gateway/launch.ts': { primitives: ['outbound policy'], trust: ['tenant'], via: 'platform/net/outbound.ts', why: 'OCSP responses to staple: the responder URL comes from a certificate a tenant may have uploaded, so it is fetched under the tenant rule (no private, loopback or metadata address unless AEGIS_ALLOW_PRIVATE_TARGETS)' },
  'gateway/proxy/websocket.ts': { primitives: ['node:http(s) client', 'outbound policy'], trust: ['origin'], via: 'platform/net/outbound.ts', why: 'WebSocket handshakes to origins (ws:// or wss://, certificates verified) over node agents from the policy module under the origin rule, as forwarded requests; an upgraded connection is then a byte pipe' },
  // Operator endpoints.
  'api/attack-surface/aws/clients.ts': { primitives: ['outbound policy'], trust: ['operator'], via: 'platform/net/outbound.ts', why: 'node agents from the policy module for every AWS SDK client (operator: AWS endpoints or AEGIS_AWS_ENDPOINT_URL; the default credential chain may read the instance metadata service on purpose)' },
  'api/attack-surface/aws/credentials.ts': awsService('STS AssumeRole and GetCallerIdentity'),
  'api/attack-surface/aws/api-gateway.ts': awsService('API Gateway v1/v2 listing'),
  'api/attack-surface/aws/cloudfront.ts': awsService('CloudFront listing'),
  'api/attack-surface/aws/ec2.ts': awsService('EC2 listing'),
  'api/attack-surface/aws/elb.ts': awsService('Elastic Load Balancing listing'),
  'api/attack-surface/aws/route53.ts': awsService('Route 53 listing'),
  'api/shield/acme/transport.ts': { primitives: ['acme-client', 'outbound policy'], trust: ['operator'], via: 'platform/net/outbound.ts', why: 'ACME (RFC 8555) to AEGIS_ACME_DIRECTORY_URL: every request of acme-client\'s axios instance gets node agents from the policy module (an interceptor; requests outside a transport refused), proxy off, AEGIS_ACME_CA_CERTS added to the roots for these connections only; 30 s, 1 MiB' },
  'platform/metrics/tracing.ts': { primitives: ['otlp exporter', 'outbound policy'], trust: ['operator'], via: 'platform/net/outbound.ts', why: 'OTLP/HTTP traces to OTEL_EXPORTER_OTLP_*, through the policy module\'s node agents' },
  'platform/mail/mailer.ts': { primitives: ['nodemailer'], trust: ['operator'], via: null, why: 'SMTP to SMTP_URL, the operator\'s relay; nothing a tenant gives changes where it connects' },
  'platform/db/database.ts': { primitives: ['pg'], trust: ['operator'], via: null, why: 'the PostgreSQL pool of DATABASE_URL' },
  'platform/db/listen-connection.ts': { primitives: ['pg'], trust: ['operator'], via: null, why: 'the LISTEN connection to DATABASE_URL' },
  'api/server.ts': { primitives: ['ioredis'], trust: ['operator'], via: null, why: 'Redis of REDIS_URL (API rate limits)' },
  'gateway/events/redis-live-bus.ts': { primitives: ['ioredis'], trust: ['operator'], via: null, why: 'Redis of REDIS_URL (live decision bus)' },
  'gateway/state/redis-rate-state.ts': { primitives: ['ioredis'], trust: ['operator'], via: null, why: 'Redis of REDIS_URL (gateway rate-limit state)' },
  // Self and local.
  'platform/git/connect-helper.mjs': { primitives: ['node:net connect'], trust: ['self'], via: null, why: 'git\'s core.gitProxy and ssh\'s ProxyCommand: connects only to the clone\'s egress proxy on 127.0.0.1 (AEGIS_EGRESS_PROXY) and asks it for host:port with CONNECT; the proxy judges the destination' },
  'platform/control-socket.ts': { primitives: ['node:net connect'], trust: ['local'], via: null, why: 'the embedded database\'s control socket: a unix socket in the data directory (or under the temp dir, named by its hash), mode 0600; `aegis backup`/`restore` and a second `aegis serve` ask the process holding the data directory; never a network address' },
  'scanners/secrets/history.ts': { primitives: ['spawn git'], trust: ['local'], via: null, why: 'git log/show on a checkout already cloned: no remote is contacted (shallow or full clones, never partial ones with a promisor)' },
  'client/client.ts': { primitives: ['fetch()'], trust: ['self'], via: null, why: 'the typed REST client of the Aegis API (AEGIS_API_URL, the provider\'s url, config syncs\' own API URL): the reconciler and the provider import nothing of the server' },
  'build/client-types.ts': { primitives: ['fetch()'], trust: ['self'], via: null, why: 'npm run client:types: the OpenAPI document of a throwaway local server it starts' },
  'cli/advisories.ts': { primitives: ['fetch()'], trust: ['self'], via: null, why: 'aegis advisories import: posts to AEGIS_API_URL' },
  'cli/scan.ts': { primitives: ['spawn git', 'fetch()'], trust: ['self'], via: null, why: 'aegis scan on the user\'s machine: git on the user\'s own working tree (--diff-base), results to AEGIS_API_URL' },
  'cli/scan-url.ts': { primitives: ['fetch()'], trust: ['self'], via: null, why: 'aegis scan-url on the user\'s machine: the --openapi URL the user typed, fetched with the user\'s own network and authority' },
};

function sourceFiles(): string[] {
  return SCANNED.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => relative(ROOT, join(e.parentPath, e.name)))
      // Sources only: not dependencies, build output (dist/) or tools' working folders (provider/.build/).
      .filter((file) => !file.split('/').some((segment) => segment === 'node_modules' || segment === 'dist' || segment.startsWith('.'))),
  );
}

/** Generated files say so in their first comment (client/api-types.ts). */
const isGenerated = (text: string): boolean => /^\s*(\/\*\*?|\/\/)[\s\S]{0,200}?\bGenerated by\b/.test(text);

function scan(): Map<string, Primitive[]> {
  const found = new Map<string, Primitive[]>();
  for (const file of sourceFiles()) {
    if (file.startsWith(POLICY_MODULE)) continue;
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (isGenerated(text)) continue;
    const primitives = [...outboundPrimitives(text, file)].sort();
    if (primitives.length > 0) found.set(file, primitives);
  }
  return found;
}

/** The repository files `file` imports values from. */
function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  return valueImports(text, file)
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

/** Problems of the table against what the scan found: unlisted files, changed primitives, stale entries, missing policy imports. */
function problems(found: Map<string, Primitive[]>, inventory: Record<string, Entry>, read: (file: string) => string): string[] {
  const out: string[] = [];
  for (const [file, primitives] of found) {
    const entry = inventory[file];
    if (!entry) {
      out.push(`${file}: ${primitives.join(', ')} — not in the outbound inventory (list it with its trust class, and obtain connections from platform/net/outbound.ts)`);
      continue;
    }
    if (JSON.stringify([...entry.primitives].sort()) !== JSON.stringify(primitives)) out.push(`${file}: found ${primitives.join(', ')}, listed ${entry.primitives.join(', ')}`);
  }
  for (const file of Object.keys(inventory)) if (!found.has(file)) out.push(`${file}: listed, but has no outbound primitive any more`);
  for (const [file, entry] of Object.entries(inventory)) {
    if (!found.has(file)) continue;
    // The global fetch follows redirects anywhere and judges no address: only client-side code
    // calling the Aegis API itself may use it.
    if (entry.primitives.includes('fetch()') && entry.trust.some((t) => t !== 'self')) out.push(`${file}: calls the global fetch; ${entry.trust.join('/')} traffic uses outboundFetch (platform/net/outbound.ts)`);
    if (entry.via === null) {
      if (entry.trust.includes('tenant') || entry.trust.includes('origin')) out.push(`${file}: ${entry.trust.join('/')} traffic must obtain its connections from the policy module`);
      continue;
    }
    if (!importsOf(file, read(file)).includes(entry.via)) out.push(`${file}: does not import ${entry.via}`);
    // An adapter must itself be listed and reach the policy module.
    if (!POLICY_ENTRIES.includes(entry.via)) {
      const adapter = inventory[entry.via];
      if (!adapter || adapter.via === null || !POLICY_ENTRIES.includes(adapter.via)) out.push(`${file}: ${entry.via} is not an adapter of the policy module listed here`);
    }
  }
  return out;
}

describe('outbound inventory', () => {
  const found = scan();
  const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

  it('scans the code base (the scanner finds what it looks for)', () => {
    expect(sourceFiles().length).toBeGreaterThan(400);
    expect(found.get('api/webhooks/send.ts')).toEqual(['outbound policy', 'undici']);
    expect(found.get('cli/scan.ts')).toEqual(['fetch()', 'spawn git']);
    // Comments and type-only imports are not call sites.
    expect([...outboundPrimitives("// await fetch(url)\nimport type { Agent } from 'undici';\nconst s = 'fetch(x)';\n")]).toEqual([]);
    expect([...outboundPrimitives("import { spawn } from 'node:child_process';\nspawn('git', ['clone']);\nspawn('ls');\n")]).toEqual(['spawn git']);
    expect([...outboundPrimitives("import * as http from 'node:http';\nhttp.request('http://x');\n")]).toEqual(['node:http(s) client']);
    expect([...outboundPrimitives("import { createServer } from 'node:http';\ncreateServer();\n")]).toEqual([]);
    expect([...outboundPrimitives("import OpenAI from 'openai';\nnew OpenAI({});\n")]).toEqual(['openai']);
    expect([...outboundPrimitives("import { EC2Client } from '@aws-sdk/client-ec2';\nnew EC2Client({});\n")]).toEqual(['@aws-sdk']);
    expect([...outboundPrimitives("import { connect } from 'node:net';\nconnect(1);\n")]).toEqual(['node:net connect']);
    expect([...outboundPrimitives("await import('@opentelemetry/exporter-trace-otlp-http');\n")]).toEqual(['otlp exporter']);
  });

  it('lists every outbound call site, with the primitives it has', () => {
    expect(problems(found, INVENTORY, read)).toEqual([]);
  });

  it('tenant and origin traffic obtains its connections from the policy module', () => {
    for (const [file, entry] of Object.entries(INVENTORY)) {
      if (entry.trust.includes('tenant') || entry.trust.includes('origin')) expect(entry.via, file).not.toBeNull();
    }
    for (const entry of POLICY_ENTRIES) expect(read(entry)).toMatch(/export function (outboundFetch|guardedFetch)|export \{[^}]*outboundFetch/);
  });

  it('a new call site fails: `await fetch(url)` added to a route file', () => {
    const route = 'api/scans/routes.ts';
    expect(found.has(route)).toBe(false);
    const patched = `${read(route)}\nexport async function leak(url: string): Promise<string> {\n  return (await fetch(url)).text();\n}\n`;
    const withLeak = new Map(found).set(route, [...outboundPrimitives(patched, route)].sort());
    expect(problems(withLeak, INVENTORY, (file) => (file === route ? patched : read(file)))).toEqual([`${route}: fetch() — not in the outbound inventory (list it with its trust class, and obtain connections from platform/net/outbound.ts)`]);
    // Listed as tenant traffic, it still fails: the global fetch is not the policy's, and the file
    // takes nothing from the policy module (its type-only import of OutboundPolicy does not count).
    const listed = { ...INVENTORY, [route]: { primitives: ['fetch()'], trust: ['tenant'], via: 'platform/net/outbound.ts', why: 'a leak' } satisfies Entry };
    expect(problems(withLeak, listed, (file) => (file === route ? patched : read(file)))).toEqual([
      `${route}: calls the global fetch; tenant traffic uses outboundFetch (platform/net/outbound.ts)`,
      `${route}: does not import platform/net/outbound.ts`,
    ]);
  });
});
