// Cloud attack-surface discovery (docs/attack-surface.md): the AWS connect route, the inventory and
// its suggestions, the discovery job kind and the scheduler that queues it. PLACEHOLDER bodies
// (foundation) — filled in by the attack-surface work.
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { Db } from '../db/database.ts';
import type { OriginPolicy } from '../net/origin-policy.ts';
import type { JobHandlers } from '../jobs/types.ts';
import type { CloudSettings } from './providers/settings.ts';

export interface AttackSurfaceDeps {
  db: Db;
  cloud: CloudSettings;
}

export interface AttackSurfaceRouteOptions extends AttackSurfaceDeps {
  /** Checks the origin of a Shield site made from an asset, as POST /api/v1/shield/sites does. */
  originPolicy: OriginPolicy;
}

export const attackSurfacePlugin: FastifyPluginAsync<AttackSurfaceRouteOptions> = async () => {};

export function attackSurfaceJobHandlers(_deps: AttackSurfaceDeps): JobHandlers {
  return {};
}

/** Queues scheduled discoveries of every active cloud connection (one per interval). */
export class DiscoveryScheduler {
  constructor(_options: { db: Db; log: FastifyBaseLogger; tickMs?: number }) {}
  start(): this {
    return this;
  }
  async stop(): Promise<void> {}
}
