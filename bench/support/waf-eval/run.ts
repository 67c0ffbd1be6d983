// The evaluation behind `npm run eval:managed` (bench/managed-rules-eval.ts): options, corpora,
// targets, sending, report. The benign corpus comes in as a function so the entry point decides
// where it comes from.
import { availableParallelism } from 'node:os';
import { BareRepo } from './bare-repo.ts';
import { crsRegressionRequests, type CrsCorpus } from './crs-regression.ts';
import { gotestwafRequests } from './gotestwaf.ts';
import { intruderRequests, PER_FILE_CAP } from './intruder-lists.ts';
import { printReport, writeJson, type Results } from './report.ts';
import { sendToAll } from './send.ts';
import { startTargets } from './targets.ts';
import type { EvalRequest } from './types.ts';
import { wcpRequests, type WcpCorpus } from './wcp-payloads.ts';

export const USAGE = `usage: managed-rules-eval.ts [--gotestwaf DIR] [--payloads DIR] [--crs DIR] [--wcp DIR] [--mirrors DIR] [--sample N] [--misses N] [--json FILE] [--concurrency N] [--targets LIST]
  --gotestwaf DIR   bare git dir of wallarm/gotestwaf            (env GOTESTWAF_DIR; default MIRRORS/wallarm+gotestwaf/repo)
  --payloads DIR    bare git dir of swisskyrepo/PayloadsAllTheThings (env PAYLOADS_DIR; default MIRRORS/swisskyrepo+PayloadsAllTheThings/repo)
  --crs DIR         bare git dir of coreruleset/coreruleset (its regression tests; env CRS_DIR; default MIRRORS/coreruleset+coreruleset/repo; left out when absent)
  --wcp DIR         bare git dir of openappsec/mgm-web-attack-payloads (the WAF Comparison Project's attacks; env WCP_DIR; default MIRRORS/openappsec+mgm-web-attack-payloads/repo; left out when absent)
  --mirrors DIR     where the benign sources' mirrors are         (env EVAL_MIRRORS; default /work/.mirror)
  --sample N        send N benign requests (evenly spread over the corpus) instead of all
  --misses N        list the first N attacks per class that passed PL1, and the first N benign requests blocked at PL1
  --json FILE       write every request's class, placement, encoding, source and answer per target
  --concurrency N   requests in flight per target (default 32)
  --targets LIST    only these targets, comma-separated (PL1,PL2,PL3,PL4,ModSec; default all): a quicker run while tuning`;

interface Options {
  gotestwaf: string;
  payloads: string;
  crs: string;
  wcp: string;
  mirrors: string;
  sample: number | null;
  misses: number;
  json: string | null;
  concurrency: number;
  targets: string[] | null;
}

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function parseOptions(args: string[]): Options {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const [name, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!['--gotestwaf', '--payloads', '--crs', '--wcp', '--mirrors', '--sample', '--misses', '--json', '--concurrency', '--targets'].includes(name)) fail(`unknown argument ${JSON.stringify(arg)}`);
    const value = inline ?? args[++i];
    if (value === undefined) fail(`${name} needs a value`);
    flags.set(name, value);
  }
  const count = (name: string, fallback: number | null): number | null => {
    const raw = flags.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) fail(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
    return n;
  };
  const mirrors = flags.get('--mirrors') ?? process.env.EVAL_MIRRORS ?? '/work/.mirror';
  return {
    mirrors,
    gotestwaf: flags.get('--gotestwaf') ?? process.env.GOTESTWAF_DIR ?? `${mirrors}/wallarm+gotestwaf/repo`,
    payloads: flags.get('--payloads') ?? process.env.PAYLOADS_DIR ?? `${mirrors}/swisskyrepo+PayloadsAllTheThings/repo`,
    crs: flags.get('--crs') ?? process.env.CRS_DIR ?? `${mirrors}/coreruleset+coreruleset/repo`,
    wcp: flags.get('--wcp') ?? process.env.WCP_DIR ?? `${mirrors}/openappsec+mgm-web-attack-payloads/repo`,
    sample: count('--sample', null),
    misses: count('--misses', 0)!,
    json: flags.get('--json') ?? null,
    concurrency: Math.max(1, count('--concurrency', 32)!),
    targets: flags.get('--targets')?.split(',') ?? null,
  };
}

/** `n` of `list`, evenly spread, so every source keeps its share. */
function sample<T>(list: T[], n: number | null): T[] {
  if (n === null || n >= list.length) return list;
  return Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]!);
}

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

