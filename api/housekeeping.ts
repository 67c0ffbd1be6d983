// Periodic clean-up every server process runs: idempotency keys past their 24 h window, expired
// virtual patches and IP rules, Shield events and rollups past their retention, scans and config
// syncs whose job died with its worker, old sync records and push deliveries, and spent sign-in
// links, identity-provider flows and remembered SAML assertions; and it reads the proof records of
// verified domains (organisations' and Shield sites') again. Each task is safe to run from many processes at once.
import { pruneTraffic } from '../gateway/traffic/partitions.ts';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../platform/db/database.ts';
import { sweepIdempotencyKeys } from '../platform/http/idempotency.ts';
import { failOrphanedScans } from './scans/run-scan.ts';
import { pruneEvents } from '../platform/events/event-store.ts';
import { failOrphanedSyncs, pruneSyncHistory } from './config-repos/store.ts';
import { sweepExpiredRules } from './shield/sweep.ts';
import { sweepLoginTokens } from './accounts/login/magic-links.ts';
import { sweepFlows } from './accounts/sign-in/flows.ts';
import { recheckDomains } from './accounts/people/domain-recheck.ts';
import { recheckSiteDomains } from './shield/domain-proof/recheck.ts';
import type { TxtLookup } from '../platform/net/txt-records.ts';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export interface PruneOptions {
  /** Rows one DELETE removes at most: short statements keep locks and WAL bursts small. */
  batchSize?: number | undefined;
  /** DELETEs one run issues at most; the next run carries on. */
  maxBatches?: number | undefined;
  now?: Date | undefined;
}

export interface PruneResult {
  events: number;
  rollups: number;
  /** The run stopped at `maxBatches` with old rows left. */
  more: boolean;
}

/**
 * Deletes Shield events and rollups older than `retentionDays` (0 keeps everything). The sites to
 * visit come from the rollups' minute index (shield_events has none on time alone). A site's
 * events go before its rollups, so a run cut short leaves rollups that lead the next run back.
 */
export async function pruneShieldEvents(db: Db, retentionDays: number, options: PruneOptions = {}): Promise<PruneResult> {
  const result: PruneResult = { events: 0, rollups: 0, more: false };
  if (retentionDays <= 0) return result;
  const batchSize = options.batchSize ?? 5_000;
  let budget = options.maxBatches ?? 200;
  const now = (options.now ?? new Date()).getTime();
  // On a minute boundary: an event is older than the cutoff exactly when its rollup minute is, so
  // what remains of a day is always consistent between the two tables.
  const cutoff = new Date(Math.floor((now - retentionDays * DAY_MS) / MINUTE_MS) * MINUTE_MS);

  const sites = await db.selectFrom('shield_event_rollups').select('site_id').distinct().where('minute', '<', cutoff).execute();
  for (const { site_id: siteId } of sites) {
    for (let done = false; !done; ) {
      if (budget-- <= 0) return { ...result, more: true };
      const deleted = await db
        .deleteFrom('shield_events')
        .where('id', 'in', (eb) => eb.selectFrom('shield_events').select('id').where('site_id', '=', siteId).where('occurred_at', '<', cutoff).limit(batchSize))
        .executeTakeFirst();
      const n = Number(deleted.numDeletedRows);
      result.events += n;
      done = n < batchSize;
    }
    for (let done = false; !done; ) {
      if (budget-- <= 0) return { ...result, more: true };
      // A batch is a set of minutes: at most `batchSize` of them, each with a row per action and rule kind.
      const deleted = await db
        .deleteFrom('shield_event_rollups')
        .where('site_id', '=', siteId)
        .where('minute', 'in', (eb) => eb.selectFrom('shield_event_rollups').select('minute').where('site_id', '=', siteId).where('minute', '<', cutoff).limit(batchSize))
        .executeTakeFirst();
      const n = Number(deleted.numDeletedRows);
      result.rollups += n;
      done = n === 0;
    }
  }
  return result;
}

export interface HousekeepingOptions {
  intervalMs: number;
  shieldEventRetentionDays: number;
  /** The traffic record's retention: days of metadata, hours of values (docs/impact-preview.md). */
  trafficRetention: { days: number; valueHours: number };
  /** Reads domain-proof records for the re-check of verified domains. */
  txt: TxtLookup;
  domainRecheckIntervalMs: number;
}

export function startHousekeeping(db: Db, log: FastifyBaseLogger, { intervalMs, shieldEventRetentionDays, trafficRetention, txt, domainRecheckIntervalMs }: HousekeepingOptions): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    Promise.all([sweepIdempotencyKeys(db), sweepExpiredRules(db), pruneShieldEvents(db, shieldEventRetentionDays), failOrphanedScans(db), failOrphanedSyncs(db), pruneSyncHistory(db), sweepLoginTokens(db), sweepFlows(db), pruneEvents(db), recheckDomains(db, txt, domainRecheckIntervalMs), recheckSiteDomains(db, txt, domainRecheckIntervalMs), pruneTraffic(db, trafficRetention)])
      .then(([keys, rules, shield, orphans, orphanSyncs, syncHistory, , , events, domains, siteDomains, trafficDays]) => {
        if (trafficDays.length > 0) log.info({ days: trafficDays }, 'housekeeping dropped traffic-record days past retention');
        if (keys + rules.patches + rules.ipRules + shield.events + shield.rollups + syncHistory + events > 0) {
          log.info({ idempotency_keys: keys, ...rules, shield_events: shield.events, shield_event_rollups: shield.rollups, sync_history: syncHistory, events }, 'housekeeping removed expired records');
        }
        if (domains.unverified > 0) log.warn({ domains: domains.unverified }, 'housekeeping: verified domains lost their proof record and admit nobody now');
        if (siteDomains.unverified > 0) log.warn({ sites: siteDomains.unverified }, 'housekeeping: Shield sites lost their domain-proof record and are unverified now');
        if (orphans + orphanSyncs > 0) log.warn({ scans: orphans, syncs: orphanSyncs }, 'housekeeping failed scans and syncs whose job ended without them');
      })
      .catch((err: unknown) => log.warn({ err }, 'housekeeping failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
