// The `aegis` command tree: every command and subcommand with its flags, help text and examples, in
// one place (commander). What a command does stays in its module, imported only when the command
// runs, so `aegis --help` loads this file and commander and nothing else (see bin/aegis.mjs).
//
// Conventions the whole tree shares (applied by `finish` below):
//   - `--help` on every command prints usage, options and examples to stdout, exit 0;
//     `aegis help COMMAND` does the same.
//   - A usage mistake (unknown command or option, missing argument) prints `aegis <cmd>: message`
//     and a pointer to `--help` on stderr, exit 1. So does a command that fails. Except `aegis
//     scan`, whose exit 1 means "a finding reached --fail-on": its usage mistakes exit 2.
//   - Every other exit code is the command's own (plan: 0 no changes, 2 changes, 1 error).
//   - Colour only on a terminal, never with NO_COLOR set (reconciler/cli/colour.ts).
import { Argument, Command, CommanderError, Option, type HelpConfiguration } from 'commander';
import { colourEnabled } from '../reconciler/cli/colour.ts';
import { errorMessage } from '../schemas/json-value.ts';
import { aegisVersion } from './version.ts';

/** Thrown by a command for a usage mistake its module notices (UsageError in reconciler/cli/source.ts). */
const isUsageError = (err: unknown): err is Error => err instanceof Error && err.name === 'UsageError';

/** commander's codes for a usage mistake (not --help or --version, which exit 0). */
const SCAN_USAGE_ERRORS: ReadonlySet<string> = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.invalidArgument',
  'commander.excessArguments',
  'commander.conflictingOption',
  'commander.error',
]);

const API_ENV = `
Environment:
  AEGIS_API_URL    the API to talk to, e.g. http://localhost:3000
  AEGIS_API_KEY    an API key with scope admin`;
const RECONCILER_ENV = `${API_ENV}
  AEGIS_SOURCE     the ownership source when --source is not given`;

const SOURCE_RULE = `
Ownership source (what this config owns; only its objects are updated or pruned), first match wins:
  --source, AEGIS_SOURCE (when not empty), \`source:\` in DIR/aegis.yaml, DIR's git remote, DIR's name.
  With --terraform-json FILE, DIR is the file's directory.`;

const IMPACT_RULE = `
Impact preview: under each change to a Shield site's mode, path_case or managed_rules, or to its IP
rules, virtual patches or rate limits, what the change would have done to the site's recorded
traffic over --impact-window (newly blocked, challenged, allowed). Advice only: a server without it,
a rate limit or a network error leave the plan as it is, with a note. --max-new-blocks fails when a
site's total goes past it, or when its impact cannot be previewed (--force does not override it).`;

function examples(...items: [comment: string, command: string][]): string {
  return `\nExamples:\n${items.map(([comment, command]) => `  # ${comment}\n  $ ${command}`).join('\n')}`;
}

/** `keys create` for the subcommand `create` of `keys`; '' for the root. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every command under (not including) `root`, depth first. */
export function allCommands(root: Command): Command[] {
  return root.commands.flatMap((cmd) => [cmd, ...allCommands(cmd)]);
}

export interface AegisProgram {
  program: Command;
  /** Parses argv (without the node and script arguments), runs the command, resolves to its exit code. */
  run(argv: string[]): Promise<number>;
}

/** Where help, usage errors and completion scripts go (tests capture them); commands write to the process's streams. */
export interface ProgramOutput {
  out(text: string): void;
  err(text: string): void;
}

const processOutput: ProgramOutput = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

