// Attack-surface discovery of 10 000 cloud resources: a real server (its worker runs the
// `attack_surface.discover` job) connected to the AWS stand-in, whose SDK traffic is real HTTP with
// SigV4 and each service's wire protocol and pagination. Run 1 finds everything new; then ~1 % of
// the resources change (50 load balancers removed, 50 added) and run 2 diffs against run 1.
//
// For each run: wall time from POST /api/v1/integrations/:id/discover to the run completed, the
// job's own split (kept in the job's result: time listing AWS vs time writing the inventory), and
// peak memory of this process (RSS and heap, sampled every 10 ms; server, worker and stand-in all
// live here). Baseline, same run and same stand-in: the connector's listing alone (assume the role,
// list every scope through the SDK) called in this process with no database and no queue — the
// least any discovery must spend; run / baseline is what the inventory and the job add.
//   node bin/run-ts.mjs bench/discovery.ts     (BENCH_DATABASE_URL: a PostgreSQL server; else embedded)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAwsConnector } from '../api/attack-surface/aws/connector.ts';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { startAwsStandIn, type AwsInventory } from '../test/support/providers/aws.ts';
import { createScratchDatabase } from './support/scratch-database.ts';

const REGIONS = ['us-east-1', 'eu-west-1', 'us-west-2', 'ap-southeast-2'];
const CHANGED = 50;

/** 10 000 public endpoints over every kind and four regions. */
function inventory(): AwsInventory {
  const region = (i: number) => REGIONS[i % REGIONS.length]!;
  const hex = (i: number, width = 8) => i.toString(16).padStart(width, '0');
  return {
    // 2 500 load balancers (a few internal ones, which are not public, on top).
    loadBalancers: [
      ...Array.from({ length: 2_500 }, (_, i) => ({ region: region(i), name: `web-${i}`, dnsName: `web-${i}-${hex(i)}.${region(i)}.elb.amazonaws.com`, scheme: 'internet-facing' as const, type: i % 3 === 0 ? ('network' as const) : ('application' as const) })),
      ...Array.from({ length: 40 }, (_, i) => ({ region: region(i), name: `internal-${i}`, dnsName: `internal-${i}.${region(i)}.elb.amazonaws.com`, scheme: 'internal' as const, type: 'application' as const })),
    ],
    // 1 000 distributions.
    distributions: Array.from({ length: 1_000 }, (_, i) => ({ id: `E${hex(i, 12).toUpperCase()}`, domainName: `d${hex(i, 12)}.cloudfront.net`, aliases: [], comment: `site ${i}` })),
    // 250 REST APIs × 2 stages + 500 HTTP APIs = 1 000.
    restApis: Array.from({ length: 250 }, (_, i) => ({ region: region(i), id: `r${hex(i, 9)}`, name: `rest-${i}`, stages: ['prod', 'staging'] })),
    httpApis: Array.from({ length: 500 }, (_, i) => ({ region: region(i), id: `h${hex(i, 9)}`, name: `http-${i}` })),
    // 2 000 instances with public IPs (and 200 without, not public) + 1 500 Elastic IPs.
    instances: [
      ...Array.from({ length: 2_000 }, (_, i) => ({ region: region(i), id: `i-${hex(i, 17)}`, name: `app-${i}`, publicIp: `198.18.${(i >> 8) & 255}.${i & 255}`, state: 'running' as const })),
      ...Array.from({ length: 200 }, (_, i) => ({ region: region(i), id: `i-p${hex(i, 16)}`, name: `worker-${i}`, state: 'running' as const })),
    ],
    addresses: Array.from({ length: 1_500 }, (_, i) => ({ region: region(i), allocationId: `eipalloc-${hex(i, 17)}`, publicIp: `198.19.${(i >> 8) & 255}.${i & 255}` })),
    // 10 public zones × 200 records = 2 000 (plus one private zone).
    hostedZones: [
      ...Array.from({ length: 10 }, (_, z) => ({
        id: `Z${hex(z, 12).toUpperCase()}`,
        name: `shop${z}.example.com.`,
        private: false,
        records: Array.from({ length: 200 }, (_, r) => ({ name: `host-${r}.shop${z}.example.com.`, type: r % 2 ? ('CNAME' as const) : ('A' as const), values: [r % 2 ? `d${hex(r, 12)}.cloudfront.net` : `198.18.0.${r % 250}`] })),
      })),
      { id: 'ZPRIVATE', name: 'corp.internal.', private: true, records: [{ name: 'db.corp.internal.', type: 'A' as const, values: ['10.0.0.5'] }] },
    ],
  };
}

