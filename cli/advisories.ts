// `aegis advisories import DIR|ZIP`: reads OSV records (a directory of JSON files, or a ZIP such as
// an OSV ecosystem export) and sends them to the API in batches, so it works while the server runs
// on the embedded database. Needs AEGIS_API_URL and an `admin` AEGIS_API_KEY.
import { stat } from 'node:fs/promises';
import { MAX_ADVISORIES_PER_REQUEST } from '../api/advisories/routes.ts';
import { loadOsvDirectory, loadOsvZip } from '../scanners/sca/advisory-source.ts';

const BATCH = Math.min(500, MAX_ADVISORIES_PER_REQUEST);

export async function advisoriesImportCommand(path: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const baseUrl = env.AEGIS_API_URL;
  const apiKey = env.AEGIS_API_KEY;
  if (!baseUrl || !apiKey) throw new Error('set AEGIS_API_URL (e.g. http://localhost:3000) and AEGIS_API_KEY');
  const loaded = (await stat(path)).isDirectory() ? await loadOsvDirectory(path) : await loadOsvZip(path);
  for (const problem of loaded.errors) process.stderr.write(`skipped ${problem.file}: ${problem.message}\n`);
  const totals = { inserted: 0, updated: 0, unchanged: 0 };
  for (let i = 0; i < loaded.records.length; i += BATCH) {
    const res = await fetch(new URL('/api/v1/advisories', baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ advisories: loaded.records.slice(i, i + BATCH) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`the API refused a batch (${res.status}): ${text.slice(0, 500)}`);
    const result = JSON.parse(text) as typeof totals;
    totals.inserted += result.inserted;
    totals.updated += result.updated;
    totals.unchanged += result.unchanged;
  }
  process.stdout.write(
    `read ${loaded.files} files: ${loaded.records.length} advisories, ${loaded.errors.length} refused\n` +
      `imported: ${totals.inserted} new, ${totals.updated} updated, ${totals.unchanged} unchanged\n`,
  );
  return loaded.errors.length > 0 ? 1 : 0;
}
