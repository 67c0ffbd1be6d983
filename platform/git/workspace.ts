// A private scratch directory for one scan's or sync's source (a clone or an extracted archive): created
// under the system temp directory, readable only by the server's user, and always removed.
import { chmod, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs `fn` with a fresh empty directory (absolute, symlinks resolved, mode 0700) and removes it
 * with everything in it afterwards, whether `fn` succeeded or not. If `fn` fails, its error wins
 * over a failure to remove; if it succeeded, a failure to remove is thrown (source code left on
 * disk is worth knowing about).
 */
export async function withWorkspace<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  // realpath: os.tmpdir() may be a symlink (macOS /var → /private/var); containment checks compare
  // resolved paths.
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'aegis-work-')));
  let result: T;
  try {
    await chmod(dir, 0o700); // mkdtemp already uses 0700; explicit in case that ever changes
    result = await fn(dir);
  } catch (err) {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    throw err;
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  return result;
}
