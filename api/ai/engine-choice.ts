// Which engine triages an organisation's findings: its most recently connected AI provider that is
// `active`, else the bundled fallback (rules, no model). `engine: 'fallback'` in a request forces
// the fallback. Kept free of provider imports (./auto.ts uses it from the event store).
import type { Db } from '../../platform/db/database.ts';
import type { IntegrationRow } from '../../platform/db/schema.ts';

export const ENGINE_REQUESTS = ['auto', 'fallback'] as const;
export type EngineRequest = (typeof ENGINE_REQUESTS)[number];

export type EngineChoice =
  | { kind: 'ai'; integration: IntegrationRow }
  /** `connected`: the organisation has an active AI connection (the fallback was asked for); its quota then does not apply. */
  | { kind: 'fallback'; connected: IntegrationRow | null };

/** The organisation's active AI connection, the most recently created first. */
export async function activeAiConnection(db: Db, orgId: string): Promise<IntegrationRow | undefined> {
  return db
    .selectFrom('integrations')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('kind', '=', 'ai')
    .where('status', '=', 'active')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function chooseEngine(db: Db, orgId: string, requested: EngineRequest = 'auto'): Promise<EngineChoice> {
  const connection = (await activeAiConnection(db, orgId)) ?? null;
  if (requested === 'fallback' || !connection) return { kind: 'fallback', connected: connection };
  return { kind: 'ai', integration: connection };
}
