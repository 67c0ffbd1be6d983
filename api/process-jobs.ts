// The job kinds a process runs, the same in `aegis serve` and `aegis worker`: scans and
// verify-fix, webhook deliveries, integrations (tickets, pull-request checks) and, when the process
// knows the API to act through, config-repository syncs; ACME certificate orders; and the periodic
// work that runs beside the scheduler. One place, so a worker never lacks a kind the server enqueues.
import type { ServerConfig } from './config.ts';
import { configRepoJobHandlers, type ConfigSync } from './config-repos/index.ts';
import type { SecretBox } from '../platform/crypto/secret-box.ts';
import type { Db } from '../platform/db/database.ts';
import { cloneAccess, createConnectors, integrationJobHandlers } from './integrations/index.ts';
import type { JobHandlers } from '../platform/jobs/types.ts';
import type { PeriodicWork } from '../platform/jobs/index.ts';
import { startShieldAlertCloser } from './events/shield-alerts.ts';
import { triageJobHandlers } from './ai/index.ts';
import { attackSurfaceJobHandlers } from './attack-surface/index.ts';
import { scanJobHandlers } from './scans/index.ts';
import { webhookJobHandlers } from './webhooks/delivery-job.ts';
import { serverTenantPolicy } from './outbound-policy.ts';
import { acmeJobHandlers, acmePeriodicWork } from './shield/acme/index.ts';
import type { CertificateMetrics } from '../platform/metrics/metrics.ts';

export interface ProcessJobOptions {
  db: Db;
  secretBox: SecretBox;
  config: ServerConfig;
  /** Aegis's public URL (links in tickets and checks). */
  publicUrl: () => string;
  /** Config-repo syncs act through this API with this engine; both or neither. */
  configRepos?: { apiUrl: string; configSync: ConfigSync } | undefined;
  /** Where ACME orders are counted (the process's metrics, when it serves them). */
  certificateMetrics?: CertificateMetrics | undefined;
}

export function processJobHandlers({ db, secretBox, config, publicUrl, configRepos, certificateMetrics }: ProcessJobOptions): JobHandlers {
  // Clones and provider calls on tenants' behalf connect under this (net/outbound.ts).
  const outbound = serverTenantPolicy(config);
  const integrationDeps = { db, secretBox, connectors: createConnectors(config.providers, outbound) };
  const clones = cloneAccess(integrationDeps, config.providers);
  return {
    ...scanJobHandlers({ db, allowLocalSources: config.allowLocalSources, allowPrivateTargets: config.allowPrivateTargets, outbound, secretBox, warmThreads: config.warmScanThreads, cloneAccess: clones }),
    ...webhookJobHandlers({ db, secretBox, config }),
    ...integrationJobHandlers({ ...integrationDeps, publicUrl, allowLocalSources: config.allowLocalSources, outbound, warmThreads: config.warmScanThreads }),
    ...triageJobHandlers({ ...integrationDeps, limits: config.triage }),
    ...attackSurfaceJobHandlers({ db, cloud: config.cloud }),
    ...acmeJobHandlers({ db, secretBox, settings: config, metrics: certificateMetrics }),
    ...(configRepos ? configRepoJobHandlers({ db, allowLocalSources: config.allowLocalSources, outbound, secretBox, apiUrl: configRepos.apiUrl, configSync: configRepos.configSync, cloneAccess: clones }) : {}),
  };
}

/** Periodic work that runs where the scheduler runs: Shield alert windows closing into events; ACME certificates ordered and renewed. */
export function processPeriodicWork(config: ServerConfig): PeriodicWork[] {
  return [({ db, log }) => startShieldAlertCloser({ db, log, windowMs: config.shieldAlertWindowMs }), acmePeriodicWork(config)];
}
