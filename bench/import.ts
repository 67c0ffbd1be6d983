// Time to import a 100 000-row CSV of IP access rules through POST …/ip-access/import, on
// PostgreSQL and on the embedded database, against the real server. Targets: ≤ 1 s on PostgreSQL,
// ≤ 2 s embedded. The baseline, in the same run against the same database, is the database alone
// storing the same 100 000 rows: one `insert … select` generating them server-side (no upload, no
// parsing, no checks, no transfer), with the same indexes and triggers. The ratio is
// what the import path (HTTP, CSV, checks, COPY into staging, conflict handling) adds to that floor.
//   npm run bench:import        BENCH_ROWS=100000 BENCH_ROUNDS=3 BENCH_DATABASE=both|postgres|embedded
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { generateKey } from '../api/accounts/keys/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { createScratchDatabase } from './support/scratch-database.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WANT = process.env.BENCH_DATABASE ?? 'both';
const TARGET_SECONDS = { PostgreSQL: 1, embedded: 2 } as const;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function csvOf(rows: number): string {
  const lines = ['type,value,action,note'];
  for (let i = 0; i < rows; i++) {
    // Alternate IPv4 addresses and IPv6 networks so both parsers are exercised.
    lines.push(i % 2 === 0 ? `ip,10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},deny,bench ${i}` : `cidr,2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64,challenge,bench ${i}`);
  }
  return `${lines.join('\n')}\n`;
}

async function measure(label: keyof typeof TARGET_SECONDS, databaseUrl: string | undefined, body: string): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-import-'));
  const key = generateKey();
  // No gateway in this process: it would load and compile each imported site's 100 000 rules while
  // the next round is being timed (in production that happens on the gateway's own cores).
  const server = await startServer({ ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}), shieldEnabled: false, databaseUrl, bootstrapApiKey: key, logLevel: 'silent' });
  try {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    let sites = 0;
    const newSite = async () => {
      const res = await fetch(`${server.url}/api/v1/shield/sites`, { method: 'POST', headers, body: JSON.stringify({ domain: `bench${sites++}.example.com`, origin_url: 'http://127.0.0.1:9', mode: 'block' }) });
      return (await res.json()) as { id: string };
    };
    const { db } = server.database;

    const baseline = async () => {
      const site = await newSite();
      const { org_id: orgId } = await db.selectFrom('shield_sites').select('org_id').where('id', '=', site.id).executeTakeFirstOrThrow();
      const started = performance.now();
      await db.transaction().execute((trx) =>
        sql`
          insert into ip_access_rules (id, org_id, site_id, type, value, value_key, action, note)
          select id, ${orgId}, ${site.id}, type, value, value, action, 'bench ' || i
          from (
            select i, 'ipr_01' || lpad(i::text, 24, '0') as id,
              case when i % 2 = 0 then 'ip' else 'cidr' end as type,
              case when i % 2 = 0 then '10.' || ((i >> 16) & 255) || '.' || ((i >> 8) & 255) || '.' || (i & 255)
                   else '2001:db8:' || to_hex(i >> 16) || ':' || to_hex(i & 65535) || '::/64' end as value,
              case when i % 2 = 0 then 'deny' else 'challenge' end as action
            from generate_series(0, ${ROWS - 1}) as i
          ) rows`.execute(trx),
      );
      return (performance.now() - started) / 1000;
    };

    const importCsv = async () => {
      const site = await newSite();
      const started = performance.now();
      const res = await fetch(`${server.url}/api/v1/shield/sites/${site.id}/ip-access/import`, { method: 'POST', headers: { ...headers, 'content-type': 'text/csv' }, body });
      const text = await res.text();
      const seconds = (performance.now() - started) / 1000;
      if (res.status !== 201) throw new Error(`${label}: import answered ${res.status}: ${text.slice(0, 300)}`);
      const { created } = JSON.parse(text) as { created: number };
      if (created !== ROWS) throw new Error(`${label}: created ${created} of ${ROWS}`);
      return seconds;
    };

    const base: number[] = [];
    const imports: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      base.push(await baseline());
      imports.push(await importCsv());
    }
    const b = median(base);
    const m = median(imports);
    const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
    console.log(`${label.padEnd(11)} baseline (database alone)  median ${b.toFixed(2)} s  (${list(base)})`);
    console.log(`${label.padEnd(11)} CSV import                 median ${m.toFixed(2)} s  (${list(imports)}; ${Math.round(ROWS / m)} rows/s)`);
    console.log(`${label.padEnd(11)} ratio import / baseline    ${(m / b).toFixed(2)}`);
    console.log(`${label.padEnd(11)} target <= ${TARGET_SECONDS[label]} s: ${m <= TARGET_SECONDS[label] ? 'PASS' : 'ABOVE TARGET'}`);
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const body = csvOf(ROWS);
console.log(`CSV import: ${ROWS} rows, ${(Buffer.byteLength(body) / 1024 / 1024).toFixed(1)} MiB, ${ROUNDS} round(s) each`);
if (WANT !== 'embedded') {
  const scratch = await createScratchDatabase();
  if (scratch) {
    try {
      await measure('PostgreSQL', scratch.url, body);
    } finally {
      await scratch.drop();
    }
  } else {
    console.log('PostgreSQL  skipped: no server reachable (set BENCH_DATABASE_URL)');
  }
}
if (WANT !== 'postgres') await measure('embedded', undefined, body);
