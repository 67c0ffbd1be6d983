// The data directory's control socket: whoever listens on it holds the data directory. The embedded
// database (PGlite) is one process, so a second process must never open a data directory another
// one has open; `aegis serve` on the embedded database, and `aegis backup` / `aegis restore` while
// they work on it, listen here. Binding a unix socket fails when the path exists, so taking the
// socket is the lock; a socket file nobody answers on is what a killed holder left behind, removed
// and taken over. A client can ask the holder who it is (`status`) and ask a server for a backup
// taken inside it (`backup`): one JSON line per request, one JSON line per reply, then the reply's
// bytes, then the holder closes the connection.
//
// The socket is created with mode 0600 (umask while binding, chmod after), so only the OS user
// who owns the holder can talk to it; a client refuses a socket another user owns. It lives in the
// data directory, or — when that path is too long for a unix socket (about 104 bytes), or the
// filesystem cannot hold a socket — under the OS temporary directory, named by a hash of the data
// directory's real path. On Windows, a named pipe by the same hash.
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SOCKET_NAME = 'control.sock';
/** Linux allows 107 bytes, macOS 103: stay below both. */
const MAX_SOCKET_PATH_BYTES = 100;
/** A request line longer than this is not one of ours. */
const MAX_REQUEST_BYTES = 1024;
/** A holder that accepts a connection but says nothing for this long is still a holder. */
const STATUS_TIMEOUT_MS = 10_000;

/** Who holds a data directory. */
export interface Holder {
  /** `serve`, `backup` or `restore`. */
  role: string;
  pid: number;
  version: string;
}

export type ControlRequest = 'status' | 'backup';

export interface ControlReply {
  ok: boolean;
  holder: Holder;
  error?: string;
  /** Length of the bytes that follow the reply line (backup). */
  bytes?: number;
}

export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError';
  constructor(
    readonly holder: Holder | undefined,
    dataDir: string,
  ) {
    super(
      holder
        ? `the data directory ${dataDir} is in use by aegis ${holder.role} (pid ${holder.pid}, version ${holder.version})`
        : `the data directory ${dataDir} is in use by another process (its control socket accepts connections but does not answer)`,
    );
  }
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/** The data directory's real path when it exists (a symlinked path and its target share one socket). */
function canonical(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return resolve(dataDir);
  }
}

/**
 * Where the control socket of `dataDir` may be, in the order a holder tries them: in the data
 * directory when the path is short enough, else (or when the data directory's filesystem cannot
 * hold a socket: some network and host-shared mounts) under the OS temporary directory.
 */
export function controlSocketPaths(dataDir: string): string[] {
  const dir = canonical(dataDir);
  if (process.platform === 'win32') return [`\\\\?\\pipe\\aegis-${hashOf(dir)}`];
  const inside = join(dir, SOCKET_NAME);
  const outside = join(tmpdir(), `aegis-${hashOf(dir)}.sock`);
  return Buffer.byteLength(inside) <= MAX_SOCKET_PATH_BYTES ? [inside, outside] : [outside];
}

/** Errors that say "no sockets on this filesystem", not "someone is there". */
const NO_SOCKETS_HERE: ReadonlySet<string> = new Set(['EPERM', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP', 'EINVAL', 'ENAMETOOLONG']);

const errorCode = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;

/** What a held data directory answers to a backup request: the file's bytes, or why not. */
export type BackupAnswer = (() => Promise<Uint8Array>) | { refuse: string };

export interface HeldDataDir {
  path: string;
  holder: Holder;
  /** How backup requests are answered from now on (by default they are refused). */
  answerBackups(answer: BackupAnswer): void;
  /** Stops listening and removes the socket: the data directory is free. */
  release(): Promise<void>;
}

function reply(conn: Socket, message: ControlReply, body?: Uint8Array): void {
  conn.write(`${JSON.stringify(message)}\n`);
  if (body) conn.write(body);
  conn.end();
}

/**
 * Takes the data directory for `holder.role`: listens on its control socket. Throws
 * DataDirBusyError when another process holds it.
 */
export async function holdDataDir(dataDir: string, role: string, version: string): Promise<HeldDataDir> {
  mkdirSync(dataDir, { recursive: true });
  const paths = controlSocketPaths(dataDir);
  const holder: Holder = { role, pid: process.pid, version };
  let backup: BackupAnswer = { refuse: `aegis ${role} holds this data directory and takes no backups; wait until it has finished` };

  const handle = (conn: Socket) => {
    conn.on('error', () => undefined);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline < 0) {
        if (buffered.length > MAX_REQUEST_BYTES) conn.destroy();
        return;
      }
      conn.off('data', onData);
      let request: unknown;
      try {
        request = (JSON.parse(buffered.slice(0, newline)) as { request?: unknown }).request;
      } catch {
        request = undefined;
      }
      if (request === 'status') return reply(conn, { ok: true, holder });
      if (request !== 'backup') return reply(conn, { ok: false, holder, error: 'unknown request' });
      const answer = backup;
      if (typeof answer !== 'function') return reply(conn, { ok: false, holder, error: answer.refuse });
      answer().then(
        (bytes) => reply(conn, { ok: true, holder, bytes: bytes.byteLength }, bytes),
        (err: unknown) => reply(conn, { ok: false, holder, error: err instanceof Error ? err.message : String(err) }),
      );
    };
    conn.on('data', onData);
  };

  let path = paths[0]!;
  for (let attempt = 0; attempt < 3 + paths.length; attempt++) {
    const server = createServer(handle);
    try {
      await listenPrivately(server, path);
    } catch (err) {
      const code = errorCode(err);
      const next = paths[paths.indexOf(path) + 1];
      if (code !== undefined && NO_SOCKETS_HERE.has(code) && next) {
        path = next;
        continue;
      }
      if (code !== 'EADDRINUSE') throw err;
      const answer = await askStatus(path);
      if (answer !== 'nobody') throw new DataDirBusyError(answer === 'silent' ? undefined : answer, dataDir);
      // Left behind by a holder that was killed: nobody accepts connections on it.
      rmSync(path, { force: true });
      continue;
    }
    const taken = path;
    return {
      path: taken,
      holder,
      answerBackups: (answer) => {
        backup = answer;
      },
      release: () =>
        new Promise<void>((done) => {
          // close() removes the socket file of a unix socket it created.
          server.close(() => done());
        }),
    };
  }
  throw new Error(`could not take the control socket of ${dataDir} (${paths.join(', ')})`);
}

