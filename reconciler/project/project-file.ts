// `aegis.yaml` at the root of a config directory: settings of the directory itself rather than
// managed objects. Today one: the ownership source the directory's objects belong to, written by
// `aegis dump --source` so a later plan of the dump needs no flag. The config loader skips it.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { errorMessage, isObject } from '../../schemas/json-value.ts';

export const PROJECT_FILE = 'aegis.yaml';

export interface ProjectFile {
  /** The ownership source (reconciler/plan/ownership.ts) of the objects in this directory. */
  source?: string;
}


/** The project file of `dir`, undefined when there is none; a malformed one is an error, not ignored. */
export async function readProjectFile(dir: string): Promise<ProjectFile | undefined> {
  const path = join(dir, PROJECT_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
  let value: unknown;
  try {
    value = parse(text, { uniqueKeys: true }) ?? {};
  } catch (err) {
    throw new Error(`${path}: invalid YAML: ${errorMessage(err)}`);
  }
  if (!isObject(value)) throw new Error(`${path}: expected a mapping such as "source: my-repo"`);
  const unknown = Object.keys(value).filter((key) => key !== 'source');
  if (unknown.length > 0) throw new Error(`${path}: unknown setting(s) ${unknown.join(', ')} (known: source)`);
  if (value.source !== undefined && (typeof value.source !== 'string' || value.source.trim() === '')) throw new Error(`${path}: source must be a non-empty string`);
  return value.source === undefined ? {} : { source: value.source };
}

export async function writeProjectFile(dir: string, project: ProjectFile): Promise<void> {
  const header = '# Aegis project settings: read by aegis validate/plan/apply/watch in this directory.\n';
  await writeFile(join(dir, PROJECT_FILE), header + stringify(project));
}
