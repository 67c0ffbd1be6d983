// The `shield.certificate.order` job: one ACME order for one site, queued by ./scheduler.ts.
// The site is read as it is now (a site no longer in `tls.mode: acme`, or gone, drops the order).
// Challenge answers are written for the gateways and removed when the order ends, whichever way.
// The outcome is written in the transaction that completes the job, only while this run holds the
// job's lease: the certificate replaces the served one, or the failure is recorded with its backoff
// and a `shield.certificate.failed` event — a failure never touches the certificate being served.
// A run cut short (the worker stopping, the lease lost) writes nothing and the job runs again.
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import { environmentOf } from '../../../platform/db/environments.ts';
import { announceDeliveries, recordEvents } from '../../../platform/events/event-store.ts';
import type { Job, JobContext, JobHandlers, JobKindDefinition } from '../../../platform/jobs/types.ts';
import type { CertificateMetrics } from '../../../platform/metrics/metrics.ts';
import { storeCertificate } from '../certificates/store.ts';
import { recordDomainProof } from '../domain-proof/record.ts';
import { accountClient } from './account.ts';
import { publishChallenge, withdrawChallenges } from './challenges.ts';
import { lockDomainSites } from './domain-lock.ts';
import { failureEvent } from './failure-event.ts';
import { issueCertificate, type Issued } from './issue.ts';
import { markAbandoned, markFailed, markIssued } from './orders.ts';
import type { OrderJobPayload } from './scheduler.ts';
import { ORDER_JOB, type AcmeSettings } from './settings.ts';
import { openAcmeTransport } from './transport.ts';

export interface OrderJobDeps {
  db: Db;
  secretBox: SecretBox;
  settings: AcmeSettings;
  metrics?: CertificateMetrics | undefined;
}

interface OrderSite {
  id: string;
  org_id: string;
  domain: string;
}

/** The site when it still wants a certificate from ACME: live, in `tls.mode: acme`. */
async function siteToOrder(db: Db, siteId: string): Promise<OrderSite | undefined> {
  const site = await db.selectFrom('shield_sites').select(['id', 'org_id', 'domain', 'tls']).where('id', '=', siteId).executeTakeFirst();
  if (!site || site.tls.mode !== 'acme' || environmentOf(site.org_id) !== 'live') return undefined;
  return site;
}

/** The error as a line: what the CA or the order said, never a request or a key. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').trim() || 'the order failed without a reason';
}

/** Talks to the CA: the account, the order, the challenges (withdrawn at the end). */
async function obtain(deps: OrderJobDeps, site: OrderSite, signal: AbortSignal): Promise<Issued> {
  const { db, secretBox, settings } = deps;
  const published: string[] = [];
  const transport = await openAcmeTransport(settings.acmeCaCertsPath);
  try {
    return await transport.run(signal, async () => {
      const client = await accountClient(db, secretBox, { directoryUrl: settings.acmeDirectoryUrl, email: settings.acmeEmail });
      return issueCertificate(client, {
        domain: site.domain,
        challenges: settings.acmeChallenges,
        answer: async (challenge) => {
          published.push(await publishChallenge(db, secretBox, challenge));
        },
      });
    });
  } finally {
    transport.close();
    await withdrawChallenges(db, published);
  }
}

async function runOrder(deps: OrderJobDeps, job: Job<OrderJobPayload>, ctx: JobContext): Promise<Record<string, unknown>> {
  const { db, secretBox } = deps;
  const siteId = job.payload.site_id;
  const site = await siteToOrder(db, siteId);
  if (!site) {
    await ctx.completeWith((trx) => markAbandoned(trx, siteId, job.id));
    return { site_id: siteId, result: 'abandoned' };
  }
  let issued: Issued | undefined;
  let reason = '';
  try {
    issued = await obtain(deps, site, ctx.signal);
  } catch (error) {
    // Stopped or taken over: not a failure of the order; the job runs again.
    if (ctx.signal.aborted) throw error;
    reason = reasonOf(error);
  }

  if (issued) {
    const done = issued;
    const outcome = await ctx.completeWith(async (trx) => {
      // Locked first, in the order domain proofs lock them: storing and proving below lock them too.
      await lockDomainSites(trx, site.domain);
      // The owner may have changed their mind while the CA validated: an uploaded certificate or
      // another mode stays (storeCertificate returns null for a site no longer in acme mode).
      const current = await trx.selectFrom('shield_certificates').select('source').where('site_id', '=', siteId).executeTakeFirst();
      const stored = current?.source === 'custom' ? null : await storeCertificate(trx, secretBox, { siteId, orgId: site.org_id, source: 'acme', certificatePem: done.certificatePem, privateKeyPem: done.privateKeyPem });
      if (!stored) {
        await markAbandoned(trx, siteId, job.id);
        return undefined;
      }
      await markIssued(trx, siteId, job.id);
      // The CA reached this installation at the domain: Part C's rules decide whether that proves control.
      const proof = await recordDomainProof(trx, { siteId, domainProof: deps.settings.shieldDomainProof }, 'acme');
      return { proved: proof.verified };
    });
    if (!outcome) return { site_id: siteId, result: 'abandoned' };
    deps.metrics?.order('issued');
    const facts = { fingerprint: done.fingerprint, not_after: done.notAfter.toISOString() };
    ctx.log.info({ site_id: siteId, domain: site.domain, ...facts, validated: done.validated, domain_proved: outcome.proved }, 'acme: certificate obtained');
    return { site_id: siteId, result: 'issued', ...facts };
  }

  const failed = await ctx.completeWith(async (trx) => {
    const failure = await markFailed(trx, siteId, job.id, reason);
    if (!failure) return undefined;
    const { deliveries } = await recordEvents(trx, [failureEvent(site, failure)]);
    return { ...failure, deliveries };
  });
  deps.metrics?.order('failed');
  if (failed) announceDeliveries(db, failed.deliveries);
  ctx.log.warn({ site_id: siteId, domain: site.domain, attempts: failed?.attempts, next_attempt_at: failed?.nextAttemptAt.toISOString(), error: reason }, 'acme: certificate order failed; the served certificate (if any) stays');
  return { site_id: siteId, result: 'failed', error: reason, next_attempt_at: failed?.nextAttemptAt.toISOString() ?? null };
}

export function orderJobHandlers(deps: OrderJobDeps): JobHandlers {
  const definition: JobKindDefinition<OrderJobPayload> = {
    // Orders mostly wait on the CA's validation; a few at once per worker.
    concurrency: 2,
    run: (job, ctx) => runOrder(deps, job, ctx),
  };
  return { [ORDER_JOB]: definition as JobKindDefinition };
}