export async function runEvaluation(args: string[], benignRequests: (mirrors: string) => EvalRequest[]): Promise<void> {
  const options = parseOptions(args);
  const gotestwafRepo = new BareRepo(options.gotestwaf);
  const payloadsRepo = new BareRepo(options.payloads);
  if (!gotestwafRepo.present) fail(`wallarm/gotestwaf not found at ${options.gotestwaf} (a bare git dir; --gotestwaf or GOTESTWAF_DIR)`);
  if (!payloadsRepo.present) fail(`swisskyrepo/PayloadsAllTheThings not found at ${options.payloads} (a bare git dir; --payloads or PAYLOADS_DIR)`);

  // The CRS and WAF Comparison Project corpora are optional: a run without their mirrors measures the others.
  const crsRepo = new BareRepo(options.crs);
  const wcpRepo = new BareRepo(options.wcp);

  let since = performance.now();
  const gotestwaf = gotestwafRequests(gotestwafRepo);
  const intruder = intruderRequests(payloadsRepo);
  const crs: CrsCorpus | null = crsRepo.present ? crsRegressionRequests(crsRepo) : null;
  const wcp: WcpCorpus | null = wcpRepo.present ? wcpRequests(wcpRepo) : null;
  const benignAll = [...benignRequests(options.mirrors), ...gotestwaf.benign];
  const benign = sample(benignAll, options.sample);
  // CRS's benign stages are sent whole, as its attacks are: a sample would leave a handful.
  const requests: EvalRequest[] = [...gotestwaf.attacks, ...intruder.attacks, ...(crs?.attacks ?? []), ...(wcp?.attacks ?? []), ...benign, ...(crs?.benign ?? []), ...(wcp?.benign ?? [])];
  console.log(`corpora (built in ${seconds(since)}):`);
  console.log(`  gotestwaf ${gotestwafRepo.head().slice(0, 12)}: ${gotestwaf.attacks.length} attack requests (payload × encoder × placeholder), ${gotestwaf.benign.length} benign (false-pos)`);
  for (const note of gotestwaf.notes) console.log(`    ${note}`);
  console.log(`  PayloadsAllTheThings ${payloadsRepo.head().slice(0, 12)}: ${intruder.attacks.length} attack requests (intruder lists × query, form, JSON; XXE also XML, CRLF also path; at most ${PER_FILE_CAP} payloads a file)`);
  for (const note of intruder.notes) console.log(`    ${note}`);
  if (crs) {
    console.log(`  CRS regression tests ${crsRepo.head().slice(0, 12)}: ${crs.attacks.length} attack requests, ${crs.benign.length} benign (stages that only rule out an attack rule; always sent whole), one per test stage as go-ftw sends it`);
    for (const note of crs.notes) console.log(`    ${note}`);
  } else {
    console.log(`  CRS regression tests: not found at ${options.crs} (a bare git dir; --crs or CRS_DIR): left out`);
  }
  if (wcp) {
    console.log(`  WAF Comparison Project payloads ${wcpRepo.head().slice(0, 12)}: ${wcp.attacks.length} attack requests, ${wcp.benign.length} benign (the collection's false-positive lists; always sent whole), each as that project's tool sends it (GET /?p=…, POST p=…; Shellshock also as the User-Agent)`);
    for (const note of wcp.notes) console.log(`    ${note}`);
  } else {
    console.log(`  WAF Comparison Project payloads: not found at ${options.wcp} (a bare git dir; --wcp or WCP_DIR): left out`);
  }
  console.log(`  benign: ${benign.length} requests${benign.length < benignAll.length ? ` (a sample of ${benignAll.length})` : ''} from ${new Set(benign.map((r) => r.source)).size} sources${crs ? `, plus CRS's ${crs.benign.length}` : ''}${wcp ? `, plus the WAF Comparison Project payloads' ${wcp.benign.length}` : ''}`);

  since = performance.now();
  const started = await startTargets();
  const targets = options.targets ? { ...started, list: started.list.filter((t) => options.targets!.includes(t.label)) } : started;
  if (targets.list.length === 0) fail(`no target among ${JSON.stringify(options.targets)} (targets: ${started.list.map((t) => t.label).join(', ')})`);
  try {
    console.log(`\ntargets: Aegis gateway, sites at managed-rules paranoia 1–4 (block)${targets.modsecMissing ? '' : '; nginx + ModSecurity v3 + OWASP CRS, paranoia 1 (block)'}; all in front of one origin; started in ${seconds(since)}`);
    if (targets.modsecMissing) console.log(`  ${targets.modsecMissing}: no ModSec column`);
    console.log(`sending ${requests.length} requests to each of ${targets.list.length} targets, ${options.concurrency} in flight per target (${availableParallelism()} cores)…`);
    since = performance.now();
    const answers = await sendToAll(targets.list, requests, options.concurrency);
    const sendTime = seconds(since);
    await targets.settle();
    const pl1Ids = answers.get('PL1')?.requestIds;
    const results: Results = { requests, labels: targets.list.map((t) => t.label), answers, pl1Rule: (i) => {
      const id = pl1Ids?.get(i);
      return id === undefined ? undefined : targets.pl1Rule(id);
    } };
    console.log(`sent in ${sendTime}`);
    printReport(results, { misses: options.misses });
    if (options.json) {
      await writeJson(options.json, results, { gotestwaf: gotestwafRepo.head(), payloads: payloadsRepo.head(), crs: crs ? crsRepo.head() : null, wcp: wcp ? wcpRepo.head() : null, targets: results.labels, sample: options.sample, at: new Date().toISOString() });
      console.log(`\nper-request results written to ${options.json}`);
    }
  } finally {
    await targets.close();
  }
}
