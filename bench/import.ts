// Time to import a 100 000-row CSV of IP access rules through POST …/ip-access/import, on
// PostgreSQL and on the embedded database, against the real server. Target: ≤ 3 s on PostgreSQL.
//   npm run bench:import        BENCH_ROWS=100000
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../api/auth/key-material.ts';
import { loadConfig } from '../api/config.ts';
import { startServer } from '../api/server.ts';
import { createScratchDatabase } from './support/scratch-database.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const TARGET_SECONDS = 3;

function csvOf(rows: number): string {
  const lines = ['type,value,action,note'];
  for (let i = 0; i < rows; i++) {
    // Alternate IPv4 addresses and IPv6 networks so both parsers are exercised.
    lines.push(i % 2 === 0 ? `ip,10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},deny,bench ${i}` : `cidr,2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64,challenge,bench ${i}`);
  }
  return `${lines.join('\n')}\n`;
}

async function measure(label: string, databaseUrl: string | undefined, body: string): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), 'aegis-bench-import-'));
  const key = generateKey();
  const server = await startServer({ ...loadConfig({ host: '127.0.0.1', port: '0', dataDir }, {}), databaseUrl, bootstrapApiKey: key, logLevel: 'silent' });
  try {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const site = (await (await fetch(`${server.url}/api/v1/shield/sites`, { method: 'POST', headers, body: JSON.stringify({ domain: 'bench.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block' }) })).json()) as { id: string };
    const started = performance.now();
    const res = await fetch(`${server.url}/api/v1/shield/sites/${site.id}/ip-access/import`, { method: 'POST', headers: { ...headers, 'content-type': 'text/csv' }, body });
    const text = await res.text();
    const seconds = (performance.now() - started) / 1000;
    if (res.status !== 201) throw new Error(`${label}: import answered ${res.status}: ${text.slice(0, 300)}`);
    const { created } = JSON.parse(text) as { created: number };
    if (created !== ROWS) throw new Error(`${label}: created ${created} of ${ROWS}`);
    console.log(`${label.padEnd(12)} ${ROWS} rows in ${seconds.toFixed(2)} s  (${Math.round(ROWS / seconds)} rows/s)`);
    return seconds;
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const body = csvOf(ROWS);
console.log(`CSV import: ${ROWS} rows, ${(Buffer.byteLength(body) / 1024 / 1024).toFixed(1)} MiB`);
const scratch = await createScratchDatabase();
if (scratch) {
  try {
    const seconds = await measure('PostgreSQL', scratch.url, body);
    console.log(`PostgreSQL target <= ${TARGET_SECONDS} s: ${seconds <= TARGET_SECONDS ? 'PASS' : 'ABOVE TARGET'}`);
  } finally {
    await scratch.drop();
  }
} else {
  console.log('PostgreSQL    skipped: no server reachable (set BENCH_DATABASE_URL)');
}
await measure('embedded', undefined, body);
