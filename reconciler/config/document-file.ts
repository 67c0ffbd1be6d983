// `document_file:` reads an OpenAPI document from the config repository. The path comes from a
// config file, which may come from a pull request, so it is confined to the config directory:
// absolute paths, `..` escapes and symlinks that lead outside are refused before anything is read.
import { realpath, readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep, win32 } from 'node:path';
import { MAX_SCHEMA_BYTES } from '../../schemas/index.ts';
import { errorMessage } from '../../schemas/json-value.ts';

export type DocumentFileRead = { ok: true; text: string; file: string } | { ok: false; reason: string };

const toSlashes = (path: string): string => path.split(sep).join('/');
const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * The absolute path `reference` names, written in `yamlFile` (relative to `baseDir`), or why it
 * may not be used. Purely lexical; `readDocumentFile` also checks where symlinks lead.
 */
export function documentFileTarget(reference: string, yamlFile: string, baseDir: string): { ok: true; path: string } | { ok: false; reason: string } {
  // Both conventions: a Windows path in a repository checked out on Linux is just as wrong.
  if (isAbsolute(reference) || win32.isAbsolute(reference)) return { ok: false, reason: 'must be a path relative to the YAML file, not an absolute path' };
  const root = resolve(baseDir);
  const path = resolve(root, dirname(yamlFile), reference);
  if (!isInside(root, path)) return { ok: false, reason: `${JSON.stringify(reference)} points outside the config directory` };
  return { ok: true, path };
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

export async function readDocumentFile(reference: string, yamlFile: string, baseDir: string): Promise<DocumentFileRead> {
  const target = documentFileTarget(reference, yamlFile, baseDir);
  if (!target.ok) return target;
  const shown = toSlashes(relative(resolve(baseDir), target.path));
  let real: string;
  let realRoot: string;
  try {
    realRoot = await realpath(baseDir);
    real = await realpath(target.path);
  } catch (error) {
    return { ok: false, reason: errorCode(error) === 'ENOENT' ? `${shown} does not exist` : `${shown} cannot be read: ${String(error)}` };
  }
  if (!isInside(realRoot, real)) return { ok: false, reason: `${JSON.stringify(reference)} leads outside the config directory through a symbolic link` };
  try {
    const info = await stat(real);
    if (!info.isFile()) return { ok: false, reason: `${shown} is not a file` };
    if (info.size > MAX_SCHEMA_BYTES) return { ok: false, reason: `${shown} is larger than ${MAX_SCHEMA_BYTES / 1024 / 1024} MiB` };
    return { ok: true, text: await readFile(real, 'utf8'), file: shown };
  } catch (error) {
    return { ok: false, reason: `${shown} cannot be read: ${errorMessage(error)}` };
  }
}
