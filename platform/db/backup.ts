// Backups of the embedded database (docs/operations.md, "Backup and restore"). A backup file is a
// small self-describing header and the payload, PGlite's own dump of its data directory (a gzipped
// tar, `dumpDataDir('gzip')`), which PGlite loads back with its `loadDataDir` option:
//
//   AEGIS-BACKUP\n
//   {"format":1,"aegis_version":…,"created_at":…,"last_migration":…,"key_fingerprint":…,"payload":{…,"sha256":…}}\n
//   <payload bytes>
//
// Sealed secrets (webhook signing secrets, certificate keys, integration tokens) stay sealed: the
// server key is never in a backup. The header carries the key's fingerprint instead (an HMAC of a
// fixed label under the key, truncated), so a restore can tell before touching anything whether the
// key it has opens what the backup sealed.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { open as openFile, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { parseServerKey } from '../crypto/secret-box.ts';
import type { Db } from './database.ts';

export const BACKUP_MAGIC = 'AEGIS-BACKUP';
export const BACKUP_FORMAT = 1;
const PAYLOAD_ENCODING = 'pgdata-tar+gzip';
/** The header is one line; anything longer is not a backup of ours. */
const MAX_HEADER_BYTES = 64 * 1024;
const FINGERPRINT_LABEL = 'aegis backup key fingerprint v1';

export interface BackupHeader {
  format: number;
  database: 'embedded';
  aegis_version: string;
  created_at: string;
  /** The newest migration applied to the database, null when none was. */
  last_migration: string | null;
  postgres_version: string;
  /** keyFingerprint() of the server key the database's secrets are sealed with. */
  key_fingerprint: string;
  payload: { encoding: string; bytes: number; sha256: string };
}

export class BackupError extends Error {
  override name = 'BackupError';
}

/** Names the key without revealing it: HMAC-SHA256(key, fixed label), first 16 hex digits. */
export function keyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update(FINGERPRINT_LABEL).digest('hex').slice(0, 16);
}

export interface FoundKey {
  key: Buffer;
  /** Where it came from, for messages. */
  source: string;
}

/**
 * The server key as `aegis serve` would find it (AEGIS_SECRET_KEY, else <dataDir>/secret-key), but
 * never created: undefined when there is none (platform/crypto/secret-box.ts creates it on first start).
 */
export async function findServerKey(dataDir: string, envValue: string | undefined): Promise<FoundKey | undefined> {
  if (envValue) return { key: parseServerKey(envValue, 'AEGIS_SECRET_KEY'), source: 'AEGIS_SECRET_KEY' };
  const path = join(dataDir, 'secret-key');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
    throw err;
  }
  return { key: parseServerKey(text, path), source: path };
}

/**
 * Takes a backup of the embedded database open in this process. The database's one session is
 * held for the whole dump (every other query waits behind it), after a CHECKPOINT, so the files
 * dumped are one consistent state. Returns the whole backup file.
 */
export async function dumpEmbedded(db: Db, pglite: PGlite, options: { key: Buffer; aegisVersion: string }): Promise<Buffer> {
  const { payload, lastMigration, postgresVersion } = await db.connection().execute(async () => {
    await pglite.exec('checkpoint');
    const version = await pglite.query<{ server_version: string }>('show server_version');
    let last: string | null = null;
    try {
      const rows = await pglite.query<{ name: string }>('select name from aegis_migrations order by name desc limit 1');
      last = rows.rows[0]?.name ?? null;
    } catch {
      last = null; // never migrated: no migrations table yet
    }
    const blob = await pglite.dumpDataDir('gzip');
    return { payload: Buffer.from(await blob.arrayBuffer()), lastMigration: last, postgresVersion: version.rows[0]?.server_version ?? 'unknown' };
  });
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    database: 'embedded',
    aegis_version: options.aegisVersion,
    created_at: new Date().toISOString(),
    last_migration: lastMigration,
    postgres_version: postgresVersion,
    key_fingerprint: keyFingerprint(options.key),
    payload: { encoding: PAYLOAD_ENCODING, bytes: payload.length, sha256: createHash('sha256').update(payload).digest('hex') },
  };
  return Buffer.concat([Buffer.from(`${BACKUP_MAGIC}\n${JSON.stringify(header)}\n`, 'utf8'), payload]);
}

