// insertIpRulesBulk through transactionWithCopy: with COPY (a database opened by openDatabase) and
// without (any other Kysely, which fills the staging table with arrays), on the run's database kind.
import { rmSync } from 'node:fs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { transactionWithCopy } from '../../platform/db/copy.ts';
import { openDatabase, type DatabaseHandle, type Db } from '../../platform/db/database.ts';
import { PGliteDialect } from '../../platform/db/pglite-dialect.ts';
import type { Database } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { insertIpRulesBulk, type StagedIpRule } from '../../api/shield/ip-access/store.ts';
import { cloneDatabase, type TestDatabase } from '../support/database-template.ts';

let database: TestDatabase;
let handle: DatabaseHandle;
let plain: Db;

beforeAll(async () => {
  database = await cloneDatabase(inject('databaseTemplate'));
  handle = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
  if (database.databaseUrl) plain = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.databaseUrl, max: 2 }) }) });
  else {
    // The same session as handle's (PGlite is single-user): a second dialect over that instance
    // would interleave transactions, so the unregistered Kysely reuses handle's driver by wrapping it.
    plain = handle.db.withPlugin({ transformQuery: (args) => args.node, transformResult: async (args) => args.result });
  }
});

afterAll(async () => {
  if (database.databaseUrl) await plain.destroy();
  await handle.close();
  rmSync(database.dataDir, { recursive: true, force: true });
});

async function newSite(db: Db): Promise<{ orgId: string; siteId: string }> {
  const orgId = newId('org');
  const siteId = newId('site');
  await db.insertInto('organizations').values({ id: orgId, slug: orgId, name: orgId }).execute();
  await db.insertInto('shield_sites').values({ id: siteId, org_id: orgId, domain: 'bulk.example.com', origin_url: 'http://127.0.0.1:9', mode: 'block', labels: '{}' }).execute();
  return { orgId, siteId };
}

const rules = (values: string[], note = ''): StagedIpRule[] =>
  values.map((value, i) => ({ ref: 10 + i, rule: { type: 'ip', value, valueKey: value, action: 'deny', note, expiresAt: null, labels: {} } }));

describe.each([
  ['with COPY', () => handle.db, true],
  ['without COPY', () => plain, false],
] as const)('insertIpRulesBulk %s', (_name, db, copies) => {
  it('inserts everything, or reports by ref the rules the site already has', async () => {
    const { orgId, siteId } = await newSite(db());
    const note = 'a\ttab, a \\ backslash, \\N and\na line break';
    const first = await transactionWithCopy(db(), async (trx, copyIn) => {
      expect(copyIn !== null).toBe(copies);
      return insertIpRulesBulk(trx, copyIn, orgId, siteId, rules(['192.0.2.1', '192.0.2.2'], note));
    });
    expect(first).toEqual({ created: 2, clashing: [] });
    const second = await transactionWithCopy(db(), (trx, copyIn) => insertIpRulesBulk(trx, copyIn, orgId, siteId, rules(['192.0.2.3', '192.0.2.2', '192.0.2.1'])));
    expect(second).toEqual({ created: 1, clashing: [11, 12] });
    // Repeats within one call: the lowest ref goes in, the others are reported.
    const repeats = [...rules(['192.0.2.9'], 'kept'), ...rules(['192.0.2.9', '192.0.2.9'], 'dropped').map((r, i) => ({ ...r, ref: 20 + i }))].reverse();
    const third = await transactionWithCopy(db(), (trx, copyIn) => insertIpRulesBulk(trx, copyIn, orgId, siteId, repeats));
    expect(third).toEqual({ created: 1, clashing: [20, 21] });
    const kept = await db().deleteFrom('ip_access_rules').where('site_id', '=', siteId).where('value', '=', '192.0.2.9').returning('note').execute();
    expect(kept).toEqual([{ note: 'kept' }]);
    const stored = await db().selectFrom('ip_access_rules').select(['value', 'note', 'labels']).where('site_id', '=', siteId).orderBy('value').execute();
    expect(stored).toEqual([
      { value: '192.0.2.1', note, labels: {} },
      { value: '192.0.2.2', note, labels: {} },
      { value: '192.0.2.3', note: '', labels: {} },
    ]);
  });

  it('leaves nothing behind when the transaction fails, and the connection usable', async () => {
    const { orgId, siteId } = await newSite(db());
    await expect(
      transactionWithCopy(db(), async (trx, copyIn) => {
        await insertIpRulesBulk(trx, copyIn, orgId, siteId, rules(['198.51.100.1', '198.51.100.2']));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const left = await sql<{ n: number }>`select count(*)::int as n from ip_access_rules where site_id = ${siteId}`.execute(db());
    expect(left.rows[0]!.n).toBe(0);
    const again = await transactionWithCopy(db(), (trx, copyIn) => insertIpRulesBulk(trx, copyIn, orgId, siteId, rules(['198.51.100.1'])));
    expect(again).toEqual({ created: 1, clashing: [] });
  });
});
