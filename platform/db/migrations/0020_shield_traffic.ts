import { sql, type Kysely } from 'kysely';

// The traffic record an impact preview replays (issue 43: docs/impact-preview.md). One row per
// request the gateway answered: its metadata and decision always, its parameter values (sealed with
// the server key, credentials dropped at capture) for a sampled subset. Partitioned by day
// (partitions shield_traffic_YYYYMMDD, created by the writer as days begin and dropped whole by
// housekeeping past retention): retention costs a DROP, not a DELETE over millions of rows.
// No foreign key to shield_sites (a partitioned table's rows would each be checked on insert, at the
// gateway's write rate): deleting a site deletes its rows (api/shield/sites/store.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table shield_traffic (
      site_id text not null,
      at timestamptz not null,
      client_ip text not null,
      network text not null,
      asn integer,
      country text,
      method text not null,
      path text not null,
      status smallint not null,
      latency_ms integer not null,
      has_session boolean not null,
      api_keys text,
      action text not null,
      rule_kind text,
      rule_id text,
      would text,
      values_reason text,
      values_sealed text
    ) partition by range (at)`.execute(db);
  await sql`create index shield_traffic_site_at_idx on shield_traffic (site_id, at)`.execute(db);
  // What the values sweep (72 h by default, sooner than the rows) looks for.
  await sql`create index shield_traffic_values_at_idx on shield_traffic (at) where values_sealed is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table shield_traffic`.execute(db);
}
