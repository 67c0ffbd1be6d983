// AI triage (docs/triage.md): its routes (POST /api/v1/vulnerabilities/:id/triage, usage) and its
// job kind. PLACEHOLDER bodies (foundation) — filled in by the triage work.
import type { FastifyPluginAsync } from 'fastify';
import type { ServerConfig } from '../config.ts';
import type { IntegrationDeps } from '../integrations/sessions.ts';
import type { JobHandlers } from '../jobs/types.ts';

export interface TriageDeps extends IntegrationDeps {
  limits: ServerConfig['triage'];
}

export const triagePlugin: FastifyPluginAsync<TriageDeps> = async () => {};

export function triageJobHandlers(_deps: TriageDeps): JobHandlers {
  return {};
}
