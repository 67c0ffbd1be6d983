// AI triage (docs/triage.md): its routes (POST/GET /api/v1/vulnerabilities/:id/triage, GET
// /api/v1/triage/usage) and its job kind (`triage.run`). Automatic triage of new findings is queued
// by the event store (./auto.ts).
import type { FastifyPluginAsync } from 'fastify';
import type { ServerConfig } from '../config.ts';
import type { IntegrationDeps } from '../integrations/connections/sessions.ts';
import type { JobHandlers } from '../../platform/jobs/types.ts';
import { triageJobs } from './jobs.ts';
import { triageRoutes } from './routes.ts';

export interface TriageDeps extends IntegrationDeps {
  limits: ServerConfig['triage'];
}

export const triagePlugin: FastifyPluginAsync<TriageDeps> = async (app, deps) => {
  await app.register(triageRoutes, deps);
};

export function triageJobHandlers(deps: TriageDeps): JobHandlers {
  return triageJobs(deps);
}
