// Cloud attack-surface discovery (docs/attack-surface.md): the AWS connect route, the inventory and
// its suggestions, the discovery job kind and the scheduler that queues it.
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../../platform/db/database.ts';
import type { OriginPolicy } from '../../platform/net/origin-policy.ts';
import type { EdgeSettings } from '../shield/sites/edge-settings.ts';
import type { JobHandlers } from '../../platform/jobs/types.ts';
import { awsConnectRoutes } from './connect-routes.ts';
import { discoveryJobHandlers } from './jobs.ts';
import { createCloudConnectors, type CloudConnectors } from './providers/registry.ts';
import type { CloudSettings } from './providers/settings.ts';
import { inventoryRoutes } from './routes.ts';

export { DiscoveryScheduler, type DiscoverySchedulerOptions } from './scheduler.ts';
export { recordDiscovery, type DiscoveryCounts } from './inventory.ts';
export { DISCOVER_JOB } from './store.ts';

export interface AttackSurfaceDeps {
  db: Db;
  cloud: CloudSettings;
  /** Built from `cloud` unless given. */
  connectors?: CloudConnectors | undefined;
}

export interface AttackSurfaceRouteOptions extends AttackSurfaceDeps {
  /** Checks the origin of a Shield site made from an asset, as POST /api/v1/shield/sites does. */
  originPolicy: OriginPolicy;
  /** The TLS default and domain-proof settings a new site's answer depends on. */
  edge: EdgeSettings;
}

export const attackSurfacePlugin: FastifyPluginAsync<AttackSurfaceRouteOptions> = async (app, options) => {
  const connectors = options.connectors ?? createCloudConnectors(options.cloud);
  await app.register(awsConnectRoutes, { db: options.db, connectors });
  await app.register(inventoryRoutes, { db: options.db, originPolicy: options.originPolicy, edge: options.edge });
};

export function attackSurfaceJobHandlers(deps: AttackSurfaceDeps): JobHandlers {
  return discoveryJobHandlers(deps);
}
