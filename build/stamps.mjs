// The stamp of a build input (size and mtime), shared by the server's build (build/bundle.mjs) and the
// dashboard's (build/web.mjs) for their staleness checks.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** The stamp of one input (a path relative to the repository): size and mtime; `undefined` when it is gone. */
export function stampOf(file) {
  const stats = statSync(join(root, file), { throwIfNoEntry: false });
  return stats ? `${stats.size}:${stats.mtimeMs}` : undefined;
}
