// The process-wide job kinds. A module that owns a kind registers it when imported; startJobs
// gives every worker it starts the kinds registered by then.
//
// - registerJobKind: a definition that needs nothing from the process (test kinds, pure work).
// - registerJobKindFactory: a definition built per startJobs from the process's database and
//   logger. A test process starts many servers, each on its own database, so a handler must not
//   close over one database at import time.
import type { Db } from '../db/database.ts';
import type { JobHandlers, JobKindDefinition, JobLogger } from './types.ts';

export interface JobKindDeps {
  db: Db;
  log: JobLogger;
}

export type JobKindFactory = (deps: JobKindDeps) => JobKindDefinition;

/** Kinds registered with registerJobKind (live: a Worker given this object sees later registrations). */
export const jobHandlers: JobHandlers = {};
const factories = new Map<string, JobKindFactory>();

function checkNew(kind: string, existing: unknown, incoming: unknown): void {
  if (!/^[a-z][a-z0-9_.-]{0,63}$/.test(kind)) throw new Error(`job kind "${kind}" must be lower-case letters, digits, '.', '_' or '-'`);
  // Registering the same thing again (a module imported twice, a test helper called per server) is fine.
  if (existing !== undefined && existing !== incoming) throw new Error(`job kind "${kind}" is already registered`);
}

export function registerJobKind<P extends object, R>(kind: string, definition: JobKindDefinition<P, R>): void {
  checkNew(kind, jobHandlers[kind] ?? factories.get(kind), definition);
  jobHandlers[kind] = definition as unknown as JobKindDefinition;
}

export function registerJobKindFactory<P extends object, R>(kind: string, factory: (deps: JobKindDeps) => JobKindDefinition<P, R>): void {
  checkNew(kind, jobHandlers[kind] ?? factories.get(kind), factory);
  factories.set(kind, factory as unknown as JobKindFactory);
}

/** Every registered kind, factories built for `deps`. */
export function buildJobHandlers(deps: JobKindDeps): JobHandlers {
  const handlers: JobHandlers = { ...jobHandlers };
  for (const [kind, factory] of factories) handlers[kind] = factory(deps);
  return handlers;
}