/** Peak RSS and heap while `work` runs, sampled every 10 ms. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; rss: number; heap: number }> {
  globalThis.gc?.();
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  };
  sample();
  const timer = setInterval(sample, 10);
  const started = performance.now();
  try {
    const value = await work();
    sample();
    return { value, ms: performance.now() - started, rss, heap };
  } finally {
    clearInterval(timer);
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const ms = (value: number): string => `${Math.round(value)} ms`;
const pad = (text: string, width: number): string => text.padEnd(width);

interface RunRow {
  id: string;
  status: string;
  error: string | null;
  job_id: string | null;
  counts: { total: number; added: number; removed: number; unchanged: number } | null;
  created_at: Date;
  started_at: Date | null;
}

async function main(): Promise<void> {
  const aws = await startAwsStandIn({ inventory: inventory() });
  const scratch = await createScratchDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-discovery-bench-'));
  const key = generateKey();
  const server = await startServer({
    ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}),
    databaseUrl: scratch?.url,
    bootstrapApiKey: key,
    logLevel: 'warn',
    shieldEnabled: false,
    allowPrivateTargets: true,
    rateLimitPerMinute: 1_000_000,
    warmScanThreads: false,
    cloud: { aws: aws.settings },
  });
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const db = server.database.db;
  const waitFor = async (runId: string): Promise<RunRow> => {
    for (;;) {
      const run = await db.selectFrom('attack_surface_runs').select(['id', 'status', 'error', 'job_id', 'counts', 'created_at', 'started_at']).where('id', '=', runId).executeTakeFirstOrThrow();
      if (run.status === 'completed') return run;
      if (run.status === 'failed') throw new Error(`run failed: ${run.error}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const timingsOf = async (run: RunRow): Promise<{ cloud_ms: number; inventory_ms: number }> => {
    const job = await db.selectFrom('jobs').select('result').where('id', '=', run.job_id!).executeTakeFirstOrThrow();
    return (job.result as { timings: { cloud_ms: number; inventory_ms: number } }).timings;
  };

  try {
    console.log(`database: ${scratch ? 'PostgreSQL (scratch)' : 'embedded (PGlite)'}; stand-in: 10 000 public endpoints (2 500 load balancers, 1 000 distributions, 1 000 API Gateway endpoints, 2 000 instances, 1 500 Elastic IPs, 2 000 DNS records) and some private ones, ${REGIONS.length} regions`);
    const step1 = await call<{ integration: { id: string }; setup: { external_id: string } }>('POST', '/api/v1/integrations/aws/connect', {});
    const roleArn = `arn:aws:iam::${aws.accountId}:role/AegisDiscovery`;
    aws.addRole(roleArn, step1.setup.external_id);
    const integration = step1.integration.id;

    // Run 1: everything new (the discovery queued at connect).
    const run1 = await measured(async () => {
      const step2 = await call<{ run: { id: string } }>('POST', '/api/v1/integrations/aws/connect', { integration, role_arn: roleArn, settings: { discovery: { regions: REGIONS } } });
      return waitFor(step2.run.id);
    });
    const split1 = await timingsOf(run1.value);

    // ~1 %: 50 load balancers gone, 50 new.
    aws.inventory.loadBalancers.splice(0, CHANGED);
    for (let i = 0; i < CHANGED; i++) {
      const region = REGIONS[i % REGIONS.length]!;
      aws.inventory.loadBalancers.push({ region, name: `new-${i}`, dnsName: `new-${i}.${region}.elb.amazonaws.com`, scheme: 'internet-facing', type: 'application' });
    }
    const run2 = await measured(async () => waitFor((await call<{ id: string }>('POST', `/api/v1/integrations/${integration}/discover`)).id));
    const split2 = await timingsOf(run2.value);

    // Baseline: the SDK listing alone, same stand-in, no database.
    const connector = createAwsConnector(aws.settings);
    const base = await measured(() => connector.discover({ roleArn, externalId: step1.setup.external_id, regions: REGIONS }, {}));
    const listed = base.value.reduce((n, r) => n + ('assets' in r ? r.assets.length : 0), 0);

    const counts = (c: RunRow['counts']) => (c ? `+${c.added} −${c.removed} =${c.unchanged} (total ${c.total})` : '—');
    const share = (s: { cloud_ms: number; inventory_ms: number }) => {
      const all = s.cloud_ms + s.inventory_ms;
      return `${Math.round((100 * s.cloud_ms) / all)} % / ${Math.round((100 * s.inventory_ms) / all)} %`;
    };
    const wait = (run: RunRow) => (run.started_at ? ms(run.started_at.getTime() - run.created_at.getTime()) : '—');
    const rows = [
      ['', 'wall time', 'queue wait', 'AWS listing', 'inventory write', 'AWS / inventory', 'peak RSS', 'peak heap', 'counts', 'vs baseline'],
      ['run 1 (all new)', ms(run1.ms), wait(run1.value), ms(split1.cloud_ms), ms(split1.inventory_ms), share(split1), mb(run1.rss), mb(run1.heap), counts(run1.value.counts), `${(run1.ms / base.ms).toFixed(2)}×`],
      ['run 2 (1 % changed)', ms(run2.ms), wait(run2.value), ms(split2.cloud_ms), ms(split2.inventory_ms), share(split2), mb(run2.rss), mb(run2.heap), counts(run2.value.counts), `${(run2.ms / base.ms).toFixed(2)}×`],
      ['baseline: SDK listing alone', ms(base.ms), '—', ms(base.ms), '—', '—', mb(base.rss), mb(base.heap), `${listed} assets`, '1.00×'],
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)) + 2);
    for (const row of rows) console.log(row.map((cell, c) => pad(cell, widths[c]!)).join(''));
    console.log(`AWS calls made: ${aws.calls.length}; stand-in rejected: ${aws.rejected.length === 0 ? 'none' : aws.rejected.map((r) => `${r.service}: ${r.reason}`).join('; ')}`);
    console.log('Wall time: request to run completed (run 1 includes the connect call’s AssumeRole); queue wait: run created → job started. RSS includes the server, its worker and the stand-in, all in this process.');
  } finally {
    await server.close();
    await scratch?.drop();
    await aws.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
