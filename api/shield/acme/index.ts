// Certificates from ACME (docs/shield-edge.md, "Certificates from ACME"): the order job kind and the
// periodic pass that queues orders, as api/process-jobs.ts hands them to the job system.
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { JobHandlers, PeriodicWork } from '../../../platform/jobs/index.ts';
import type { CertificateMetrics } from '../../../platform/metrics/metrics.ts';
import { orderJobHandlers } from './order-job.ts';
import { startCertificateScheduler } from './scheduler.ts';
import type { AcmeSettings } from './settings.ts';

export { ORDER_JOB } from './settings.ts';
export type { AcmeSettings } from './settings.ts';

export function acmeJobHandlers(deps: { db: Db; secretBox: SecretBox; settings: AcmeSettings; metrics?: CertificateMetrics | undefined }): JobHandlers {
  return orderJobHandlers(deps);
}

/** Orders certificates that are missing or due; nothing on a server without a TLS port. */
export function acmePeriodicWork(settings: AcmeSettings): PeriodicWork {
  return ({ db, log }) => startCertificateScheduler({ db, log, settings });
}