export function buildProgram(io: ProgramOutput = processOutput): AegisProgram {
  let exitCode = 0;

  /** An action that runs a command module and keeps its exit code; failures print `aegis <cmd>: message`. */
  const run =
    <A extends unknown[]>(fn: (...args: A) => Promise<number>) =>
    async (...args: [...A, Command]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      try {
        exitCode = await fn(...(args.slice(0, -1) as A));
      } catch (err) {
        if (err instanceof CommanderError) throw err;
        // A usage mistake gets commander's treatment: message, pointer to --help, exit 1.
        if (isUsageError(err)) cmd.error(`error: ${err.message}`);
        io.err(`aegis ${commandPath(cmd)}: ${errorMessage(err)}\n`);
        exitCode = 1;
      }
    };

  const program = new Command('aegis')
    .description('Aegis: application security managed as code. API and Shield gateway, GitOps reconciler, Terraform provider.')
    .usage('<command> [options]')
    .version(aegisVersion(), '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .helpCommand('help [command]', 'show help for a command')
    .addHelpText(
      'after',
      `
Storage: DATABASE_URL selects a PostgreSQL server; without it the embedded database in the data dir is used.
${examples(
  ['run everything on the embedded database (API on :3000, Shield on :8080)', 'aegis serve'],
  ['check, preview and apply a config directory', 'aegis validate ./config && aegis plan ./config && aegis apply ./config'],
  ['help on one command', 'aegis help plan'],
)}`,
    );

  // ---------------------------------------------------------------- servers

  program
    .command('serve')
    .helpGroup('Servers:')
    .description('run the API, job workers, scheduler and the Shield gateway in one process')
    .option('--port <n>', 'API port (env PORT, default 3000)')
    .option('--shield-port <n>', 'Shield gateway port (env AEGIS_SHIELD_PORT, default 8080; 0: any free port)')
    .option('--sandbox-shield-port <n>', 'also serve the sandbox\'s (test-mode) Shield sites on this port (env AEGIS_SANDBOX_SHIELD_PORT; default: not served)')
    .option('--shield-tls-port <n>', 'also terminate TLS (HTTPS and HTTP/2, by SNI) on this port (env AEGIS_SHIELD_TLS_PORT; default: plain HTTP only)')
    .option('--host <addr>', 'address to listen on (env HOST, default 0.0.0.0)')
    .option('--data-dir <dir>', 'embedded database, bootstrap key, secret key (env AEGIS_DATA_DIR, default ./.aegis)')
    .option('--asn-db <file>', 'ip2asn TSV for ASN and country rules (env AEGIS_ASN_DB)')
    .option('--config-dir <dir>', 'also keep the platform matching this config directory, like `aegis watch`')
    .option('--self-heal', 'with --config-dir: revert drift (changes made outside the config)')
    .option('--drift-interval <seconds>', 'with --config-dir: how often to check for drift (default 60; 0: never)')
    .option('--shield-workers <n>', 'Shield gateway processes (env AEGIS_SHIELD_WORKERS, default 1; more than 1 needs DATABASE_URL)')
    .addHelpText(
      'after',
      examples(
        ['serve on the embedded database in ./.aegis', 'aegis serve'],
        ['on PostgreSQL, API on port 8000', 'DATABASE_URL=postgres://aegis@db/aegis aegis serve --port 8000'],
        ['also apply ./config on every change and revert drift', 'aegis serve --config-dir ./config --self-heal'],
      ),
    )
    .action(run(async (options: import('./serve.ts').ServeOptions) => (await import('./serve.ts')).serveCommand(options)));

  program
    .command('shield')
    .helpGroup('Servers:')
    .description('run only the Shield gateway, beside an API on the same DATABASE_URL (and REDIS_URL)')
    .option('--shield-port <n>', 'gateway port (env AEGIS_SHIELD_PORT, default 8080)')
    .option('--tls-port <n>', 'also terminate TLS (HTTPS and HTTP/2, by SNI) on this port (env AEGIS_SHIELD_TLS_PORT; default: plain HTTP only)')
    .option('--host <addr>', 'address to listen on (env HOST, default 0.0.0.0)')
    .option('--data-dir <dir>', 'data directory (env AEGIS_DATA_DIR, default ./.aegis)')
    .option('--asn-db <file>', 'ip2asn TSV for ASN and country rules (env AEGIS_ASN_DB)')
    .option('--workers <n>', 'gateway processes sharing the port (env AEGIS_SHIELD_WORKERS, default: one per core; 1: a single process)')
    .addHelpText(
      'after',
      `
Rate limits stay exact across workers: in Redis with REDIS_URL, else held by the primary process.
Exit status: 2 without DATABASE_URL (on the embedded database, \`aegis serve\` runs the gateway itself).
${examples(
  ['a second gateway node on port 8081', 'DATABASE_URL=postgres://aegis@db/aegis REDIS_URL=redis://cache aegis shield --shield-port 8081'],
  ['four gateway processes on port 8080', 'DATABASE_URL=postgres://aegis@db/aegis aegis shield --workers 4'],
  ['HTTP on 80 and HTTPS/HTTP2 on 443', 'DATABASE_URL=postgres://aegis@db/aegis aegis shield --shield-port 80 --tls-port 443'],
)}`,
    )
    .action(run(async (options: import('./shield.ts').ShieldOptions) => (await import('./shield.ts')).shieldCommand(options)));

  program
    .command('worker')
    .helpGroup('Servers:')
    .description('run jobs (scans, config-repo syncs) and the scheduler beside an API on the same DATABASE_URL')
    .option('--concurrency <n>', 'jobs run at once (env AEGIS_WORKER_CONCURRENCY, default 4)')
    .option('--kinds <a,b>', 'only these job kinds (env AEGIS_WORKER_KINDS, default all)')
    .option('--no-scheduler', 'do not run the scheduler (scan schedules, config-repo polls) here')
    .option('--data-dir <dir>', 'data directory (env AEGIS_DATA_DIR, default ./.aegis)')
    .addHelpText(
      'after',
      `
Exit status: 2 without DATABASE_URL (on the embedded database, \`aegis serve\` runs a worker itself).
Config-repo syncs act through the API: they run here only with AEGIS_API_URL set.
${examples(['eight scans at once, no scheduler', 'DATABASE_URL=postgres://aegis@db/aegis aegis worker --concurrency 8 --kinds scan --no-scheduler'])}`,
    )
    .action(run(async (options: import('./worker.ts').WorkerOptions) => (await import('./worker.ts')).workerCommand(options)));

  // ---------------------------------------------------------------- set-up

  program
    .command('migrate')
    .helpGroup('Set-up:')
    .description('apply database migrations (also applied at every start)')
    .option('--data-dir <dir>', 'data directory of the embedded database (env AEGIS_DATA_DIR, default ./.aegis)')
    .addHelpText(
      'after',
      examples(['migrate the embedded database in ./.aegis', 'aegis migrate'], ['migrate a PostgreSQL server', 'DATABASE_URL=postgres://aegis@db/aegis aegis migrate']),
    )
    .action(run(async (options: { dataDir?: string }) => (await import('./migrate.ts')).migrateCommand(options)));

  program
    .command('backup')
    .helpGroup('Set-up:')
    .description('back up the embedded database to a file, consistently, also while `aegis serve` runs')
    .requiredOption('--out <file>', 'where to write the backup (written as a private file, 0600)')
    .option('--data-dir <dir>', 'data directory of the embedded database (env AEGIS_DATA_DIR, default ./.aegis)')
    .addHelpText(
      'after',
      `
A running \`aegis serve\` takes the backup itself (through the control socket in the data dir);
otherwise this command opens the data dir. Secrets stay sealed: the backup does not hold the server
key (AEGIS_SECRET_KEY or DATA_DIR/secret-key), and a restore needs that same key.
Exit status: 1 with DATABASE_URL set (use pg_dump: docs/operations.md, "Backup and restore").
${examples(
  ['back up ./.aegis, with or without the server running', 'aegis backup --out aegis-$(date +%F).backup'],
  ['another data directory', 'aegis backup --data-dir /var/lib/aegis --out /backups/aegis.backup'],
)}`,
    )
    .action(run(async (options: import('./backup.ts').BackupOptions) => (await import('./backup.ts')).backupCommand(options)));

  program
    .command('restore')
    .helpGroup('Set-up:')
    .description('restore a backup from `aegis backup` into the embedded database (the server stopped)')
    .argument('<file>', 'a backup written by aegis backup')
    .option('--data-dir <dir>', 'data directory to restore into (env AEGIS_DATA_DIR, default ./.aegis)')
    .option('--force', 'replace the database already in the data dir')
    .addHelpText(
      'after',
      `
Checked before anything changes: the file is whole (sha256), this Aegis knows its migrations, the
server key here has the backup's key fingerprint, no server holds the data dir, and the data dir has
no database (or --force, which swaps the restored database in whole).
Exit status: 0 restored, 1 refused or failed (nothing changed).
${examples(
  ['restore into an empty ./.aegis, with the key the backup was sealed with', 'AEGIS_SECRET_KEY=$(cat old-secret-key) aegis restore aegis.backup'],
  ['replace the database of /var/lib/aegis', 'aegis restore /backups/aegis.backup --data-dir /var/lib/aegis --force'],
)}`,
    )
    .action(run(async (file: string, options: import('./restore.ts').RestoreOptions) => (await import('./restore.ts')).restoreCommand(file, options)));

  const keys = program
    .command('keys')
    .helpGroup('Set-up:')
    .description('API keys straight in the database (bootstrap)')
    .addHelpText('after', examples(['an admin key for organisation acme', 'aegis keys create --org acme --scopes admin']));
  keys
    .command('create')
    .description('create an API key in the database and print it once (creates the organisation if needed)')
    .requiredOption('--org <slug>', 'organisation slug (lowercase letters, digits, dashes)')
    .requiredOption('--scopes <a,b>', 'comma-separated scopes, e.g. admin or shield:read,scans:read')
    .option('--name <name>', 'a name to recognise the key by')
    .option('--test', "a svc_test_ key of the organisation's sandbox (test mode)")
    .option('--data-dir <dir>', 'data directory (env AEGIS_DATA_DIR, default ./.aegis)')
    .addHelpText(
      'after',
      `
With the embedded database, stop the server first (PGlite is single-process).
${examples(
  ['an admin key for organisation acme', 'aegis keys create --org acme --scopes admin --name bootstrap'],
  ['a read-only key on PostgreSQL', 'DATABASE_URL=postgres://aegis@db/aegis aegis keys create --org acme --scopes shield:read,scans:read'],
  ['an admin key of the sandbox', 'aegis keys create --org acme --scopes admin --test'],
)}`,
    )
    .action(run(async (options: import('./keys.ts').KeysCreateOptions) => (await import('./keys.ts')).keysCreateCommand(options)));

  const orgs = program
    .command('orgs')
    .helpGroup('Set-up:')
    .description('organisations straight in the database (billing hooks)')
    .addHelpText('after', examples(['put organisation acme on the pro plan', 'aegis orgs set-plan --org acme --plan pro']));
  orgs
    .command('set-plan')
    .description("change an organisation's plan (trial, pro, enterprise); takes effect at once")
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption('--plan <plan>', 'trial, pro or enterprise')
    .option('--data-dir <dir>', 'data directory (env AEGIS_DATA_DIR, default ./.aegis)')
    .addHelpText(
      'after',
      `
Plans gate features: admin API keys need pro or enterprise. Audited as organization.plan_changed.
With the embedded database, stop the server first (PGlite is single-process).
${examples(
  ['upgrade acme to pro', 'aegis orgs set-plan --org acme --plan pro'],
  ['on PostgreSQL, while the API runs', 'DATABASE_URL=postgres://aegis@db/aegis aegis orgs set-plan --org acme --plan enterprise'],
)}`,
    )
    .action(run(async (options: import('./orgs.ts').OrgsSetPlanOptions) => (await import('./orgs.ts')).orgsSetPlanCommand(options)));

  const advisories = program
    .command('advisories')
    .helpGroup('Set-up:')
    .description('vulnerability advisories for SCA scans')
    .addHelpText('after', examples(['import an OSV export', 'aegis advisories import ./npm-all.zip']));
  advisories
    .command('import')
    .description('send OSV advisories (a directory of JSON files or a ZIP export) to the API for SCA scans')
    .argument('<dir|zip>', 'a directory of OSV JSON files, or a ZIP such as an OSV ecosystem export')
    .addHelpText(
      'after',
      `
Environment: AEGIS_API_URL, AEGIS_API_KEY (scope admin). Works while the server runs on the embedded database.
Exit status: 1 when some records were refused (the others are imported).
${examples(
  ['a directory of OSV records', 'aegis advisories import ./advisories'],
  ['the npm ecosystem export', 'curl -sO https://osv-vulnerabilities.storage.googleapis.com/npm/all.zip && aegis advisories import all.zip'],
)}`,
    )
    .action(run(async (path: string) => (await import('./advisories.ts')).advisoriesImportCommand(path)));

  const provider = program
    .command('provider')
    .helpGroup('Set-up:')
    .description('the Terraform provider')
    .addHelpText('after', examples(['make `terraform init` find aegis/aegis', 'eval "$(aegis provider install)"']));
  provider
    .command('install')
    .description('install the Terraform provider into a filesystem mirror and print the TF_CLI_CONFIG_FILE export')
    .option('--dir <dir>', 'where the mirror and the CLI config go (default ~/.aegis/terraform)')
    .addHelpText(
      'after',
      examples(
        ['install and point Terraform at it in this shell', 'eval "$(aegis provider install)"'],
        ['into a project directory', 'aegis provider install --dir ./.terraform-mirror'],
      ),
    )
    .action(
      run(async (options: import('../provider/install/command.ts').ProviderInstallOptions) =>
        (await import('../provider/install/command.ts')).providerInstallCommand(options),
      ),
    );

  // ---------------------------------------------------------------- scanning

  const collect = (value: string, previous?: string[]): string[] => [...(previous ?? []), value];
  const scan = program
    .command('scan')
    .helpGroup('Scanning:')
    .description('scan a directory (secrets, SAST, SCA) or a URL (DAST, API, CVE) in CI: text, JSON, SARIF or JUnit; exit 1 on findings')
    .argument('<type>', 'secrets, sast or sca (a directory); dast, api or cve (a URL)')
    .argument('[path|url]', 'directory to scan (default .), or the URL of a dast, api or cve scan (required)')
    .option('--format <format>', 'text, json, sarif or junit (default text)')
    .option('--output <file>', 'write the report to FILE instead of stdout')
    .option('--fail-on <severity>', 'exit 1 when a reported finding is at least critical, high, medium or low; none: never (default high)')
    .option('--baseline <file>', 'an earlier --format json report: findings it holds (by fingerprint) are not reported')
    .option('--policy <file>', 'YAML or JSON: rule id → ignore (not reported), warn (never fails) or fail (fails at any severity); other rules follow --fail-on')
    .option('--diff-base <ref>', 'secrets, sast, sca: only findings introduced since git REF (e.g. origin/main)')
    .option('--advisories <dir|zip>', 'sca, local: OSV advisories (a directory of JSON files or a ZIP export)')
    .option('--openapi <file|url>', 'api: the OpenAPI 3.x document of the API at URL (a file, or a URL to fetch)')
    .option('--cve <ids>', 'cve: CVE ids to check, comma-separated, repeatable (default: every bundled template)', collect)
    .option('--tag <tags>', 'cve: template tags to run (e.g. apache), comma-separated, repeatable', collect)
    .option('--max-depth <n>', 'dast: links followed from URL (0-10, default 3)')
    .option('--max-requests <n>', 'dast, api, cve: requests the scan may send in total (default 2000)')
    .option('--requests-per-second <n>', 'dast, api, cve: pace of the scan (0.1-200, default 20)')
    .option('--header <name: value>', 'dast, api, cve: sent with every request, e.g. "Authorization: Bearer …" (repeatable)', collect)
    .option('--local', 'scan in this process even when AEGIS_API_URL is set')
    .option('--quiet', 'no progress or summary on stderr')
    .addHelpText(
      'after',
      `
Local (no AEGIS_API_URL, or --local): the scanners run in this process, no server or database. URL
scans may reach any address from here, localhost included.
Server (AEGIS_API_URL and AEGIS_API_KEY with scans:write, scans:read, vulnerabilities:read): PATH is
uploaded as a zip archive scan, a URL scan is started through the API (which refuses private
addresses unless it runs with AEGIS_ALLOW_PRIVATE_TARGETS=true), and the findings are read back.
Fingerprints do not contain line numbers, so a baseline survives edits that move code (docs/scan-cli.md).
Exit status: 0 no reported finding reaches --fail-on (or is marked fail by --policy), 1 one does, 2 usage or scan error.
${examples(
  ['secrets in the checkout, as SARIF for GitHub code scanning', 'aegis scan secrets . --format sarif --output aegis.sarif'],
  ['only SAST findings a pull request introduces', 'aegis scan sast . --diff-base origin/main'],
  ['accept what is known today, fail on anything new', 'aegis scan secrets . --format json --output baseline.json; aegis scan secrets . --baseline baseline.json'],
  ['dependencies against an OSV export, JUnit for GitLab', 'aegis scan sca . --advisories npm-all.zip --format junit --output aegis-junit.xml'],
  ['a staging site, failing on medium and above', 'aegis scan dast https://staging.example.com/ --fail-on medium'],
  ['an API from its OpenAPI document, authenticated', 'aegis scan api https://api.staging.example.com --openapi openapi.yaml --header "Authorization: Bearer $TOKEN"'],
  ['known CVEs of Apache httpd', 'aegis scan cve https://staging.example.com/ --tag apache'],
)}`,
    )
    .action(
      run(async (type: string, path: string | undefined, options: import('./scan.ts').ScanCommandOptions) => (await import('./scan.ts')).scanCommand(type, path, options)),
    );

  // ---------------------------------------------------------------- configuration as code

  const planOptions = (cmd: Command): Command =>
    cmd
      .argument('[dir]', 'config directory (*.yaml, *.yml)')
      .option('--terraform-json <file>', 'read Terraform JSON (`cdktf synth` output) instead of DIR')
      .option('--source <name>', 'ownership source (default: see below)')
      .option('--adopt', 'take over unowned objects that match the config')
      .option('--no-prune', 'never delete owned objects missing from the config')
      .option('--deny-weakening', 'treat changes that weaken protection as errors')
      .addOption(new Option('--json', 'machine-readable plan (includes its checksum)').conflicts('markdown'))
      .addOption(new Option('--markdown', 'plan as Markdown, e.g. for a pull-request comment').conflicts('json'))
      .option('--impact-window <window>', 'recorded traffic the impact preview replays: 30m, 6h, 24h or 7d (default 24h)')
      .option('--no-impact', 'skip the impact preview of changes to Shield sites and their rules')
      .addOption(new Option('--max-new-blocks <n>', 'exit 1 (plan) or refuse to apply when a site would newly block more recorded requests than this').conflicts('impact'));

  program
    .command('validate')
    .helpGroup('Configuration as code:')
    .description('check a config directory (or Terraform JSON) offline: schemas, references, security lint')
    .argument('[path]', 'config directory, or a Terraform JSON file (cdk.tf.json)')
    .option('--terraform-json <file>', 'a Terraform JSON file, as `cdktf synth` writes it')
    .option('--no-lint', 'skip the security lint (warnings)')
    .addHelpText(
      'after',
      `
Prints every problem as file:line:col kind/name: message, then a summary.
Exit status: 0 valid (warnings allowed), 1 errors.
${examples(
  ['check the example config repository', 'aegis validate examples/gitops'],
  ['check what cdktf synth wrote', 'aegis validate --terraform-json cdktf.out/stacks/shop/cdk.tf.json'],
)}`,
    )
    .action(
      run(async (path: string | undefined, options: { terraformJson?: string; lint?: boolean }) => {
        const { configDirOf, configPath } = await import('../reconciler/cli/source.ts');
        const { readProjectFile } = await import('../reconciler/project/project-file.ts');
        const { runValidate } = await import('../reconciler/config/validate-command.ts');
        const config = configPath(path, options);
        // The project file (aegis.yaml) belongs to the directory's config: a malformed one fails here, not at plan time.
        await readProjectFile(await configDirOf(config));
        return runValidate(config, { lint: options.lint });
      }),
    );

  planOptions(
    program
      .command('plan')
      .helpGroup('Configuration as code:')
      .description('show what apply would change (reads the live API, changes nothing)'),
  )
    .addHelpText(
      'after',
      `
Exit status: 0 no changes, 2 changes pending, 1 error (Terraform's -detailed-exitcode) or past --max-new-blocks.
${IMPACT_RULE}
${SOURCE_RULE}
${RECONCILER_ENV}
${examples(
  ['preview a config directory', 'aegis plan ./config'],
  ['as Markdown for a pull request', 'aegis plan ./config --markdown > plan.md'],
  ['fail CI when a change would have blocked more than 10 requests of the last 7 days', 'aegis plan ./config --impact-window 7d --max-new-blocks 10'],
  ['a CDKTF stack', 'aegis plan --terraform-json cdktf.out/stacks/shop/cdk.tf.json --source shop'],
)}`,
    )
    .action(run(async (dir: string | undefined, options: import('../reconciler/cli/commands.ts').PlanOptions) => (await import('../reconciler/cli/commands.ts')).planCommand(dir, options)));

  planOptions(
    program
      .command('apply')
      .helpGroup('Configuration as code:')
      .description('make the platform match the config (plans first, asks for "yes" unless --yes)'),
  )
    .option('--yes', 'apply without asking (needed without a terminal)')
    .option('--checksum <h>', 'apply only if the plan is still the reviewed one (checksum from plan --json)')
    .option('--max-changes <n>', 'refuse more updates/replacements/deletions than this floor (default 5) ...')
    .option('--max-change-percent <p>', '... when they are also more than this share of the owned objects (default 25)')
    .option('--force', 'apply even past --max-changes / --max-change-percent')
    .addHelpText(
      'after',
      `
Exit status: 0 applied (or nothing to do), 1 error, refused or cancelled.
${IMPACT_RULE}
${SOURCE_RULE}
${RECONCILER_ENV}
${examples(
  ['apply, confirming at the prompt', 'aegis apply ./config'],
  ['in CI: apply exactly the reviewed plan', 'aegis apply ./config --yes --checksum "$(aegis plan ./config --json | jq -r .checksum)"'],
  ['refuse if any site would newly block more than 10 of its last 24 h of requests', 'aegis apply ./config --yes --max-new-blocks 10'],
)}`,
    )
    .action(run(async (dir: string | undefined, options: import('../reconciler/cli/commands.ts').ApplyOptions) => (await import('../reconciler/cli/commands.ts')).applyCommand(dir, options)));

  program
    .command('dump')
    .helpGroup('Configuration as code:')
    .description('write the live state as config files')
    .option('--out <dir>', 'where to write', 'aegis-config')
    .option('--source <name>', "only this source's objects; also writes aegis.yaml naming it, so a plan of the dump needs no --source")
    .addHelpText(
      'after',
      `${API_ENV}
${examples(
  ['everything, into ./aegis-config', 'aegis dump'],
  ['the objects one repository owns, ready to plan', 'aegis dump --source github.com/acme/security-config --out ./config'],
)}`,
    )
    .action(run(async (options: import('../reconciler/cli/commands.ts').DumpOptions) => (await import('../reconciler/cli/commands.ts')).dumpCommand(options)));

  program
    .command('watch')
    .helpGroup('Configuration as code:')
    .description('apply every edit of a config directory as it is saved, and check for drift, until stopped')
    .argument('<dir>', 'config directory')
    .option('--self-heal', 'revert drift (changes made outside the config)')
    .option('--drift-interval <seconds>', 'how often to check for drift (default 60; 0: never)')
    .option('--debounce <ms>', 'wait for edits to settle this long before planning')
    .option('--source <name>', 'ownership source (default: see below)')
    .option('--adopt', 'take over unowned objects that match the config')
    .option('--no-prune', 'never delete owned objects missing from the config')
    .option('--deny-weakening', 'refuse changes that weaken protection')
    .option('--max-changes <n>', 'refuse a change set past this floor of updates/deletions (default 5) ...')
    .option('--max-change-percent <p>', '... when it is also past this share of the owned objects (default 25)')
    .option('--impact-window <window>', 'recorded traffic the impact preview of each plan replays: 30m, 6h, 24h or 7d (default 24h)')
    .option('--no-impact', 'skip impact previews')
    .addOption(new Option('--max-new-blocks <n>', 'refuse a change set that would newly block more recorded requests of a site than this').conflicts('impact'))
    .option('--json', 'one JSON object per event')
    .addHelpText(
      'after',
      `${SOURCE_RULE}
${RECONCILER_ENV}
${examples(
  ['keep ./config applied, reverting drift every 30 s', 'aegis watch ./config --self-heal --drift-interval 30'],
  ['events as JSON lines for a log shipper', 'aegis watch ./config --json'],
)}`,
    )
    .action(run(async (dir: string, options: import('../reconciler/cli/watch-command.ts').WatchOptions) => (await import('../reconciler/cli/watch-command.ts')).watchCommand(dir, options)));

  // ---------------------------------------------------------------- the command line itself

  program
    .command('completion')
    .helpGroup('Shell:')
    .description('print a shell completion script (commands, subcommands, options)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      examples(
        ['bash, in this shell (add the line to ~/.bashrc to keep it)', 'source <(aegis completion bash)'],
        ['zsh (a directory on $fpath, before compinit)', 'aegis completion zsh > "${fpath[1]}/_aegis"'],
        ['fish', 'aegis completion fish > ~/.config/fish/completions/aegis.fish'],
      ),
    )
    .action(
      run(async (shell: 'bash' | 'zsh' | 'fish') => {
        const { completionScript } = await import('./completion.ts');
        io.out(completionScript(program, shell));
        return 0;
      }),
    );

  finish(program, io);
  // `aegis scan` promises exit 2 for a usage error (its exit 1 means "a finding reached --fail-on"),
  // commander's own mistakes (unknown option, missing or extra argument) included.
  scan.exitOverride((err) => {
    if (SCAN_USAGE_ERRORS.has(err.code)) err.exitCode = 2;
    throw err;
  });

  return {
    program,
    async run(argv: string[]): Promise<number> {
      exitCode = 0;
      // `aegis help keys create` as `aegis keys create --help`: any depth, and a mistyped name gets
      // the unknown-command message with a suggestion rather than the whole help.
      const helpFor = argv[0] === 'help' && argv.length > 1 ? argv[1] : undefined;
      const known = program.commands.some((cmd) => cmd.name() === helpFor);
      const args = helpFor === undefined ? argv : known ? [...argv.slice(1), '--help'] : [helpFor];
      try {
        await program.parseAsync(args, { from: 'user' });
        return exitCode;
      } catch (err) {
        // --help and --version end here with exit code 0, usage mistakes with 1 (already printed).
        if (err instanceof CommanderError) return err.exitCode;
        throw err;
      }
    },
  };
}

