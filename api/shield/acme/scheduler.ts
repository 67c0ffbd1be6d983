// What gets ordered, and when (periodic work: runs where the job scheduler runs, on any number of
// nodes). Every AEGIS_ACME_CHECK_INTERVAL_MS it queues an order job for each live site in
// `tls.mode: acme` that has no certificate, or an ACME certificate expiring within
// AEGIS_ACME_RENEW_BEFORE_DAYS, unless its last failure's backoff has not run out or an order is
// already under way. Sandbox sites never get one, and a server with no TLS port orders nothing (it
// could not serve what it obtains).
//
// One order per domain at a time, across nodes: a claim locks the rows of every site with that
// domain (./domain-lock.ts), looks for an order of any of them still queued or
// running, and only then queues the job — whose dedupe key names the site and the order row's
// state, so the same claim can never queue two jobs — and marks the order pending, all in one
// transaction. The job queue's lease (FOR UPDATE SKIP LOCKED) then holds the order to one worker.
import { sql } from 'kysely';
import type { Db } from '../../../platform/db/database.ts';
import { inEnvironment } from '../../../platform/db/environments.ts';
import { enqueue } from '../../../platform/jobs/queue.ts';
import { announceEnqueued } from '../../../platform/jobs/signals.ts';
import { Ticker } from '../../../platform/jobs/ticker.ts';
import type { JobLogger } from '../../../platform/jobs/types.ts';
import { sweepExpiredChallenges } from './challenges.ts';
import { lockDomainSites } from './domain-lock.ts';
import { markPending } from './orders.ts';
import { ORDER_JOB, ORDER_JOB_MAX_ATTEMPTS, type AcmeSettings } from './settings.ts';

/** The job payload: only the site; the job reads the rest as it is when it runs. */
export type OrderJobPayload = { site_id: string };

const LIVE_JOB_STATES = ['queued', 'running'] as const;

interface DueSite {
  id: string;
  org_id: string;
  domain: string;
}

/** Sites whose certificate is missing or due and whose order may run now. */
function dueSites(db: Db, renewBeforeDays: number, limit: number): Promise<DueSite[]> {
  return db
    .selectFrom('shield_sites as s')
    .leftJoin('shield_certificates as c', 'c.site_id', 's.id')
    .leftJoin('shield_certificate_orders as o', 'o.site_id', 's.id')
    .leftJoin('jobs as j', 'j.id', 'o.job_id')
    .select(['s.id', 's.org_id', 's.domain'])
    .where(sql<string>`s.tls->>'mode'`, '=', 'acme')
    .where(inEnvironment('s.org_id', 'live'))
    // No certificate, or one of ours about to expire; an uploaded one is the owner's to replace.
    .where((eb) => eb.or([eb('c.id', 'is', null), eb.and([eb('c.source', '=', 'acme'), eb('c.not_after', '<=', sql<Date>`now() + make_interval(days => ${renewBeforeDays}::int)`)])]))
    .where((eb) =>
      eb.or([
        eb('o.site_id', 'is', null),
        eb.and([eb('o.status', '<>', 'pending'), eb.or([eb('o.next_attempt_at', 'is', null), eb('o.next_attempt_at', '<=', sql<Date>`now()`)])]),
        // Pending, but its job is gone or ended without settling it (its process died): take it up again.
        eb.and([eb('o.status', '=', 'pending'), eb.or([eb('j.id', 'is', null), eb('j.state', 'not in', [...LIVE_JOB_STATES])])]),
      ]),
    )
    .orderBy('s.id')
    .limit(limit)
    .execute();
}

/** Queues the site's order unless an order for its domain is under way; whether it did. */
async function claim(db: Db, site: DueSite): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const sharing = await lockDomainSites(trx, site.domain);
    const underWay = await trx
      .selectFrom('shield_certificate_orders as o')
      .innerJoin('jobs as j', 'j.id', 'o.job_id')
      .select('o.site_id')
      .where('o.site_id', 'in', sharing)
      .where('o.status', '=', 'pending')
      .where('j.state', 'in', [...LIVE_JOB_STATES])
      .executeTakeFirst();
    if (underWay) return false;
    // Read under the lock: the state this claim moves on from (its text keeps PostgreSQL's microseconds).
    const order = await trx.selectFrom('shield_certificate_orders').select(sql<string>`updated_at::text`.as('stamp')).where('site_id', '=', site.id).executeTakeFirst();
    const { job, created } = await enqueue(trx, {
      kind: ORDER_JOB,
      orgId: site.org_id,
      payload: { site_id: site.id } satisfies OrderJobPayload,
      maxAttempts: ORDER_JOB_MAX_ATTEMPTS,
      dedupeKey: `${ORDER_JOB}:${site.id}:${order?.stamp ?? `new:${Date.now()}`}`,
    });
    if (!created) return false;
    await markPending(trx, site, job.id);
    return true;
  });
}

/** One pass: expired challenge rows removed, due orders queued; returns how many were queued. */
export async function queueDueOrders(db: Db, settings: Pick<AcmeSettings, 'acmeRenewBeforeDays'>, batch = 50): Promise<number> {
  await sweepExpiredChallenges(db);
  let queued = 0;
  for (const site of await dueSites(db, settings.acmeRenewBeforeDays, batch)) if (await claim(db, site)) queued++;
  if (queued > 0) announceEnqueued(db);
  return queued;
}

export interface CertificateSchedulerOptions {
  db: Db;
  log: JobLogger;
  settings: Pick<AcmeSettings, 'acmeRenewBeforeDays' | 'acmeCheckIntervalMs' | 'shieldTlsPort'>;
}

/** Starts the periodic pass; a server without a TLS port runs none. */
export function startCertificateScheduler(options: CertificateSchedulerOptions): { stop(): Promise<void> } {
  if (options.settings.shieldTlsPort === undefined) return { stop: async () => undefined };
  const log = options.log.child({ component: 'acme-scheduler' });
  const ticker = new Ticker(
    () => queueDueOrders(options.db, options.settings),
    options.settings.acmeCheckIntervalMs,
    (err) => log.error({ err }, 'acme: looking for certificates to order failed'),
  ).start();
  return { stop: () => ticker.stop() };
}
