// A proposed configuration of one site, as the gateway would compile it, without storing anything:
// the proposal is applied with the very checks and stores of apply (the site's PATCH, the rule
// batch) inside a transaction that is then rolled back. A proposal apply would refuse is refused
// here with the same 422 naming the field; nothing is ever half-written, and no version is bumped.
import type { Db } from '../../../platform/db/database.ts';
import { environmentOf } from '../../../platform/db/environments.ts';
import type { ManagedRulesSettings } from '../../../platform/db/schema.ts';
import { notFound } from '../../../platform/http/errors.ts';
import { loadSite, type SiteConfig } from '../../../gateway/sites/load.ts';
import { applyOperations, checkOperations, type BatchOperation } from '../batch/operations.ts';
import { checkManagedRules } from '../sites/routes.ts';
import { upsertSchemaConfig } from '../schema/store.ts';
import { requireSite, updateSite } from '../sites/store.ts';
import type { SCHEMA_STRICTNESS } from '../../../schemas/shield-schema.ts';

/** The site settings a decision depends on: what a proposal may change besides the rules. */
export interface ProposedSiteSettings {
  mode?: 'log' | 'block' | 'challenge' | undefined;
  path_case?: 'sensitive' | 'insensitive' | undefined;
  managed_rules?: Partial<ManagedRulesSettings> | undefined;
}

export interface Proposal {
  site?: ProposedSiteSettings | undefined;
  /** Rule writes, exactly as POST /api/v1/shield/sites/{id}/rules/batch takes them. */
  operations?: readonly BatchOperation[] | undefined;
  /** Schema enforcement's strictness, as PATCH /api/v1/shield/sites/{id}/schema-config takes it (a new document is not previewed). */
  schema?: { strictness?: (typeof SCHEMA_STRICTNESS)[number] | undefined } | undefined;
}

export interface ProposedConfigs {
  current: SiteConfig;
  proposed: SiteConfig;
  /** Which operation (its index in `operations`) each rule id of the proposed configuration came from. */
  operationOf: Map<string, number>;
}

/** Thrown to end the transaction: it carries the result out while the writes are rolled back. */
class Rollback {
  constructor(readonly configs: ProposedConfigs) {}
}

export async function proposedConfigs(db: Db, orgId: string, siteId: string, proposal: Proposal): Promise<ProposedConfigs> {
  if (proposal.operations) checkOperations(proposal.operations);
  checkManagedRules(proposal.site?.managed_rules);
  try {
    await db.transaction().execute(async (trx) => {
      const site = await requireSite(trx, orgId, siteId);
      const environment = environmentOf(orgId);
      const current = await loadSite(trx, site.id, environment);
      if (!current) throw notFound('Shield site');
      const { managed_rules, ...rest } = proposal.site ?? {};
      const changes = { ...rest, ...(managed_rules ? { managed_rules: { ...site.managed_rules, ...managed_rules } } : {}) };
      if (Object.keys(changes).length > 0) await updateSite(trx, orgId, site.id, changes);
      if (proposal.schema?.strictness) await upsertSchemaConfig(trx, orgId, site.id, { strictness: proposal.schema.strictness });
      const operationOf = new Map<string, number>();
      if (proposal.operations && proposal.operations.length > 0) {
        const applied = await applyOperations(trx, orgId, site.id, proposal.operations);
        applied.results.forEach((result, index) => operationOf.set(result.id, index));
      }
      const proposed = await loadSite(trx, site.id, environment);
      if (!proposed) throw notFound('Shield site');
      throw new Rollback({ current, proposed, operationOf });
    });
  } catch (err) {
    if (err instanceof Rollback) return err.configs;
    throw err;
  }
  throw new Error('unreachable: the proposal transaction always rolls back');
}
