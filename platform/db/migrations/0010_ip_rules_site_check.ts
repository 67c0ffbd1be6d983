import { sql, type Kysely } from 'kysely';

// IP access rules are the one rule kind written 100 000 rows at a time (CSV import, rule batches).
// A foreign key checks each inserted row on its own (an index probe and a row lock on the site per
// row): about half of a 100 000-row import's time in the database. The same guarantee, checked once
// per statement: the inserted rows' sites are locked FOR KEY SHARE (as the foreign key's check
// locks them, so a concurrent site deletion waits for this transaction) and must exist, else
// foreign_key_violation; deleting a site deletes its rules, as ON DELETE CASCADE did.
const CONSTRAINT = 'ip_access_rules_site_id_fkey';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ip_access_rules drop constraint ${sql.raw(CONSTRAINT)}`.execute(db);
  await sql`
    create function ip_access_rules_site_exists() returns trigger language plpgsql as $$
    declare
      missing text;
    begin
      perform 1 from shield_sites where id in (select distinct site_id from added_rows) for key share;
      select a.site_id into missing
        from (select distinct site_id from added_rows) a
        where not exists (select 1 from shield_sites s where s.id = a.site_id)
        limit 1;
      if missing is not null then
        raise foreign_key_violation using message = format('shield site %s does not exist', missing), constraint = '${sql.raw(CONSTRAINT)}';
      end if;
      return null;
    end $$`.execute(db);
  for (const event of ['insert', 'update'] as const) {
    await sql`
      create trigger ${sql.raw(`ip_access_rules_${event}_site`)} after ${sql.raw(event)} on ip_access_rules
      referencing new table as added_rows
      for each statement execute function ip_access_rules_site_exists()`.execute(db);
  }
  await sql`
    create function shield_sites_delete_ip_rules() returns trigger language plpgsql as $$
    begin
      delete from ip_access_rules where site_id in (select id from removed_sites);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger shield_sites_delete_ip_rules after delete on shield_sites
    referencing old table as removed_sites
    for each statement execute function shield_sites_delete_ip_rules()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger shield_sites_delete_ip_rules on shield_sites`.execute(db);
  await sql`drop function shield_sites_delete_ip_rules()`.execute(db);
  for (const event of ['insert', 'update']) await sql`drop trigger ${sql.raw(`ip_access_rules_${event}_site`)} on ip_access_rules`.execute(db);
  await sql`drop function ip_access_rules_site_exists()`.execute(db);
  await sql`delete from ip_access_rules r where not exists (select 1 from shield_sites s where s.id = r.site_id)`.execute(db);
  await sql`alter table ip_access_rules add constraint ${sql.raw(CONSTRAINT)} foreign key (site_id) references shield_sites (id) on delete cascade`.execute(db);
}
