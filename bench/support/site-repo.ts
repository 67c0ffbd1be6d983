// The config repository the reconciler benchmarks plan: SITES ShieldSites with RULES nested IP rules
// each, so SITES × (RULES + 1) objects (10 × 99 → 1 000), for bench:cli, bench:terraform and
// bench:reconcile.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function writeSiteRepo(dir: string, sites: number, rules: number): Promise<number> {
  for (let s = 0; s < sites; s++) {
    const list = Array.from({ length: rules }, (_, r) => `    - name: r${r}\n      type: ip\n      value: 10.${s}.${r >> 8}.${r & 255}\n      action: deny`).join('\n');
    await writeFile(
      join(dir, `site-${s}.yaml`),
      `apiVersion: aegis/v1\nkind: ShieldSite\nmetadata:\n  name: site-${s}\nspec:\n  domain: site-${s}.bench.example.com\n  origin_url: http://127.0.0.1:9\n  mode: block\n  ip_access:\n${list}\n`,
    );
  }
  return sites * (rules + 1);
}
