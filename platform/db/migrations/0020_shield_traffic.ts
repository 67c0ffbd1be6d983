import { sql, type Kysely } from 'kysely';

// The traffic record an impact preview replays (issue 43: docs/impact-preview.md). Each row is a
// batch of one site's requests as one gateway process answered them in about a second
// (gateway/traffic/record-batch.ts): their metadata and decisions column by column, and the values
// of the sampled few sealed apart with the server key (credentials dropped at capture). Partitioned
// by day of the batch's first request (partitions shield_traffic_YYYYMMDD, created by the writer
// as days begin and dropped whole by housekeeping past retention): retention costs a DROP, not a
// DELETE. No foreign key to shield_sites (a partitioned table's rows would each be checked on
// insert): deleting a site deletes its rows (api/shield/sites/store.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table shield_traffic (
      site_id text not null,
      at timestamptz not null,
      until_at timestamptz not null,
      requests integer not null,
      records text not null,
      values_sealed text
    ) partition by range (at)`.execute(db);
  await sql`create index shield_traffic_site_at_idx on shield_traffic (site_id, at)`.execute(db);
  // What the values sweep (72 h by default, sooner than the rows) looks for.
  await sql`create index shield_traffic_values_idx on shield_traffic (until_at) where values_sealed is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table shield_traffic`.execute(db);
}
