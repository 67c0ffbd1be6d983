// OSV advisories in the database: the SCA scanner's AdvisorySource, and the store
// `aegis advisories import` fills through the API.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { recordKeys, type AdvisoryStore, type PackageRef, type UpsertResult } from '../../scanners/sca/advisory-source.ts';
import { packageKey } from '../../scanners/sca/names.ts';
import { parseOsvRecord, type OsvRecord } from '../../scanners/sca/osv.ts';

const KEY_CHUNK = 1_000;

export class DbAdvisoryStore implements AdvisoryStore {
  constructor(private readonly db: Db) {}

  async forPackages(keys: PackageRef[]): Promise<OsvRecord[]> {
    const wanted = [...new Set(keys.map((k) => packageKey(k.ecosystem, k.name)))];
    const records = new Map<string, OsvRecord>();
    for (let i = 0; i < wanted.length; i += KEY_CHUNK) {
      const rows = await this.db
        .selectFrom('advisories')
        .select(['id', 'record'])
        .where('id', 'in', (eb) => eb.selectFrom('advisory_packages').select('advisory_id').where('package_key', 'in', wanted.slice(i, i + KEY_CHUNK)))
        .execute();
      for (const row of rows) {
        // Stored records were validated on the way in; parsing again gives the scanner its typed form.
        const parsed = parseOsvRecord(row.record);
        if (parsed.ok) records.set(row.id, parsed.record);
      }
    }
    return [...records.values()];
  }

  /** Inserts new records and replaces older versions, atomically for the whole batch. */
  async upsert(records: OsvRecord[]): Promise<UpsertResult> {
    const result: UpsertResult = { inserted: 0, updated: 0, unchanged: 0 };
    const latest = new Map<string, OsvRecord>();
    for (const r of records) {
      const seen = latest.get(r.id);
      if (!seen || Date.parse(r.modified) > Date.parse(seen.modified)) latest.set(r.id, r);
    }
    result.unchanged += records.length - latest.size;
    await this.db.transaction().execute(async (trx) => {
      for (const record of latest.values()) {
        const row = await trx
          .insertInto('advisories')
          .values({ id: record.id, modified: new Date(record.modified), record: JSON.stringify(record) })
          .onConflict((oc) =>
            oc
              .column('id')
              .doUpdateSet((eb) => ({ modified: eb.ref('excluded.modified'), record: eb.ref('excluded.record'), imported_at: sql<Date>`now()` }))
              .where('advisories.modified', '<', (eb) => eb.ref('excluded.modified')),
          )
          .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
          .executeTakeFirst();
        if (!row) {
          result.unchanged += 1;
          continue;
        }
        result[row.inserted ? 'inserted' : 'updated'] += 1;
        await trx.deleteFrom('advisory_packages').where('advisory_id', '=', record.id).execute();
        const keys = recordKeys(record);
        if (keys.length > 0) await trx.insertInto('advisory_packages').values(keys.map((k) => ({ package_key: k, advisory_id: record.id }))).execute();
      }
    });
    return result;
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('advisories').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
