// Migration 0010: IP access rules check their site once per statement instead of through a foreign
// key. The guarantees of the key must hold: no rule without its site, a site's deletion takes its
// rules, and neither races the other (PostgreSQL, two sessions).
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { cloneDatabase, type TestDatabase } from '../support/database-template.ts';

let database: TestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  database = await cloneDatabase(inject('databaseTemplate'));
  handle = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
});

afterAll(async () => {
  await handle.close();
  rmSync(database.dataDir, { recursive: true, force: true });
});

async function newSite(): Promise<{ orgId: string; siteId: string }> {
  const orgId = newId('org');
  const siteId = newId('site');
  await handle.db.insertInto('organizations').values({ id: orgId, slug: orgId, name: orgId }).execute();
  await handle.db.insertInto('shield_sites').values({ id: siteId, org_id: orgId, domain: `${siteId}.example.com`, origin_url: 'http://127.0.0.1:9', mode: 'block', labels: '{}' }).execute();
  return { orgId, siteId };
}

const rule = (orgId: string, siteId: string, value: string) => ({ id: newId('ipr'), org_id: orgId, site_id: siteId, type: 'ip', value, value_key: value, action: 'deny', note: '', labels: '{}' });

const rulesOf = async (siteId: string) => (await handle.db.selectFrom('ip_access_rules').select('value').where('site_id', '=', siteId).execute()).map((r) => r.value);

describe('IP access rules and their site', () => {
  it('refuses a rule whose site does not exist, as the foreign key did (23503), and stores none of the statement', async () => {
    const { orgId, siteId } = await newSite();
    const insert = handle.db.insertInto('ip_access_rules').values([rule(orgId, siteId, '192.0.2.1'), rule(orgId, 'site_missing', '192.0.2.2')]).execute();
    await expect(insert).rejects.toMatchObject({ code: '23503' });
    expect(await rulesOf(siteId)).toEqual([]);
  });

  it("deletes a site's rules with the site, and no other site's", async () => {
    const a = await newSite();
    const b = await newSite();
    await handle.db.insertInto('ip_access_rules').values([rule(a.orgId, a.siteId, '192.0.2.1'), rule(a.orgId, a.siteId, '192.0.2.2'), rule(b.orgId, b.siteId, '192.0.2.1')]).execute();
    await handle.db.deleteFrom('shield_sites').where('id', '=', a.siteId).execute();
    expect(await rulesOf(a.siteId)).toEqual([]);
    expect(await rulesOf(b.siteId)).toEqual(['192.0.2.1']);
  });

  describe.skipIf(inject('databaseTemplate').kind !== 'postgres')('two sessions (PostgreSQL)', () => {
    const session = async () => {
      const client = new pg.Client({ connectionString: database.databaseUrl });
      await client.connect();
      return client;
    };
    const insertSql = 'insert into ip_access_rules (id, org_id, site_id, type, value, value_key, action, note, labels) values ($1, $2, $3, $4, $5, $5, $6, $7, $8)';
    const params = (r: ReturnType<typeof rule>) => [r.id, r.org_id, r.site_id, r.type, r.value, r.action, r.note, r.labels];

    it('a site deleted while an import is open waits for it, then takes the imported rules with it', async () => {
      const { orgId, siteId } = await newSite();
      const [importer, deleter] = await Promise.all([session(), session()]);
      try {
        await importer.query('begin');
        await importer.query(insertSql, params(rule(orgId, siteId, '192.0.2.1')));
        let deleted = false;
        const deletion = deleter.query('delete from shield_sites where id = $1', [siteId]).then(() => (deleted = true));
        await new Promise((r) => setTimeout(r, 300));
        expect(deleted).toBe(false);
        await importer.query('commit');
        await deletion;
        expect(await rulesOf(siteId)).toEqual([]);
      } finally {
        await Promise.all([importer.end(), deleter.end()]);
      }
    });

    it('an import into a site being deleted waits, then fails once the deletion commits', async () => {
      const { orgId, siteId } = await newSite();
      const [importer, deleter] = await Promise.all([session(), session()]);
      try {
        await deleter.query('begin');
        await deleter.query('delete from shield_sites where id = $1', [siteId]);
        const insert = importer.query(insertSql, params(rule(orgId, siteId, '192.0.2.1')));
        const outcome = insert.then(
          () => 'inserted',
          (err: { code?: string }) => err.code,
        );
        await new Promise((r) => setTimeout(r, 300));
        await deleter.query('commit');
        expect(await outcome).toBe('23503');
        expect(await rulesOf(siteId)).toEqual([]);
      } finally {
        await Promise.all([importer.end(), deleter.end()]);
      }
    });
  });
});
