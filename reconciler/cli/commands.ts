// `aegis plan`, `aegis apply` and `aegis dump`. Exit codes follow Terraform's detailed exit codes:
// 0 no changes (or applied), 2 changes pending (plan), 1 error.
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { applyPlan, renderApplyReport } from '../apply/apply.ts';
import { dumpConfig } from '../dump/dump.ts';
import { readLiveState } from '../live/read.ts';
import { hasChanges } from '../plan/plan.ts';
import { DEFAULT_THRESHOLDS, thresholdViolation, type Thresholds } from '../plan/safety.ts';
import { renderJson, renderMarkdown, renderText } from '../output/render.ts';
import { connect, preparePlan, type PlanSession } from './session.ts';
import { resolveSource } from './source.ts';

const planOptions = {
  source: { type: 'string' },
  adopt: { type: 'boolean', default: false },
  'no-prune': { type: 'boolean', default: false },
  'deny-weakening': { type: 'boolean', default: false },
  'terraform-json': { type: 'string' },
  json: { type: 'boolean', default: false },
  markdown: { type: 'boolean', default: false },
} as const;

type Parsed = ReturnType<typeof parseArgs<{ args: string[]; options: typeof planOptions; allowPositionals: true }>>['values'];

async function session(values: Parsed, positionals: string[]): Promise<{ session: PlanSession; format: 'text' | 'json' | 'markdown' } | number> {
  const path = values['terraform-json'] ?? positionals[0];
  if (!path) {
    process.stderr.write('usage: aegis plan|apply DIR [--terraform-json FILE] [--source ID] [--adopt] [--no-prune] [--deny-weakening] [--json|--markdown]\n');
    return 1;
  }
  const format = values.json ? 'json' : values.markdown ? 'markdown' : 'text';
  const { api } = connect();
  const source = await resolveSource(values.source, values['terraform-json'] ? '.' : path);
  const prepared = await preparePlan(api, { path, source, adopt: values.adopt, prune: !values['no-prune'], denyWeakening: values['deny-weakening'] });
  if ('configErrors' in prepared) {
    for (const line of [...prepared.configErrors, ...prepared.warnings]) process.stderr.write(`${line}\n`);
    process.stderr.write(`${prepared.configErrors.length} error(s) in the configuration; nothing was read or changed.\n`);
    return 1;
  }
  return { session: prepared, format };
}

function print(s: PlanSession, format: 'text' | 'json' | 'markdown', stream: NodeJS.WriteStream): void {
  const context = { warnings: s.warnings, errors: s.errors };
  stream.write(format === 'json' ? renderJson(s.plan, context) : format === 'markdown' ? renderMarkdown(s.plan, context) : renderText(s.plan, context, stream.isTTY === true));
}

export async function planCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: planOptions, allowPositionals: true });
  const prepared = await session(values, positionals);
  if (typeof prepared === 'number') return prepared;
  print(prepared.session, prepared.format, process.stdout);
  if (prepared.session.errors.length > 0) return 1;
  return hasChanges(prepared.session.plan) ? 2 : 0;
}

/** --max-changes and --max-change-percent over the defaults. */
export function thresholdsFrom(values: { 'max-changes'?: string | undefined; 'max-change-percent'?: string | undefined }): Thresholds {
  const number = (flag: string, value: string | undefined, fallback: number): number => {
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${flag} must be a non-negative number, got "${value}"`);
    return n;
  };
  return { floor: number('max-changes', values['max-changes'], DEFAULT_THRESHOLDS.floor), percent: number('max-change-percent', values['max-change-percent'], DEFAULT_THRESHOLDS.percent) };
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(question)).trim().toLowerCase() === 'yes';
  } finally {
    rl.close();
  }
}

export async function applyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...planOptions,
      yes: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      checksum: { type: 'string' },
      'max-changes': { type: 'string' },
      'max-change-percent': { type: 'string' },
    },
    allowPositionals: true,
  });
  const prepared = await session(values, positionals);
  if (typeof prepared === 'number') return prepared;
  const { session: s } = prepared;
  print(s, prepared.format === 'json' ? 'json' : 'text', process.stdout);
  if (s.errors.length > 0) {
    process.stderr.write('Not applying: the plan has errors.\n');
    return 1;
  }
  if (values.checksum && values.checksum !== s.plan.checksum) {
    process.stderr.write(`Not applying: the plan's checksum is ${s.plan.checksum}, not the reviewed ${values.checksum}; live state or config changed since. Review the new plan.\n`);
    return 1;
  }
  if (!hasChanges(s.plan)) return 0;
  const violation = thresholdViolation(s.plan, thresholdsFrom(values));
  if (violation && !values.force) {
    process.stderr.write(`${violation}\n`);
    return 1;
  }
  if (!values.yes) {
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

export async function dumpCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string', default: 'aegis-config' } } });
  const { api } = connect();
  const live = await readLiveState(api);
  if (live.incomplete.length > 0) {
    for (const i of live.incomplete) process.stderr.write(`could not read ${i.collection}: ${i.error}\n`);
    return 1;
  }
  const { files } = await dumpConfig(live, values.out);
  process.stdout.write(`wrote ${files.length} file(s) to ${values.out}\n`);
  return 0;
}
