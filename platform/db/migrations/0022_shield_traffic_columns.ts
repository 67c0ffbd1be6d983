import { sql, type Kysely } from 'kysely';

// The traffic record's batches as binary columns (gateway/traffic/record-batch.ts), in base64 text
// (the embedded database turns bytea into hex and back in JavaScript, byte by byte: several times
// slower to write and read): a replay reads them in place instead of parsing JSON into an object
// per request. `records` (the JSON of 0020)
// stays, nullable, so that a gateway process of the previous release still inserts during a
// rolling upgrade; readers skip such rows. What was recorded before is deleted: the record is
// advice of the last days, and it fills again within them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from shield_traffic`.execute(db);
  await sql`alter table shield_traffic add column columns text`.execute(db);
  await sql`alter table shield_traffic alter column records drop not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from shield_traffic where records is null`.execute(db);
  await sql`alter table shield_traffic alter column records set not null`.execute(db);
  await sql`alter table shield_traffic drop column columns`.execute(db);
}
