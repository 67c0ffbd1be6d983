// How a clone's git reaches the network: only through an egress proxy of its own
// (net/egress-proxy.ts) that holds every connection to the outbound policy, whatever git and its
// helpers resolve or are redirected to.
//   - http(s): `http.proxy` (curl sends CONNECT for https, absolute URLs for http), with the proxy's
//     credentials sent at once (`http.proxyAuthMethod=basic`);
//   - git://: `core.gitProxy`, the connect helper (connect-helper.mjs, tunnelling with CONNECT);
//   - ssh: our own GIT_SSH_COMMAND with `ProxyCommand` set to the same helper, so ssh never opens a
//     TCP connection itself. The operator's GIT_SSH / GIT_SSH_COMMAND are not used (they could
//     connect anywhere); ssh still reads ~/.ssh/config and known_hosts for keys and host keys, and a
//     ProxyCommand given on the command line wins over one (or a ProxyJump) from a config file.
// The environment's HTTP_PROXY / HTTPS_PROXY / NO_PROXY / ALL_PROXY are not given to git (curl
// would read NO_PROXY even with http.proxy set, and an upstream proxy would resolve names itself,
// after the check). git and ssh run the helper through a tiny shell script written for the clone
// (git runs core.gitProxy without a shell, so it must be one executable), which starts this very
// Node binary on the helper: no dependency on `node` being on PATH.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEgressProxy, type OutboundPolicy } from '../net/outbound.ts';

const HELPER = fileURLToPath(new URL('./connect-helper.mjs', import.meta.url));

export interface GitEgress {
  /** `-c` settings for every git command of the clone. */
  config: string[];
  /** Environment variables for git (and, through it, ssh and the helper). */
  env: Record<string, string>;
  /** Connections the policy refused so far (each the refusal's message). */
  refusals(): readonly string[];
  /** Destinations that could not be reached (`host:port: why`): git itself only sees the proxy's 502. */
  failures(): readonly string[];
  close(): Promise<void>;
}

/** `text` as one word for sh: single-quoted. */
const shellWord = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

export async function startGitEgress(policy: OutboundPolicy): Promise<GitEgress> {
  const dir = await mkdtemp(join(tmpdir(), 'aegis-git-egress-'));
  try {
    const script = join(dir, 'connect');
    await writeFile(script, `#!/bin/sh\nexec ${shellWord(process.execPath)} ${shellWord(HELPER)} "$@"\n`, { mode: 0o700 });
    await chmod(script, 0o700);
    const proxy = await startEgressProxy(policy);
    // ssh runs ProxyCommand through the shell after expanding its own %-tokens.
    const proxyCommand = `${shellWord(script).replace(/%/g, '%%')} %h %p`;
    return {
      config: [`http.proxy=${proxy.url}`, 'http.proxyAuthMethod=basic', `core.gitProxy=${script}`],
      env: {
        AEGIS_EGRESS_PROXY: proxy.url,
        GIT_SSH_COMMAND: `ssh -o BatchMode=yes -o ConnectTimeout=30 -o ${shellWord(`ProxyCommand=${proxyCommand}`)}`,
        GIT_SSH_VARIANT: 'ssh',
      },
      refusals: () => proxy.refusals,
      failures: () => proxy.failures,
      close: async () => {
        await proxy.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
