// The run's own PostgreSQL and Redis: a throw-away cluster in a temporary directory on a free port,
// and a redis-server child without persistence. The machine's own servers (5432, 6379) are never
// touched: CI runs its suite against them at the same time.
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/support/loopback.ts';
import { killProc, runCommand, startProc, type Proc } from './procs.ts';

export const PG_BIN = process.env.AEGIS_CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why the chaos run cannot start here, or null when it can (PostgreSQL binaries and redis-server present). */
export function missingPrerequisite(): string | null {
  for (const tool of ['initdb', 'pg_ctl', 'postgres']) if (!existsSync(join(PG_BIN, tool))) return `PostgreSQL binaries not found: ${join(PG_BIN, tool)} (set AEGIS_CHAOS_PG_BIN)`;
  if (!['/usr/bin/redis-server', '/usr/local/bin/redis-server'].some((p) => existsSync(p))) return 'redis-server not found in /usr/bin or /usr/local/bin';
  return null;
}

export interface PrivatePostgres {
  url: string;
  port: number;
  /** Stops the server (fast shutdown: sessions are cut, the data is kept). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops and removes nothing: the temporary directory is the caller's. */
  close(): Promise<void>;
}

/** initdb refuses to run as root: then the data directory belongs to `postgres` and every pg tool runs as it. */
const asOwner = (tool: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, tool), ...args]] : [join(PG_BIN, tool), args];

export async function startPostgres(dir: string): Promise<PrivatePostgres> {
  const data = join(dir, 'pg-data');
  const sockets = join(dir, 'pg-sockets');
  mkdirSync(data, { recursive: true });
  mkdirSync(sockets, { recursive: true });
  if (process.getuid?.() === 0) {
    const uid = Number((await runCommand('id', 'id', ['-u', 'postgres'])).trim());
    const gid = Number((await runCommand('id', 'id', ['-g', 'postgres'])).trim());
    // The temporary directory itself must be traversable by postgres.
    for (const path of [dir, data, sockets]) chownSync(path, uid, gid);
  }
  const port = await freePort();
  const [initdb, initArgs] = asOwner('initdb', ['-D', data, '--auth=trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--locale=C']);
  await runCommand('initdb', initdb, initArgs, {}, 120_000);
  // fsync off: the schedule stops PostgreSQL cleanly (fast shutdown writes a checkpoint), never the machine.
  const options = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = async () => {
    const [pgCtl, args] = asOwner('pg_ctl', ['-D', data, '-l', join(data, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
    await runCommand('pg_ctl start', pgCtl, args, {}, 90_000);
  };
  const stop = async () => {
    const [pgCtl, args] = asOwner('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
    await runCommand('pg_ctl stop', pgCtl, args, {}, 90_000);
  };
  await start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async close() {
      if (running) await stop().catch(() => undefined);
      running = false;
    },
  };
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** kill -9: counters are lost, as in a real crash of a cache without persistence. */
  kill(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let proc: Proc | undefined;
  const start = async () => {
    proc = startProc('redis-server', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    await proc.waitFor(/Ready to accept connections/, 30_000);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: async () => {
      if (proc) await killProc(proc);
    },
    start,
    close: async () => {
      if (proc?.alive()) await killProc(proc);
    },
  };
}
