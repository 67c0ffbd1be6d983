// Clones a validated git source into a directory with git itself (spawned with an argument array,
// never a shell). The repository and the server it comes from are untrusted, so git runs with:
//   - no system or global config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null) and no credential
//     helper: the server's stored credentials must not be offered to whatever host a user names
//     (a tenant could otherwise scan another tenant's private repository with them);
//   - an allow-list of protocols (file only when local sources are enabled; ext, fd and any other
//     helper never), no hooks, no submodules, no fsmonitor, no LFS smudge;
//   - core.symlinks=false: a symlink in the repository is checked out as a small file holding its
//     target, so scanners cannot be led to read files outside the workspace (/etc/passwd);
//   - no prompts (no terminal, stdin closed, askpass /bin/false, ssh BatchMode);
//   - its own process group, killed as a whole on abort or timeout (git runs helpers: git-remote-https,
//     ssh, index-pack);
//   - no network of its own: every connection git, curl or ssh opens goes through an egress proxy
//     that holds it to the outbound policy (./egress.ts, net/outbound.ts; the tenant class unless the
//     caller says otherwise), so a redirect or a DNS answer that leads to a private address is
//     refused when it is connected to. The clone then fails with the refusal (RefusedCloneError).
// Credentials in the URL are used for the transfer and then removed from `.git/config`, so the
// workspace (and a secrets scan of it) never holds them; error messages carry the redacted URL only.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { isAbsolute } from 'node:path';
import { tenantPolicy, type OutboundPolicy } from '../net/outbound.ts';
import { startGitEgress, type GitEgress } from './egress.ts';
import { isCommitSha, parseGitSource, redactText, redactUrl, withoutCredentials, type GitSource } from './url.ts';

export interface CloneOptions {
  signal?: AbortSignal;
  /** Whole operation (clone, fetch, checkout). */
  timeoutMs: number;
  /** History depth; null clones the full history (secrets history scans). Default 1. */
  depth?: number | null;
  /** Must be true for file:// URLs and local paths (AEGIS_ALLOW_LOCAL_SOURCES). */
  allowLocal?: boolean;
  /**
   * What git's connections are held to (net/outbound.ts). Default: the tenant rule with private
   * targets refused, so a caller that forgets it opens nothing.
   */
  outbound?: OutboundPolicy;
}

export class GitCloneError extends Error {}

/** The outbound policy refused a connection of the clone (a private address, a redirect to one, a DNS answer): retrying will not help. */
export class RefusedCloneError extends GitCloneError {
  override name = 'RefusedCloneError';
}

const STRICT = tenantPolicy({ allowPrivateTargets: false });

const MAX_STDERR = 16 * 1024;
const MAX_STDOUT = 64 * 1024;
/** After SIGKILL, how long to wait for the process to be reaped before giving up on it. */
const KILL_GRACE_MS = 2_000;

/**
 * Environment variables of the server passed to git: the trust store and the ssh agent, nothing
 * else. Not the proxy variables (connections go through the clone's egress proxy; curl would still
 * honour NO_PROXY) and not GIT_SSH / GIT_SSH_COMMAND (ssh runs with our ProxyCommand): ./egress.ts.
 */
const PASSTHROUGH_ENV = ['PATH', 'HOME', 'TMPDIR', 'GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'CURL_CA_BUNDLE', 'SSH_AUTH_SOCK'];

function gitEnv(allowLocal: boolean, egress: GitEgress): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSTHROUGH_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  Object.assign(env, {
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    SSH_ASKPASS_REQUIRE: 'never',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_LFS_SKIP_SMUDGE: '1',
    // Overrides the protocol.*.allow settings below; both say the same thing.
    GIT_ALLOW_PROTOCOL: allowLocal ? 'https:http:ssh:git:file' : 'https:http:ssh:git',
    // The egress proxy's URL, GIT_SSH_COMMAND with its ProxyCommand.
    ...egress.env,
  });
  return env;
}

