// A fresh, migrated database for one test server, cloned from the run's template.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type DatabaseTemplate =
  | { kind: 'embedded'; dataDir: string }
  | { kind: 'postgres'; serverUrl: string; template: string; prefix: string };

export interface TestDatabase {
  /** Data directory (holds the embedded database, and the bootstrap key file). */
  dataDir: string;
  databaseUrl: string | undefined;
}

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function cloneDatabase(template: DatabaseTemplate): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'aegis-test-'));
  if (template.kind === 'embedded') {
    cpSync(template.dataDir, dataDir, { recursive: true });
    return { dataDir, databaseUrl: undefined };
  }
  const name = `${template.prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: template.serverUrl });
  await admin.connect();
  try {
    // Two clones of one template at the same moment can collide on the template's lock; retry.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${quoteIdent(name)} template ${quoteIdent(template.template)}`);
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(template.serverUrl);
  url.pathname = `/${name}`;
  return { dataDir, databaseUrl: url.toString() };
}
