// `aegis scan --policy FILE`: the scan policy of URL scans (scanners/web/policy.ts) for every
// scan type — per rule id, `ignore` (not reported), `warn` (reported, never fails the run) or
// `fail` (fails the run whatever its severity). Rules the file does not name follow --fail-on.
// The file is YAML or JSON: a mapping of rule id to mark, as the API's `policy` field takes it.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { ScanPolicy } from '../scanners/web/policy.ts';

const MARKS: ReadonlySet<string> = new Set(['ignore', 'warn', 'fail']);
/** The API takes at most this many entries (api/scans/url/schemas.ts). */
const MAX_RULES = 200;

/** Reads and checks a policy file; the message of what it throws names the file and the entry at fault. */
export async function readPolicy(file: string): Promise<ScanPolicy> {
  const text = await readFile(file, 'utf8');
  const doc: unknown = parseYaml(text);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('expected a mapping of rule id to ignore, warn or fail');
  const entries = Object.entries(doc as Record<string, unknown>);
  if (entries.length > MAX_RULES) throw new Error(`at most ${MAX_RULES} rules (got ${entries.length})`);
  const policy: ScanPolicy = {};
  for (const [rule, mark] of entries) {
    if (typeof mark !== 'string' || !MARKS.has(mark)) throw new Error(`${rule}: expected ignore, warn or fail (got ${JSON.stringify(mark)})`);
    policy[rule] = mark as ScanPolicy[string];
  }
  return policy;
}

/** What the policy leaves to report: everything but the rules it ignores. */
export function withoutIgnored<F extends { rule_id: string }>(findings: readonly F[], policy: ScanPolicy | undefined): F[] {
  return policy ? findings.filter((f) => policy[f.rule_id] !== 'ignore') : [...findings];
}
