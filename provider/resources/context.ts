// What resources need from the configured provider, and how failures become diagnostics.
// Resources are built before ConfigureProvider runs, so they reach the connection through a
// getter that fails with a clear message if Terraform (or a test) calls them too early.
import type { AegisClient } from '../../client/client.ts';
import { AegisApiError } from '../../client/client.ts';
import type { ResourceApi } from '../../reconciler/live/resources.ts';
import type { AttributePath, Diagnostic } from '../framework/contract.ts';
import { errorMessage } from '../../schemas/json-value.ts';
import type { ImpactPreviewer } from './impact.ts';

export interface Connection {
  client: AegisClient;
  api: ResourceApi;
  /** Plan-time impact previews of Shield changes; without it, plans show none. */
  impact?: ImpactPreviewer;
}

export type Connect = () => Connection;

export class NotConfiguredError extends Error {
  constructor() {
    super('the provider is not configured: set api_url and api_key (or AEGIS_API_URL and AEGIS_API_KEY)');
  }
}

/** Maps an API field name (`labels.team`, `events[0]`, `config.scope`) to an attribute path; undefined when no attribute carries it. */
export type FieldToPath = (field: string) => AttributePath | undefined;

interface FieldProblem {
  field: string;
  message: string;
}

function fieldProblems(details: Record<string, unknown>): FieldProblem[] {
  const fields = details.fields;
  if (!Array.isArray(fields)) return [];
  return fields.flatMap((entry: unknown): FieldProblem[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { field, message } = entry as { field?: unknown; message?: unknown };
    return typeof field === 'string' ? [{ field, message: typeof message === 'string' ? message : 'is invalid' }] : [];
  });
}

/** One diagnostic per failing field the API named (aimed at its attribute), else one for the whole call. */
export function errorDiagnostics(summary: string, error: unknown, toPath: FieldToPath = () => undefined): Diagnostic[] {
  if (error instanceof AegisApiError) {
    const problems = fieldProblems(error.details);
    if (problems.length > 0) {
      return problems.map(({ field, message }) => {
        const attribute = toPath(field);
        return { severity: 'error', summary, detail: `${field} ${message} (${error.request}: ${error.status} ${error.code})`, ...(attribute ? { attribute } : {}) };
      });
    }
    return [{ severity: 'error', summary, detail: error.message }];
  }
  return [{ severity: 'error', summary, detail: errorMessage(error) }];
}

export const isNotFound = (error: unknown): boolean => error instanceof AegisApiError && error.status === 404;
