// Where the SCA scanner gets advisories from, and how OSV files are read for import.
//
// The scanner only needs "the records that mention these packages": `AdvisorySource`. Importing
// (`aegis advisories import DIR|ZIP`, which posts records to the API) needs a writable store:
// `AdvisoryStore`. Both index records by `packageKey(ecosystem, name)` (names.ts) for every
// `affected[].package`, so that a lookup by any spelling of a PyPI name finds the record. The
// in-memory implementation here serves tests and benches; a database-backed one implements the same
// interfaces.
import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { packageKey } from './names.ts';
import { parseOsvRecord, type OsvRecord } from './osv.ts';
import { readZipEntries, type ZipLimits } from './zip.ts';

export interface PackageRef {
  ecosystem: string;
  name: string;
}

export interface AdvisorySource {
  /** Every non-deleted record with an affected entry for one of the packages (withdrawn ones may be included; they never match). */
  forPackages(keys: PackageRef[]): Promise<OsvRecord[]>;
}

// A type alias rather than an interface so that it is assignable to index-signature types (route
// response schemas type their bodies that way).
export type UpsertResult = {
  inserted: number;
  updated: number;
  /** Already stored with the same or a later `modified`. */
  unchanged: number;
};

export interface AdvisoryStore extends AdvisorySource {
  /** Inserts new records and replaces stored ones whose `modified` is older; a record is identified by its id. */
  upsert(records: OsvRecord[]): Promise<UpsertResult>;
}

/** Package keys a record must be findable under. */
export function recordKeys(record: OsvRecord): string[] {
  const keys = new Set<string>();
  for (const a of record.affected) if (a.package) keys.add(packageKey(a.package.ecosystem, a.package.name));
  return [...keys];
}

/** Whether `incoming` should replace `stored`: strictly newer `modified`. */
export function isNewer(incoming: OsvRecord, stored: OsvRecord): boolean {
  return Date.parse(incoming.modified) > Date.parse(stored.modified);
}

export class MemoryAdvisorySource implements AdvisoryStore {
  private readonly byId = new Map<string, OsvRecord>();
  private readonly byKey = new Map<string, Set<string>>();

  constructor(records: OsvRecord[] = []) {
    for (const r of records) this.put(r);
  }

  get size(): number {
    return this.byId.size;
  }

  async upsert(records: OsvRecord[]): Promise<UpsertResult> {
    const result: UpsertResult = { inserted: 0, updated: 0, unchanged: 0 };
    for (const r of records) result[this.put(r)]++;
    return result;
  }

  async forPackages(keys: PackageRef[]): Promise<OsvRecord[]> {
    const ids = new Set<string>();
    for (const k of keys) for (const id of this.byKey.get(packageKey(k.ecosystem, k.name)) ?? []) ids.add(id);
    return [...ids].map((id) => this.byId.get(id)!);
  }

  private put(record: OsvRecord): keyof UpsertResult {
    const prev = this.byId.get(record.id);
    if (prev && !isNewer(record, prev)) return 'unchanged';
    if (prev) for (const k of recordKeys(prev)) this.byKey.get(k)?.delete(prev.id);
    this.byId.set(record.id, record);
    for (const k of recordKeys(record)) {
      let set = this.byKey.get(k);
      if (!set) this.byKey.set(k, (set = new Set()));
      set.add(record.id);
    }
    return prev ? 'updated' : 'inserted';
  }
}

export interface OsvFileProblem {
  /** File path relative to the directory, or the entry name inside the ZIP. */
  file: string;
  message: string;
}

export interface OsvLoadResult {
  records: OsvRecord[];
  errors: OsvFileProblem[];
  warnings: OsvFileProblem[];
  /** JSON files read. */
  files: number;
}

export interface OsvLoadOptions {
  /** Largest JSON file read (bytes). */
  maxFileBytes?: number;
  /** Most JSON files read from a directory. */
  maxFiles?: number;
  zip?: Partial<ZipLimits>;
}

const DEFAULT_MAX_FILE = 16 * 1024 * 1024;
const DEFAULT_MAX_FILES = 1_000_000;

/** Parses one file's text: a single OSV record, or an array of them. */
export function parseOsvJson(text: string, file: string, into: OsvLoadResult): void {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    into.errors.push({ file, message: `invalid JSON: ${(e as Error).message}` });
    return;
  }
  const items = Array.isArray(doc) ? doc : [doc];
  items.forEach((item, i) => {
    const where = Array.isArray(doc) ? `${file}[${i}]` : file;
    const parsed = parseOsvRecord(item);
    if (!parsed.ok) into.errors.push({ file: where, message: parsed.errors.join('; ') });
    else {
      into.records.push(parsed.record);
      for (const w of parsed.warnings) into.warnings.push({ file: where, message: `${parsed.record.id}: ${w}` });
    }
  });
}

/** Reads every `*.json` under `dir` (recursively, symlinks not followed). */
export async function loadOsvDirectory(dir: string, options: OsvLoadOptions = {}): Promise<OsvLoadResult> {
  const maxFile = options.maxFileBytes ?? DEFAULT_MAX_FILE;
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  const out: OsvLoadResult = { records: [], errors: [], warnings: [], files: 0 };
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (e) {
      // The directory named on the command line must exist; an unreadable subdirectory is one problem among files.
      if (current === dir) throw e;
      out.errors.push({ file: relative(dir, current).split(sep).join('/'), message: `unreadable directory: ${(e as Error).message}` });
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of entries) {
      const full = join(current, ent.name);
      const rel = relative(dir, full).split(sep).join('/');
      if (ent.isSymbolicLink()) continue;
      if (ent.isDirectory()) stack.push(full);
      else if (ent.isFile() && ent.name.toLowerCase().endsWith('.json')) {
        if (out.files >= maxFiles) {
          out.errors.push({ file: rel, message: `more than ${maxFiles} files; the rest were not read` });
          return out;
        }
        out.files++;
        const st = await lstat(full);
        if (st.size > maxFile) {
          out.errors.push({ file: rel, message: `file too large (${st.size} bytes, limit ${maxFile})` });
          continue;
        }
        let text: string;
        try {
          text = await readFile(full, 'utf8');
        } catch (e) {
          out.errors.push({ file: rel, message: `unreadable: ${(e as Error).message}` });
          continue;
        }
        parseOsvJson(text, rel, out);
      }
    }
  }
  return out;
}

/** Reads every `*.json` entry of a ZIP archive (OSV's `all.zip` layout: one record per entry). */
export async function loadOsvZip(path: string, options: OsvLoadOptions = {}): Promise<OsvLoadResult> {
  const maxFile = options.maxFileBytes ?? DEFAULT_MAX_FILE;
  const out: OsvLoadResult = { records: [], errors: [], warnings: [], files: 0 };
  for await (const entry of readZipEntries(path, { maxEntryBytes: maxFile, ...options.zip }, (name) => name.toLowerCase().endsWith('.json'))) {
    const json = entry.name.toLowerCase().endsWith('.json');
    if (json) out.files++;
    // Rejected entries are reported whatever their extension: an unsafe name is worth knowing about.
    if ('error' in entry) out.errors.push({ file: entry.name, message: entry.error });
    else if (json) parseOsvJson(entry.data.toString('utf8'), entry.name, out);
  }
  return out;
}
