// The append-only audit trail. Callers pass the transaction that makes the change, so an action and
// its record commit together or not at all.
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../api/accounts/auth/principal.ts';
import type { Db } from './db/database.ts';
import type { AuditEventRow } from './db/schema.ts';
import { newId } from './ids.ts';

export type { Actor };

export interface AuditEntry {
  orgId: string;
  actor: Actor;
  action: string;
  target?: { type: string; id: string };
  ip?: string | null;
  metadata?: Record<string, unknown>;
}

export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: newId('aud'),
      org_id: entry.orgId,
      actor_type: entry.actor.type,
      actor_id: entry.actor.id,
      action: entry.action,
      target_type: entry.target?.type ?? null,
      target_id: entry.target?.id ?? null,
      ip: entry.ip ?? null,
      metadata: JSON.stringify(entry.metadata ?? {}),
    })
    .execute();
}

/** Records an action taken by the caller of `request` (actor and IP come from the request). */
export async function auditRequest(
  db: Db,
  request: FastifyRequest,
  entry: { action: string; target?: { type: string; id: string }; metadata?: Record<string, unknown> },
): Promise<void> {
  const principal = request.principal;
  if (!principal) throw new Error('auditRequest needs an authenticated request');
  await recordAudit(db, { orgId: principal.orgId, actor: principal.actor, ip: request.ip, ...entry });
}

export interface AuditQuery {
  orgId: string;
  after: string | null;
  limit: number;
  actors?: string[] | undefined;
  actions?: string[] | undefined;
  /** Target ids (an API key id, a user id, …). */
  targets?: string[] | undefined;
  /** created_at >= since. */
  since?: Date | undefined;
  /** created_at < until. */
  until?: Date | undefined;
}

export async function listAudit(db: Db, q: AuditQuery): Promise<AuditEventRow[]> {
  let query = db.selectFrom('audit_events').selectAll().where('org_id', '=', q.orgId);
  if (q.after) query = query.where('id', '<', q.after);
  if (q.actors) query = query.where('actor_id', 'in', q.actors);
  if (q.actions) query = query.where('action', 'in', q.actions);
  if (q.targets) query = query.where('target_id', 'in', q.targets);
  if (q.since) query = query.where('created_at', '>=', q.since);
  if (q.until) query = query.where('created_at', '<', q.until);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}
