// Live and test environments (DESIGN §7, docs/sandbox.md). An organisation's data lives in one of
// two data spaces: its live space, whose id is the organisation's (`org_…`), and its sandbox, whose
// id is the same with the `sbx_` prefix. Authentication turns a key or session into a principal
// whose `orgId` names the data space, so the organisation filter every store already applies (and
// the cross-organisation matrix test proves) separates the environments too: no route can reach
// the other environment's rows, and a route that forgets nothing about organisations forgets
// nothing about environments. Organisation-level things (members, invites, SSO, plan, keys) use
// `principal.organization.id`, the organisation itself.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';

export const ENVIRONMENTS = ['live', 'test'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

const ORG_PREFIX = 'org_';
const SANDBOX_PREFIX = 'sbx_';

/** The data space of `orgId`'s environment. */
export function dataSpaceOf(orgId: string, environment: Environment): string {
  if (environment === 'live') return orgId;
  if (!orgId.startsWith(ORG_PREFIX)) throw new Error(`not an organisation id: ${orgId}`);
  return SANDBOX_PREFIX + orgId.slice(ORG_PREFIX.length);
}

export function environmentOf(dataSpace: string): Environment {
  return dataSpace.startsWith(SANDBOX_PREFIX) ? 'test' : 'live';
}

/** What every object says about where it lives (Stripe's `livemode`). */
export function livemodeOf(dataSpace: string): boolean {
  return !dataSpace.startsWith(SANDBOX_PREFIX);
}

/** The organisation a data space belongs to (what API responses call the organisation). */
export function organizationOf(dataSpace: string): string {
  return dataSpace.startsWith(SANDBOX_PREFIX) ? ORG_PREFIX + dataSpace.slice(SANDBOX_PREFIX.length) : dataSpace;
}

/** SQL: `column` (an org_id) names a data space of `environment`. */
export function inEnvironment(column: string, environment: Environment): RawBuilder<boolean> {
  const test = sql<boolean>`starts_with(${sql.ref(column)}, ${SANDBOX_PREFIX})`;
  return environment === 'test' ? test : sql<boolean>`not ${test}`;
}

/**
 * Makes the organisation's sandbox row exist (the first test key or test session does): rows of
 * the test environment reference it like live rows reference the organisation. Idempotent.
 */
export async function ensureSandbox(db: Db, orgId: string): Promise<string> {
  const id = dataSpaceOf(orgId, 'test');
  await sql`
    insert into organizations (id, slug, name, plan, live_org_id)
    select ${id}, ${id}, name, plan, id from organizations where id = ${orgId}
    on conflict (id) do nothing`.execute(db);
  return id;
}
