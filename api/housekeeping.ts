// Periodic clean-up every server process runs: idempotency keys past their 24 h window, and
// expired virtual patches and IP rules. Each task is one DELETE, safe to run from many processes.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from './db/database.ts';
import { sweepIdempotencyKeys } from './http/idempotency.ts';
import { sweepExpiredRules } from './shield/sweep.ts';

export function startHousekeeping(db: Db, log: FastifyBaseLogger, intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    Promise.all([sweepIdempotencyKeys(db), sweepExpiredRules(db)])
      .then(([keys, rules]) => {
        if (keys + rules.patches + rules.ipRules > 0) log.info({ idempotency_keys: keys, ...rules }, 'housekeeping removed expired records');
      })
      .catch((err: unknown) => log.warn({ err }, 'housekeeping failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