/** The settings every command shares: errors, colour, help layout, no process.exit. */
function finish(root: Command, io: ProgramOutput): void {
  const base: HelpConfiguration = {
    styleTitle: (title) => `\u001b[1m${title}\u001b[22m`,
  };
  for (const cmd of [root, ...allCommands(root)]) {
    const path = commandPath(cmd);
    const name = path ? `aegis ${path}` : 'aegis';
    cmd
      .exitOverride()
      .showHelpAfterError(`(see "${name} --help" for usage and examples)`)
      .configureOutput({
        writeOut: io.out,
        writeErr: io.err,
        // commander says "error: …"; Aegis says which command: "aegis plan: …".
        outputError: (text, write) => write(text.replace(/^error: /, `${name}: `)),
        getOutHasColors: () => colourEnabled(process.stdout),
        getErrHasColors: () => colourEnabled(process.stderr),
      })
      .configureHelp(cmd === root ? { ...base, ...rootHelp(root) } : base);
  }
}

/** The top-level help lists every runnable command, subcommands by their full name (`keys create`). */
function rootHelp(root: Command): HelpConfiguration {
  const originals = new WeakMap<Command, Command>();
  const term = (cmd: Command): string => {
    const original = originals.get(cmd);
    if (!original) return cmd.name();
    const args = original.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ');
    return `${commandPath(original)}${original.options.length > 0 ? ' [options]' : ''}${args ? ` ${args}` : ''}`;
  };
  // Stand-ins named by their path, under their top-level command's heading. commander also offers
  // these names (and the aliases: the group's name) as suggestions for a mistyped command.
  const standIn = (top: Command, cmd: Command): Command => {
    const entry = new Command(commandPath(cmd)).description(cmd.description()).helpGroup(top.helpGroup());
    if (cmd !== top) entry.alias(top.name());
    originals.set(entry, cmd);
    return entry;
  };
  return {
    visibleCommands: () => [
      ...root.commands.flatMap((top) => (top.commands.length > 0 ? top.commands : [top]).map((cmd) => standIn(top, cmd))),
      new Command('help [command]').description('show help for a command (e.g. aegis help plan)').helpGroup('Shell:'),
    ],
    subcommandTerm: term,
  };
}