function gitConfig(allowLocal: boolean, egress: GitEgress): string[] {
  const settings = [
    'protocol.allow=never',
    'protocol.https.allow=always',
    'protocol.http.allow=always',
    'protocol.ssh.allow=always',
    'protocol.git.allow=always',
    `protocol.file.allow=${allowLocal ? 'always' : 'never'}`,
    'protocol.ext.allow=never',
    'credential.helper=',
    'core.hooksPath=/dev/null',
    'core.symlinks=false',
    'core.fsmonitor=false',
    'submodule.recurse=false',
    'fetch.recurseSubmodules=false',
    'init.templateDir=',
    'advice.detachedHead=false',
    ...egress.config,
  ];
  return settings.flatMap((s) => ['-c', s]);
}

/** Clones `source` into `dir` (absent or empty) and returns the checked-out commit. */
export async function cloneRepository(source: GitSource, dir: string, options: CloneOptions): Promise<{ commit: string }> {
  const allowLocal = options.allowLocal ?? false;
  // The source normally comes from parseGitSource already; checked again because it may have been
  // stored, and because allowLocal may differ from when it was parsed.
  const checked = parseGitSource(source.url, source.ref ?? undefined, { allowLocal });
  if (!checked.ok) throw new GitCloneError(`invalid git source (${checked.field}): ${checked.reason}`);
  const { url, ref } = checked.source;
  const depth = options.depth === undefined ? 1 : options.depth;
  if (depth !== null && (!Number.isSafeInteger(depth) || depth < 1 || depth > 2 ** 31 - 1)) throw new RangeError('depth must be a positive integer or null');
  if (!isAbsolute(dir)) throw new RangeError('dir must be an absolute path');
  if (!(options.timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');

  const egress = await startGitEgress(options.outbound ?? STRICT);
  try {
    return await cloneThrough(egress, url, ref, dir, depth, allowLocal, options);
  } catch (err) {
    // A refused connection is why git failed, whatever git says about it ("Received HTTP code 403
    // from proxy after CONNECT", "unable to access").
    const refused = egress.refusals()[0];
    if (refused !== undefined && err instanceof GitCloneError) throw new RefusedCloneError(`cloning ${redactUrl(url)} was refused: ${redactText(refused, url)}`);
    // An unreachable destination reaches git as the proxy's 502; say what happened behind it.
    const failed = egress.failures()[0];
    if (failed !== undefined && err instanceof GitCloneError && !(err instanceof RefusedCloneError)) throw new GitCloneError(`${err.message} (${redactText(failed, url)})`);
    throw err;
  } finally {
    await egress.close();
  }
}

async function cloneThrough(egress: GitEgress, url: string, ref: string | null, dir: string, depth: number | null, allowLocal: boolean, options: CloneOptions): Promise<{ commit: string }> {
  const run = runner({ url, allowLocal, egress, deadline: Date.now() + options.timeoutMs, timeoutMs: options.timeoutMs, signal: options.signal });
  const depthArgs = depth === null ? [] : ['--depth', String(depth)];

  if (ref !== null && isCommitSha(ref)) {
    // A commit id: fetch just that commit into an empty repository. Cloning the default branch first
    // would transfer it for nothing and leave its history in the repository, where a history scan
    // (`git log --all`) would read commits that are not ancestors of the one asked for. No remote is
    // configured, so the URL (credentials included) is never written to disk.
    await run('init', ['init', '--quiet', dir]);
    await run('fetch', ['-C', dir, 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', ...depthArgs, '--', url, ref], (reason) =>
      /not our ref|unadvertised object|couldn't find remote ref/i.test(reason) ? `${reason} (the commit does not exist, or the server does not allow fetching a commit by id)` : reason);
    await run('checkout', ['-C', dir, 'checkout', '--quiet', '--detach', ref]);
  } else {
    const branchArgs = ref === null ? [] : ['--branch', ref];
    // --no-local: a local path is cloned over the file transport, so depth applies and no hardlinks
    // into the source repository are made.
    await run('clone', ['clone', '--quiet', '--no-tags', '--single-branch', '--no-local', ...depthArgs, ...branchArgs, '--', url, dir]);
    await run('config', ['-C', dir, 'config', 'remote.origin.url', withoutCredentials(url)]);
  }
  const commit = (await run('rev-parse', ['-C', dir, 'rev-parse', '--verify', 'HEAD^{commit}'])).trim();
  if (!isCommitSha(commit)) throw new GitCloneError(`git rev-parse returned an unexpected value for ${redactUrl(url)}`);
  if (ref !== null && isCommitSha(ref) && commit !== ref) throw new GitCloneError(`checked out ${commit} instead of ${ref}`);
  return { commit };
}

interface RunnerContext {
  url: string;
  allowLocal: boolean;
  egress: GitEgress;
  deadline: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

type Runner = (step: string, args: string[], explain?: (reason: string) => string) => Promise<string>;

function runner(ctx: RunnerContext): Runner {
  const env = gitEnv(ctx.allowLocal, ctx.egress);
  const config = gitConfig(ctx.allowLocal, ctx.egress);
  const shown = redactUrl(ctx.url);
  return (step, args, explain = (r) => r) =>
    new Promise<string>((resolve, reject) => {
      if (ctx.signal?.aborted) {
        reject(abortError(ctx.signal, step, shown));
        return;
      }
      const remaining = ctx.deadline - Date.now();
      if (remaining <= 0) {
        reject(new GitCloneError(`git ${step} of ${shown} timed out after ${Math.round(ctx.timeoutMs / 1000)}s`));
        return;
      }
      // detached: a new process group (killable as a whole) without a controlling terminal.
      const child = spawn('git', [...config, ...args], { cwd: tmpdir(), env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let stdout = '';
      let stderr = '';
      let failure: Error | null = null;
      let settled = false;
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        if (stdout.length < MAX_STDOUT) stdout += d;
      });
      // The tail is kept: git prints its fatal message last.
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr = (stderr + d).slice(-MAX_STDERR);
      });

      const finish = (err: Error | null, value = ''): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(graceTimer);
        ctx.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(value);
      };
      let graceTimer: NodeJS.Timeout | undefined;
      const kill = (err: Error): void => {
        if (failure) return;
        failure = err;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
        // 'close' normally follows at once; do not hang on a process that escaped its group.
        graceTimer = setTimeout(() => finish(err), KILL_GRACE_MS);
      };
      const onAbort = (): void => kill(abortError(ctx.signal!, step, shown));
      const timer = setTimeout(() => kill(new GitCloneError(`git ${step} of ${shown} timed out after ${Math.round(ctx.timeoutMs / 1000)}s`)), remaining);
      ctx.signal?.addEventListener('abort', onAbort, { once: true });

      child.on('error', (err: NodeJS.ErrnoException) => {
        finish(new GitCloneError(err.code === 'ENOENT' ? 'git is not installed on this server' : `cannot run git: ${err.message}`));
      });
      child.on('close', (code, sig) => {
        if (failure) return finish(failure);
        if (code === 0) return finish(null, stdout);
        const reason = explain(summarize(redactText(stderr, ctx.url)) || `exit ${code ?? sig}`);
        finish(new GitCloneError(`git ${step} of ${shown} failed: ${reason}`));
      });
    });
}

function abortError(signal: AbortSignal, step: string, shown: string): Error {
  // The caller's reason when it gave one (job cancellation), so it can tell cancellation apart.
  return signal.reason instanceof Error ? signal.reason : new GitCloneError(`git ${step} of ${shown} was aborted`);
}

/** git's error lines (fatal:/error:/remote:), or its last lines; single-line, bounded. */
function summarize(stderr: string): string {
  const lines = stderr.split(/\r?\n|\r/).map((l) => l.trim()).filter((l) => l !== '');
  const important = lines.filter((l) => /^(fatal|error|remote):/i.test(l));
  const chosen = (important.length > 0 ? important : lines).slice(-4);
  return chosen.join('; ').replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, 1000);
}
