// `aegis plan`, `aegis apply` and `aegis dump`. Exit codes follow Terraform's detailed exit codes:
// 0 no changes (or applied), 2 changes pending (plan), 1 error. The command line itself (flags,
// help, examples) is declared in cli/program.ts; these functions take its parsed options.
import { createInterface } from 'node:readline/promises';
import { applyPlan, renderApplyReport } from '../apply/apply.ts';
import { dumpConfig } from '../dump/dump.ts';
import { readLiveState } from '../live/read.ts';
import { DEFAULT_IMPACT_WINDOW, newBlockViolations, parseImpactWindow, parseMaxNewBlocks, previewPlanImpact, type ImpactWindow } from '../plan/impact.ts';
import { hasChanges } from '../plan/plan.ts';
import { DEFAULT_THRESHOLDS, thresholdViolation, type Thresholds } from '../plan/safety.ts';
import { renderJson, renderMarkdown, renderText } from '../output/render.ts';
import { colourEnabled } from './colour.ts';
import { connect, preparePlan, type Connection, type PlanSession } from '../sync/session.ts';
import { configDirOf, configPath, resolveSource, UsageError } from './source.ts';

export interface PlanOptions {
  /** A Terraform JSON file (`cdktf synth` output) instead of a config directory. */
  terraformJson?: string | undefined;
  source?: string | undefined;
  adopt?: boolean | undefined;
  /** false with --no-prune. */
  prune?: boolean | undefined;
  denyWeakening?: boolean | undefined;
  json?: boolean | undefined;
  markdown?: boolean | undefined;
  /** How much recorded traffic an impact preview replays: `30m`, `6h`, `24h` (default), `7d`. */
  impactWindow?: string | undefined;
  /** false with --no-impact. */
  impact?: boolean | undefined;
  /** Fail (plan) or refuse (apply) when a site's total newly blocked requests exceed this. */
  maxNewBlocks?: string | undefined;
}

export interface ImpactFlags {
  /** null: --no-impact. */
  window: ImpactWindow | null;
  maxNewBlocks: number | undefined;
}

/** --impact-window, --no-impact and --max-new-blocks, checked before anything is read. */
export function impactFlagsFrom(options: Pick<PlanOptions, 'impactWindow' | 'impact' | 'maxNewBlocks'>): ImpactFlags {
  const window = parseImpactWindow(options.impactWindow ?? DEFAULT_IMPACT_WINDOW);
  if (!window) throw new UsageError(`--impact-window must be a whole number of minutes, hours or days (30m, 6h, 24h, 7d; at most 90d), got "${options.impactWindow}"`);
  const maxNewBlocks = options.maxNewBlocks === undefined ? undefined : parseMaxNewBlocks(options.maxNewBlocks);
  if (maxNewBlocks === null) throw new UsageError(`--max-new-blocks must be a whole number of requests, got "${options.maxNewBlocks}"`);
  if (options.impact === false && maxNewBlocks !== undefined) throw new UsageError('--max-new-blocks needs the impact preview; leave out --no-impact');
  return { window: options.impact === false ? null : window, maxNewBlocks };
}

type Format = 'text' | 'json' | 'markdown';

async function session(dir: string | undefined, options: PlanOptions): Promise<{ session: PlanSession; format: Format; environment: Connection['environment'] } | number> {
  const path = configPath(dir, options);
  const flags = impactFlagsFrom(options);
  const format: Format = options.json ? 'json' : options.markdown ? 'markdown' : 'text';
  // The live read starts while the config is checked (preparePlan); bad config cancels it, so the
  // errors are not followed by a wait for an API that may be slow or down.
  const reads = new AbortController();
  const { api, environment, impact } = connect(process.env, reads.signal);
  const source = await resolveSource(options.source, await configDirOf(path));
  const prepared = await preparePlan(api, {
    path,
    source,
    adopt: options.adopt === true,
    prune: options.prune !== false,
    denyWeakening: options.denyWeakening === true,
  });
  if ('configErrors' in prepared) {
    reads.abort();
    for (const line of [...prepared.configErrors, ...prepared.warnings]) process.stderr.write(`${line}\n`);
    process.stderr.write(`${prepared.configErrors.length} error(s) in the configuration; nothing was changed.\n`);
    return 1;
  }
  if (flags.window && hasChanges(prepared.plan)) prepared.impact = await previewPlanImpact(prepared.plan, { previewer: impact, window: flags.window });
  return { session: prepared, format, environment };
}

