// bench:sdk, Node: lists every IP rule of AEGIS_BENCH_SITE_ID (10 000 rules, 200 a page) (a) by
// hand with fetch, following pagination.next as cursor, and (b) with the SDK's auto-pagination,
// alternating for AEGIS_BENCH_ROUNDS rounds after one warm-up each. Prints one JSON line.
import { Aegis } from '../src/index.ts';

const baseUrl = (process.env.AEGIS_API_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const apiKey = process.env.AEGIS_API_KEY ?? '';
const siteId = process.env.AEGIS_BENCH_SITE_ID;
const rounds = Number(process.env.AEGIS_BENCH_ROUNDS ?? '5');
if (!siteId) throw new Error('AEGIS_BENCH_SITE_ID is required');

interface RawPage {
  data: { id: string }[];
  pagination: { next: string | null };
}

/** What a user would write without the SDK. */
async function raw(): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const url = `${baseUrl}/api/v1/shield/sites/${encodeURIComponent(siteId!)}/ip-access?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    const page = (await response.json()) as RawPage;
    for (const rule of page.data) if (rule.id) count++;
    cursor = page.pagination.next;
  } while (cursor);
  return count;
}

const aegis = new Aegis({ apiKey, baseUrl });
async function sdk(): Promise<number> {
  let count = 0;
  for await (const rule of aegis.ipAccessRules.list(siteId!, { limit: 200 })) if (rule.id) count++;
  return count;
}

async function timed(run: () => Promise<number>): Promise<{ ms: number; items: number }> {
  const started = performance.now();
  const items = await run();
  return { ms: Math.round((performance.now() - started) * 100) / 100, items };
}

const warmRaw = await timed(raw);
const warmSdk = await timed(sdk);
if (warmRaw.items !== warmSdk.items) throw new Error(`raw saw ${warmRaw.items} items, the SDK ${warmSdk.items}`);
const rawMs: number[] = [];
const sdkMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  for (const [run, into] of [[raw, rawMs], [sdk, sdkMs]] as const) {
    const { ms, items } = await timed(run);
    if (items !== warmRaw.items) throw new Error(`a round saw ${items} items, not ${warmRaw.items}`);
    into.push(ms);
  }
}
process.stdout.write(`${JSON.stringify({ language: 'node', items: warmRaw.items, raw_ms: rawMs, sdk_ms: sdkMs })}\n`);
