// `aegis validate DIR` (or `aegis validate cdk.tf.json`): loads, checks and lints config offline,
// without the API. Prints every problem as `file:line:col kind/name: message`, errors and warnings
// interleaved in file order; the exit code is 1 when there is an error, 0 with warnings only.
import { stat } from 'node:fs/promises';
import { formatProblem, type ConfigProblem, type DesiredObject } from '../model.ts';
import { lintConfig } from './lint.ts';
import { loadConfigDirDetailed, type DetailedLoad } from './load.ts';
import { sortProblems } from './problems.ts';
import { loadTerraformJson } from './terraform-json.ts';
import { validateConfig } from './validate.ts';

export const VALIDATE_USAGE = `usage: aegis validate DIR | FILE.tf.json [--no-lint]
  DIR            a directory of *.yaml / *.yml config documents
  FILE.tf.json   Terraform JSON as written by \`cdktf synth\`
  --no-lint      skip the security lint (warnings)
`;

export interface ValidationReport {
  objects: DesiredObject[];
  errors: ConfigProblem[];
  warnings: ConfigProblem[];
}

/** Load + cross-document checks + lint of a config directory or a Terraform JSON file. */
export async function validateSource(path: string, options: { lint?: boolean } = {}): Promise<ValidationReport> {
  const loaded: DetailedLoad = (await stat(path)).isDirectory() ? await loadConfigDirDetailed(path) : await loadTerraformJson(path);
  const errors = sortProblems([...loaded.problems, ...validateConfig(loaded.objects, { rejected: loaded.rejected })]);
  const warnings = options.lint === false ? [] : lintConfig(loaded.objects);
  return { objects: loaded.objects, errors, warnings };
}

export interface CommandOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

const processOutput: CommandOutput = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export interface ValidateOptions {
  /** false with --no-lint: skip the security lint (warnings). */
  lint?: boolean | undefined;
}

/** `aegis validate PATH` with the options the command line parsed (cli/program.ts). */
export async function runValidate(path: string, options: ValidateOptions = {}, output: CommandOutput = processOutput): Promise<number> {
  const report = await validateSource(path, { lint: options.lint !== false });
  const all = sortProblems([...report.errors, ...report.warnings]);
  // One stream, so errors and warnings stay in file order when piped.
  for (const problem of all) output.out(`${formatProblem(problem)}\n`);
  const summary = `${plural(report.objects.length, 'object')}, ${plural(report.errors.length, 'error')}, ${plural(report.warnings.length, 'warning')}\n`;
  output.out(summary);
  return report.errors.length > 0 ? 1 : 0;
}

/**
 * In-process form taking raw arguments (`[PATH, --no-lint]`), for callers without the command line;
 * a usage mistake prints VALIDATE_USAGE and returns 2. `aegis validate` itself parses with
 * commander (cli/program.ts) and calls runValidate.
 */
export async function validateCommand(args: string[], output: CommandOutput = processOutput): Promise<number> {
  const paths = args.filter((a) => !a.startsWith('-'));
  const unknown = args.filter((a) => a.startsWith('-') && a !== '--no-lint');
  if (paths.length !== 1 || unknown.length > 0) {
    output.err(VALIDATE_USAGE);
    return 2;
  }
  return runValidate(paths[0] ?? '', { lint: !args.includes('--no-lint') }, output);
}
