// `aegis orgs set-plan`: an organisation's plan straight in the database, the hook billing will
// drive. On PostgreSQL the change is announced to running API processes (as the API's own changes
// are), so cached sessions see the new plan at once; plan gates read the database anyway.
import pino from 'pino';
import { loadConfig } from '../api/config.ts';
import { openCommandDatabase } from './open-database.ts';
import { migrateToLatest } from '../platform/db/migrate.ts';
import { recordAudit } from '../platform/audit-log.ts';
import { AuthChanges } from '../api/accounts/auth/auth-changes.ts';
import { asPlan, isPlan, PLANS, setPlan } from '../api/accounts/people/plans.ts';

export interface OrgsSetPlanOptions {
  org?: string | undefined;
  plan?: string | undefined;
  dataDir?: string | undefined;
}

export async function orgsSetPlanCommand(values: OrgsSetPlanOptions): Promise<number> {
  const slug = values.org ?? '';
  if (!slug) throw new Error('--org SLUG is required');
  const plan = values.plan ?? '';
  if (!isPlan(plan)) throw new Error(`--plan takes one of ${PLANS.join(', ')}${plan ? `; not ${plan}` : ''}`);
  const config = loadConfig({ dataDir: values.dataDir });
  const database = await openCommandDatabase(config, 'orgs');
  const changes = new AuthChanges({ databaseUrl: config.databaseUrl, log: pino({ level: 'silent' }) });
  try {
    await migrateToLatest(database.db);
    const org = await database.db.selectFrom('organizations').select(['id', 'plan']).where('slug', '=', slug).executeTakeFirst();
    if (!org) throw new Error(`no organisation ${slug}`);
    const from = asPlan(org.plan);
    if (from !== plan) {
      await changes.commit(database.db, async (trx) => {
        await setPlan(trx, undefined, org.id, plan);
        await recordAudit(trx, { orgId: org.id, actor: { type: 'system', id: 'cli' }, action: 'organization.plan_changed', target: { type: 'organization', id: org.id }, metadata: { from, to: plan, via: 'aegis orgs set-plan' } });
      });
    }
    process.stderr.write(from === plan ? `organisation ${slug} is already on ${plan}\n` : `organisation ${slug}: plan ${from} → ${plan}\n`);
    return 0;
  } finally {
    await changes.close();
    await database.close();
  }
}
