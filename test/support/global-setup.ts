// Migrates one database per test run, which every test file then clones: a fresh embedded
// database costs seconds to initialise, a copy well under one. With DATABASE_URL the template is a
// PostgreSQL database and clones are CREATE DATABASE … TEMPLATE.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../platform/db/database.ts';
import { migrateToLatest } from '../../platform/db/migrate.ts';
import { quoteIdent, type DatabaseTemplate } from './database-template.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate: DatabaseTemplate;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The dashboard's tests drive the built app (web/dist/), as `npm start` serves it.
  const { buildWeb, webStaleInput } = await import('../../build/web.mjs');
  if (webStaleInput() !== undefined) await buildWeb({ quiet: true });
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const prefix = `aegis_test_${process.pid}`;
    const template = `${prefix}_template`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`create database ${quoteIdent(template)}`);
    const url = new URL(databaseUrl);
    url.pathname = `/${template}`;
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir() });
    await migrateToLatest(database.db);
    await database.close();
    project.provide('databaseTemplate', { kind: 'postgres', serverUrl: databaseUrl, template, prefix });
    return async () => {
      const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${prefix}%`]);
      for (const { datname } of rows) await admin.query(`drop database if exists ${quoteIdent(datname)} with (force)`);
      await admin.end();
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'aegis-template-'));
  const database = await openDatabase({ dataDir: dir });
  await migrateToLatest(database.db);
  await database.close();
  project.provide('databaseTemplate', { kind: 'embedded', dataDir: dir });
  return async () => rmSync(dir, { recursive: true, force: true });
}