/** Splits a backup file into its header and payload, checking the payload's length and digest. */
export function parseBackup(file: Buffer, name: string): { header: BackupHeader; payload: Buffer } {
  const magic = Buffer.from(`${BACKUP_MAGIC}\n`, 'utf8');
  if (!file.subarray(0, magic.length).equals(magic)) throw new BackupError(`${name} is not an Aegis backup (it does not start with ${BACKUP_MAGIC})`);
  const end = file.indexOf(0x0a, magic.length);
  if (end < 0 || end - magic.length > MAX_HEADER_BYTES) throw new BackupError(`${name} is not an Aegis backup: its header is cut short or malformed`);
  let header: BackupHeader;
  try {
    header = JSON.parse(file.subarray(magic.length, end).toString('utf8')) as BackupHeader;
  } catch {
    throw new BackupError(`${name} is not an Aegis backup: its header is not JSON`);
  }
  if (header.format !== BACKUP_FORMAT) throw new BackupError(`${name} is backup format ${String(header.format)}; this Aegis reads format ${BACKUP_FORMAT}`);
  if (header.database !== 'embedded' || header.payload?.encoding !== PAYLOAD_ENCODING || typeof header.payload.sha256 !== 'string' || typeof header.key_fingerprint !== 'string') {
    throw new BackupError(`${name} has a header this Aegis does not understand`);
  }
  const payload = file.subarray(end + 1);
  const digest = createHash('sha256').update(payload).digest('hex');
  if (payload.length !== header.payload.bytes || digest !== header.payload.sha256) {
    throw new BackupError(
      `${name} is damaged: its payload is ${payload.length} bytes with sha256 ${digest.slice(0, 16)}…, the header says ${header.payload.bytes} bytes with sha256 ${header.payload.sha256.slice(0, 16)}… (truncated or altered)`,
    );
  }
  return { header, payload };
}

/** Refuses a backup this code cannot run: one migrated past the newest migration it knows. */
export function checkMigrations(header: BackupHeader, known: readonly string[]): void {
  const last = header.last_migration;
  if (last === null || known.includes(last)) return;
  const newest = known[known.length - 1] ?? '(none)';
  throw new BackupError(
    `this backup's database is migrated to ${last}, which this Aegis does not know (its newest migration is ${newest}): it was made by a newer Aegis (${header.aegis_version}); restore it with that version or a later one`,
  );
}

/** Refuses a backup whose secrets `found` cannot open. */
export function checkKey(header: BackupHeader, found: FoundKey | undefined, dataDir: string): void {
  if (found && keyFingerprint(found.key) === header.key_fingerprint) return;
  const here = found ? `The key here (${found.source}) is ${keyFingerprint(found.key)}` : `There is no key here (no AEGIS_SECRET_KEY, no ${join(dataDir, 'secret-key')})`;
  throw new BackupError(
    `this backup was sealed with key ${header.key_fingerprint}; set AEGIS_SECRET_KEY to that key (or put it in ${join(dataDir, 'secret-key')}) and run the restore again. ${here}. Nothing was changed.`,
  );
}

/** True when `dir` exists and has something in it. */
export function hasContent(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).length > 0;
}

/**
 * Loads `payload` into a new directory beside `target` (checking that the result opens and is the
 * state the header describes), then puts it in `target`'s place: the database is either the old one
 * or the restored one, never half of each. An existing `target` is removed once replaced.
 */
export async function restoreEmbedded(target: string, header: BackupHeader, payload: Buffer): Promise<void> {
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const staging = join(dirname(target), `.${basename(target)}.restoring-${tag}`);
  const { PGlite } = await import('@electric-sql/pglite');
  try {
    const restored = await PGlite.create(staging, { loadDataDir: new Blob([new Uint8Array(payload)]) });
    try {
      let last: string | null = null;
      try {
        last = (await restored.query<{ name: string }>('select name from aegis_migrations order by name desc limit 1')).rows[0]?.name ?? null;
      } catch {
        last = null;
      }
      if (last !== header.last_migration) throw new BackupError(`the restored database is at migration ${String(last)}, the header says ${String(header.last_migration)}`);
      await restored.exec('checkpoint');
    } finally {
      await restored.close();
    }
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  const replaced = join(dirname(target), `.${basename(target)}.replaced-${tag}`);
  const hadTarget = existsSync(target);
  if (hadTarget) await rename(target, replaced);
  try {
    await rename(staging, target);
  } catch (err) {
    if (hadTarget) await rename(replaced, target);
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
  if (hadTarget) await rm(replaced, { recursive: true, force: true });
}

/** Writes `data` to `path` as a private file (0600), complete or not at all (a temporary file renamed into place). */
export async function writePrivateFile(path: string, data: Buffer): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.partial`);
  try {
    const handle = await openFile(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}
