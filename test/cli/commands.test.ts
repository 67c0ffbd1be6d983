// The `aegis` command line (cli/program.ts): help on every command, `help COMMAND`, --version,
// usage errors and their exit codes, shell completion, colour only on a terminal.
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allCommands, buildProgram, commandPath } from '../../cli/program.ts';
import { colourEnabled } from '../../reconciler/cli/colour.ts';
import { runAegis } from '../support/cli.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/aegis-process.ts';

/** Runs the command tree in process, capturing what commander writes. */
async function inProcess(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const { run } = buildProgram({ out: (t) => (out += t), err: (t) => (err += t) });
  const code = await run(argv);
  return { code, out, err };
}

const paths = allCommands(buildProgram().program).map(commandPath);
const leaves = allCommands(buildProgram().program)
  .filter((cmd) => cmd.commands.length === 0)
  .map(commandPath);
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const ESC = '\u001b[';

describe('help', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('knows the commands the design names', () => {
    for (const path of ['serve', 'shield', 'worker', 'migrate', 'keys create', 'advisories import', 'provider install', 'validate', 'plan', 'apply', 'dump', 'watch', 'completion']) {
      expect(paths).toContain(path);
    }
  });

  it.each(paths)('aegis %s --help: usage, options and an example, exit 0', async (path) => {
    const { code, out, err } = await inProcess([...path.split(' '), '--help']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain(`Usage: aegis ${path}`);
    expect(out).toContain('Options:');
    expect(out).toMatch(/Examples:\n {2}# .+\n {2}\$ .*\baegis /);
  });

  it('the top-level help lists every command, subcommands by their full name', async () => {
    const { code, out } = await inProcess(['--help']);
    expect(code).toBe(0);
    for (const path of [...leaves, 'help']) expect(out).toMatch(new RegExp(`^ {2}${path}\\b`, 'm'));
    expect(out).toContain('Examples:');
  });

  it('aegis help plan, as a user runs it', async () => {
    const result = await runAegis(['help', 'plan']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: aegis plan [options] [dir]');
    expect(result.stdout).toContain('--terraform-json <file>');
    expect(result.stdout).toContain('Exit status: 0 no changes, 2 changes pending, 1 error');
    expect(result.stdout).not.toContain(ESC);
  });

  it('aegis help keys create, and aegis keys help create', async () => {
    for (const argv of [['help', 'keys', 'create'], ['keys', 'help', 'create']]) {
      const { code, out } = await inProcess(argv);
      expect(code).toBe(0);
      expect(out).toContain('Usage: aegis keys create [options]');
    }
  });

  it('aegis help of a command that does not exist: exit 1, with a suggestion', async () => {
    const { code, out, err } = await inProcess(['help', 'pln']);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toBe('aegis: unknown command \'pln\'\n(Did you mean plan?)\n(see "aegis --help" for usage and examples)\n');
  });

  it('without a command: the help on stderr, exit 1', async () => {
    const { code, out, err } = await inProcess([]);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toContain('Usage: aegis <command> [options]');
  });

  it('--version prints package.json version', async () => {
    const result = await runAegis(['--version']);
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('usage errors exit 1 with `aegis <command>: message` and a pointer to --help', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('a mistyped group command gets a suggestion too', async () => {
    const { code, err } = await inProcess(['kyes']);
    expect(code).toBe(1);
    expect(err).toContain("aegis: unknown command 'kyes'\n(Did you mean keys?)");
  });

  it('an unknown command, with a suggestion', async () => {
    const result = await runAegis(['paln']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("aegis: unknown command 'paln'");
    expect(result.stderr).toContain('plan');
    expect(result.stderr).toContain('aegis --help');
  });

  it.each([
    [['plan', '--nope'], "aegis plan: unknown option '--nope'"],
    [['keys', 'create', '--scopes', 'admin'], "aegis keys create: required option '--org <slug>' not specified"],
    [['watch'], "aegis watch: missing required argument 'dir'"],
    [['watch', 'a', 'b'], 'aegis watch: too many arguments'],
    [['validate'], 'aegis validate: missing the config: DIR or --terraform-json FILE'],
    [['plan', 'config', '--terraform-json', 'cdk.tf.json'], 'aegis plan: give either DIR or --terraform-json FILE, not both'],
    [['plan', 'config', '--json', '--markdown'], "aegis plan: option '--json' cannot be used with option '--markdown'"],
    [['completion', 'tcsh'], "aegis completion: command-argument value 'tcsh' is invalid"],
    [['keys', 'rotate'], "aegis keys: unknown command 'rotate'"],
  ])('aegis %j', async (argv, message) => {
    const { code, out, err } = await inProcess(argv);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toContain(message);
    expect(err).toMatch(/see "aegis[a-z ]* --help" for usage and examples/);
  });

  it('a failing command: `aegis <command>: message`, exit 1', async () => {
    const result = await runAegis(['plan', 'examples/gitops'], { AEGIS_API_URL: '', AEGIS_API_KEY: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('aegis plan: set AEGIS_API_URL (e.g. http://localhost:3000) and AEGIS_API_KEY\n');
  });

  it('aegis worker and aegis shield without DATABASE_URL keep their exit code 2', async () => {
    const [worker, shield] = await Promise.all([runAegis(['worker'], { DATABASE_URL: '' }), runAegis(['shield'], { DATABASE_URL: '' })]);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('set DATABASE_URL');
    expect(shield.code).toBe(2);
    expect(shield.stderr).toContain('set DATABASE_URL');
  });

  it('aegis serve: --self-heal needs --config-dir', async () => {
    const { code, err } = await inProcess(['serve', '--self-heal']);
    expect(code).toBe(1);
    expect(err).toBe('');
  });
});

describe('completion', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it.each(['bash', 'zsh', 'fish'] as const)('%s: generated from the command tree', async (shell) => {
    const { code, out, err } = await inProcess(['completion', shell]);
    expect(err).toBe('');
    expect(code).toBe(0);
    for (const word of ['serve', 'validate', 'plan', 'watch', 'keys', 'create', 'advisories', 'import', 'provider', 'install', 'completion']) {
      expect(out).toContain(word);
    }
    // fish names long options without their dashes (-l terraform-json).
    for (const option of ['terraform-json', 'no-prune', 'max-change-percent', 'impact-window', 'no-impact', 'max-new-blocks', 'org']) expect(out).toContain(shell === 'fish' ? `-l ${option}` : `--${option}`);
  });

  // bash is everywhere; zsh and fish only where installed.
  const shells = ['bash', 'zsh', 'fish'].filter((shell) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0);
  it.each(shells)('%s parses the script (shells installed here)', async (shell) => {
    const { out } = await inProcess(['completion', shell]);
    const dir = await mkdtemp(join(tmpdir(), 'aegis-completion-'));
    try {
      await writeFile(join(dir, 'script'), out);
      await new Promise<void>((resolve, reject) => execFile(shell, ['-n', join(dir, 'script')], (error, _o, stderr) => (error ? reject(new Error(stderr)) : resolve())));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('bash completes commands, subcommands, options and argument choices', async () => {
    const { out } = await inProcess(['completion', 'bash']);
    const dir = await mkdtemp(join(tmpdir(), 'aegis-completion-'));
    try {
      await writeFile(join(dir, 'aegis.bash'), out);
      const probe = `source ${join(dir, 'aegis.bash')}
t() { COMP_WORDS=("$@"); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); _aegis; echo "\${COMPREPLY[*]}"; }
t aegis ke; t aegis keys ''; t aegis keys create --o; t aegis plan ./config --no; t aegis completion ''; t aegis help pl`;
      const lines = await new Promise<string[]>((resolve, reject) =>
        execFile('bash', ['-c', probe], (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout.trimEnd().split('\n')))),
      );
      expect(lines).toEqual(['keys', 'create help', '--org', '--no-prune --no-impact', 'bash zsh fish', 'plan']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('colour', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const saved = { isTTY: process.stdout.isTTY, NO_COLOR: process.env.NO_COLOR };
  afterEach(() => {
    process.stdout.isTTY = saved.isTTY;
    if (saved.NO_COLOR === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = saved.NO_COLOR;
  });

  it('only on a terminal, never with NO_COLOR set (to anything but empty)', () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({}, {})).toBe(false);
  });

  it('help: bold headings on a terminal, plain text with NO_COLOR or into a pipe', async () => {
    process.stdout.isTTY = true;
    delete process.env.NO_COLOR;
    expect((await inProcess(['plan', '--help'])).out).toContain(`${ESC}1mOptions:`);
    process.env.NO_COLOR = '1';
    expect((await inProcess(['plan', '--help'])).out).not.toContain(ESC);
    const piped = await runAegis(['--help'], { NO_COLOR: '' });
    expect(piped.stdout).toContain('Options:');
    expect(piped.stdout).not.toContain(ESC);
  });
});
