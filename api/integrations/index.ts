// The integrations module as the server uses it: its routes (connections, tickets, trackers'
// webhooks) and its job kinds (ticket creation and closing, pull-request checks). Source-control
// webhooks arrive through the existing /api/v1/webhooks/github|gitlab routes, which hand deliveries
// for a connection to the receiver made here.
import type { FastifyPluginAsync } from 'fastify';
import type { JobHandlers } from '../../platform/jobs/types.ts';
import type { OutboundPolicy } from '../../platform/net/outbound.ts';
import { pullRequestJobHandlers } from './pull-requests/jobs.ts';
import { pullRequestRoutes } from './pull-requests/routes.ts';
import { integrationRoutes, type IntegrationRoutesOptions } from './connections/routes.ts';
import type { IntegrationDeps } from './connections/sessions.ts';
import { ticketJobHandlers } from './tickets/jobs.ts';
import { ticketRoutes } from './tickets/routes.ts';
import { trackerWebhookRoutes, type InboundWebhookReceiver } from './webhooks.ts';

export { createConnectors, type Connectors } from './connections/connectors.ts';
export { cloneAccess, type CloneAccess } from './connections/clone-access.ts';
export { inboundWebhooks, type InboundWebhookReceiver } from './webhooks.ts';

export interface IntegrationsOptions extends IntegrationDeps {
  publicUrl: () => string;
  receiver: InboundWebhookReceiver;
  urlPolicy: IntegrationRoutesOptions['urlPolicy'];
}

export const integrationsPlugin: FastifyPluginAsync<IntegrationsOptions> = async (app, options) => {
  const { receiver, urlPolicy, ...deps } = options;
  await app.register(integrationRoutes, { ...deps, urlPolicy });
  await app.register(ticketRoutes, deps);
  await app.register(pullRequestRoutes, { db: deps.db });
  await app.register(trackerWebhookRoutes, { receiver });
};

export function integrationJobHandlers(deps: IntegrationDeps & { publicUrl: () => string; allowLocalSources: boolean; outbound?: OutboundPolicy; warmThreads?: boolean }): JobHandlers {
  return { ...ticketJobHandlers(deps), ...pullRequestJobHandlers(deps) };
}