/** Why the previewed impact goes past --max-new-blocks (none without the flag). */
function impactViolations(s: PlanSession, options: PlanOptions): string[] {
  const { maxNewBlocks } = impactFlagsFrom(options);
  return maxNewBlocks !== undefined && s.impact ? newBlockViolations(s.impact, maxNewBlocks) : [];
}

function print(s: PlanSession, format: Format, environment: Connection['environment'], stream: NodeJS.WriteStream): void {
  const context = { warnings: s.warnings, errors: s.errors, environment, impact: s.impact };
  stream.write(format === 'json' ? renderJson(s.plan, context) : format === 'markdown' ? renderMarkdown(s.plan, context) : renderText(s.plan, context, colourEnabled(stream)));
}

export async function planCommand(dir: string | undefined, options: PlanOptions): Promise<number> {
  const prepared = await session(dir, options);
  if (typeof prepared === 'number') return prepared;
  // Past --max-new-blocks is an error of the plan: said in it (JSON and Markdown too), exit 1.
  prepared.session.errors.push(...impactViolations(prepared.session, options).map((reason) => `${reason} (--max-new-blocks)`));
  print(prepared.session, prepared.format, prepared.environment, process.stdout);
  if (prepared.session.errors.length > 0) return 1;
  return hasChanges(prepared.session.plan) ? 2 : 0;
}

export interface ThresholdOptions {
  maxChanges?: string | undefined;
  maxChangePercent?: string | undefined;
}

/** --max-changes and --max-change-percent over the defaults. */
export function thresholdsFrom(options: ThresholdOptions): Thresholds {
  const number = (flag: string, value: string | undefined, fallback: number): number => {
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${flag} must be a non-negative number, got "${value}"`);
    return n;
  };
  return { floor: number('max-changes', options.maxChanges, DEFAULT_THRESHOLDS.floor), percent: number('max-change-percent', options.maxChangePercent, DEFAULT_THRESHOLDS.percent) };
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(question)).trim().toLowerCase() === 'yes';
  } finally {
    rl.close();
  }
}

export interface ApplyOptions extends PlanOptions, ThresholdOptions {
  yes?: boolean | undefined;
  force?: boolean | undefined;
  checksum?: string | undefined;
}

export async function applyCommand(dir: string | undefined, options: ApplyOptions): Promise<number> {
  const prepared = await session(dir, options);
  if (typeof prepared === 'number') return prepared;
  const { session: s } = prepared;
  print(s, prepared.format === 'json' ? 'json' : 'text', prepared.environment, process.stdout);
  if (s.errors.length > 0) {
    process.stderr.write('Not applying: the plan has errors.\n');
    return 1;
  }
  if (options.checksum && options.checksum !== s.plan.checksum) {
    process.stderr.write(`Not applying: the plan's checksum is ${s.plan.checksum}, not the reviewed ${options.checksum}; live state or config changed since. Review the new plan.\n`);
    return 1;
  }
  if (!hasChanges(s.plan)) return 0;
  // Not overridden by --force: whoever passes --max-new-blocks asks for exactly this check.
  const blocks = impactViolations(s, options);
  if (blocks.length > 0) {
    for (const reason of blocks) process.stderr.write(`refusing to apply: ${reason}\n`);
    return 1;
  }
  const violation = thresholdViolation(s.plan, thresholdsFrom(options));
  if (violation && !options.force) {
    process.stderr.write(`${violation}\n`);
    return 1;
  }
  if (!options.yes) {
    if (!process.stdin.isTTY) {
      process.stderr.write('Not applying: no terminal to confirm on; pass --yes to apply non-interactively.\n');
      return 1;
    }
    if (!(await confirm('Apply these changes? Only "yes" is accepted: '))) {
      process.stderr.write('Apply cancelled.\n');
      return 1;
    }
  }
  const { api } = connect();
  const result = await applyPlan(s.plan, api);
  process.stdout.write(renderApplyReport(result));
  return result.failed.length > 0 ? 1 : 0;
}

export interface DumpOptions {
  out: string;
  /** Only this source's objects, and an aegis.yaml naming it (so a plan of the dump needs no flag). */
  source?: string | undefined;
}

export async function dumpCommand(options: DumpOptions): Promise<number> {
  const { api } = connect();
  const live = await readLiveState(api);
  if (live.incomplete.length > 0) {
    for (const i of live.incomplete) process.stderr.write(`could not read ${i.collection}: ${i.error}\n`);
    return 1;
  }
  const { files, warnings } = await dumpConfig(live, options.out, { source: options.source });
  for (const warning of warnings) process.stderr.write(`${warning}\n`);
  process.stdout.write(`wrote ${files.length} file(s) to ${options.out}\n`);
  return 0;
}
