// The attack-surface inventory: what one discovery found, merged into what earlier ones found.
// Each successful scope (one service in one region) is authoritative for its assets: they are
// upserted (new → first seen now; known → last seen now, back if they were gone) and that scope's
// assets this run did not see are marked gone. A failed scope is left exactly as it was, so a
// permission the role lost for one service never empties the inventory. Scopes that no longer exist
// at all (a region removed from the settings) are authoritative too: nothing is found there.
//
// Rows go in chunks of CHUNK through `insert … on conflict do update`, so 10 000 assets are 20
// statements and memory stays bounded by one chunk's parameters.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import type { DiscoveredAsset, ScopeResult } from './providers/types.ts';

export const ASSET_ID_PREFIX = 'asset';
const CHUNK = 500;

export interface DiscoveryCounts {
  /** Active assets of the connection after the run (failed scopes' assets included). */
  total: number;
  /** New, or back after being gone. */
  added: number;
  /** Marked gone by this run. */
  removed: number;
  /** Seen again, and already active. */
  unchanged: number;
}

export interface DiscoveryOwner {
  orgId: string;
  integrationId: string;
  provider: string;
}

export interface ScopeError {
  scope: string;
  code: string;
  message: string;
}

const identity = (a: DiscoveredAsset): string => `${a.kind}\u0000${a.resourceId}\u0000${a.host}`;

/** Scope errors of a run, in the shape runs store them. */
export function scopeErrors(results: readonly ScopeResult[]): ScopeError[] {
  return results.flatMap((r) => ('error' in r ? [{ scope: r.scope, code: r.error.code, message: r.error.message }] : []));
}

async function upsertChunk(trx: Db, owner: DiscoveryOwner, scope: string, assets: readonly DiscoveredAsset[], now: Date): Promise<{ inserted: number; returned: number; upserted: number }> {
  const rows = assets.map(
    (a) =>
      sql`(${newId(ASSET_ID_PREFIX)}, ${owner.orgId}, ${owner.integrationId}, ${owner.provider}, ${a.kind}, ${a.host.toLowerCase()}, ${a.resourceId}, ${a.resourceName}, ${a.region}, ${scope}, ${JSON.stringify(a.details)}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`,
  );
  // The subquery in RETURNING reads the table as it was before this statement (the statement's
  // snapshot), which is how a row coming back from `gone` is told from one that never left.
  const result = await sql<{ inserted: number | string; returned: number | string; upserted: number | string }>`
    with up as (
      insert into attack_surface_assets (id, org_id, integration_id, provider, kind, host, resource_id, resource_name, region, scope, details, first_seen_at, last_seen_at)
      values ${sql.join(rows)}
      on conflict (integration_id, kind, resource_id, host) do update set
        last_seen_at = excluded.last_seen_at,
        gone_at = null,
        resource_name = excluded.resource_name,
        region = excluded.region,
        scope = excluded.scope,
        details = excluded.details
      returning (xmax = 0) as inserted,
        (select before.gone_at is not null from attack_surface_assets before where before.id = attack_surface_assets.id) as returned
    )
    select count(*) filter (where inserted) as inserted,
           count(*) filter (where not inserted and returned) as returned,
           count(*) as upserted
    from up`.execute(trx);
  const row = result.rows[0];
  return { inserted: Number(row?.inserted ?? 0), returned: Number(row?.returned ?? 0), upserted: Number(row?.upserted ?? 0) };
}

/**
 * Merges one discovery's results into the connection's inventory at `now` (the run's time: every
 * row it touches gets exactly this timestamp). Run it in the transaction that completes the run.
 */
export async function recordDiscovery(trx: Db, owner: DiscoveryOwner, results: readonly ScopeResult[], now: Date): Promise<DiscoveryCounts> {
  let added = 0;
  let unchanged = 0;
  let removed = 0;
  // One identity is written once per run even if two scopes report it (the statement could not
  // update one row twice); the first scope keeps it.
  const seen = new Set<string>();
  for (const result of results) {
    if ('error' in result) continue;
    const fresh = result.assets.filter((a) => {
      const key = identity(a);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    for (let i = 0; i < fresh.length; i += CHUNK) {
      const chunk = await upsertChunk(trx, owner, result.scope, fresh.slice(i, i + CHUNK), now);
      added += chunk.inserted + chunk.returned;
      unchanged += chunk.upserted - chunk.inserted - chunk.returned;
    }
    const gone = await trx
      .updateTable('attack_surface_assets')
      .set({ gone_at: now })
      .where('integration_id', '=', owner.integrationId)
      .where('scope', '=', result.scope)
      .where('gone_at', 'is', null)
      .where('last_seen_at', '<', now)
      .executeTakeFirst();
    removed += Number(gone.numUpdatedRows);
  }
  const reported = results.map((r) => r.scope);
  if (reported.length > 0) {
    const vanished = await trx
      .updateTable('attack_surface_assets')
      .set({ gone_at: now })
      .where('integration_id', '=', owner.integrationId)
      .where('gone_at', 'is', null)
      .where('scope', 'not in', reported)
      .executeTakeFirst();
    removed += Number(vanished.numUpdatedRows);
  }
  const total = await trx
    .selectFrom('attack_surface_assets')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('integration_id', '=', owner.integrationId)
    .where('gone_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { total: Number(total.n), added, removed, unchanged };
}