/** Binds with a umask that leaves the socket to its owner alone, then makes sure of the mode. */
function listenPrivately(server: Server, path: string): Promise<void> {
  return new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.once('listening', () => {
      server.off('error', fail);
      try {
        if (process.platform !== 'win32') chmodSync(path, 0o600);
        done();
      } catch (err) {
        server.close();
        fail(err);
      }
    });
    // The bind happens inside listen() itself (errors are reported a tick later), so the umask
    // only needs to cover the call.
    const previous = process.platform === 'win32' ? undefined : process.umask(0o177);
    try {
      server.listen(path);
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
  });
}

/** Refuses a socket that is not one, or that another OS user owns: it is not our server's. */
function checkOwner(path: string): 'missing' | 'ours' {
  if (process.platform === 'win32') return 'ours';
  let stat;
  try {
    stat = lstatSync(path);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return 'missing';
    throw err;
  }
  if (!stat.isSocket()) throw new Error(`${path} is not a socket; remove it if no Aegis process is running`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new Error(`${path} belongs to another user (uid ${stat.uid}); not talking to it`);
  return 'ours';
}

/**
 * Sends one request to the holder of the socket at `path`. Resolves undefined when nobody listens
 * there; otherwise with the holder's reply and the bytes that followed it (a backup is held in
 * memory on both sides anyway: PGlite dumps into one Blob).
 */
export async function controlRequest(path: string, request: ControlRequest, timeoutMs?: number): Promise<{ reply: ControlReply; body: Buffer } | undefined> {
  if (checkOwner(path) === 'missing') return undefined;
  return new Promise((done, fail) => {
    const conn = createConnection(path);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    const chunks: Buffer[] = [];
    if (timeoutMs !== undefined) conn.setTimeout(timeoutMs, () => conn.destroy(new Error('timeout')));
    conn.on('connect', () => conn.write(`${JSON.stringify({ request })}\n`));
    conn.on('error', (err) => {
      const code = errorCode(err);
      if (chunks.length === 0 && (code === 'ECONNREFUSED' || code === 'ENOENT')) return settle(() => done(undefined));
      settle(() => fail(err));
    });
    conn.on('data', (chunk: Buffer) => chunks.push(chunk));
    conn.on('end', () => {
      const all = Buffer.concat(chunks);
      const newline = all.indexOf(0x0a);
      if (newline < 0) return settle(() => fail(new Error(`the holder of ${path} closed the connection without answering`)));
      let reply: ControlReply;
      try {
        reply = JSON.parse(all.subarray(0, newline).toString('utf8')) as ControlReply;
      } catch {
        return settle(() => fail(new Error(`the holder of ${path} answered something that is not Aegis's protocol`)));
      }
      const body = all.subarray(newline + 1);
      if (reply.ok && reply.bytes !== undefined && body.length !== reply.bytes) {
        return settle(() => fail(new Error(`the backup stream ended after ${body.length} of ${reply.bytes} bytes`)));
      }
      settle(() => done({ reply, body }));
    });
  });
}

/** Who holds the socket at `path`: 'nobody' (no listener), 'silent' (accepts, never answers), or the holder. */
async function askStatus(path: string): Promise<Holder | 'nobody' | 'silent'> {
  try {
    const answer = await controlRequest(path, 'status', STATUS_TIMEOUT_MS);
    return answer ? answer.reply.holder : 'nobody';
  } catch (err) {
    if (err instanceof Error && err.message === 'timeout') return 'silent';
    throw err;
  }
}

/**
 * Sends `request` to whoever holds `dataDir`; undefined when nobody does. Every place its socket
 * may be is asked, in the order a holder takes them.
 */
export async function askDataDir(dataDir: string, request: ControlRequest): Promise<{ reply: ControlReply; body: Buffer } | undefined> {
  for (const path of controlSocketPaths(dataDir)) {
    const answer = await controlRequest(path, request);
    if (answer) return answer;
  }
  return undefined;
}
