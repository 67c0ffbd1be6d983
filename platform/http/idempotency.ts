// Idempotency-Key on every mutating route (spec 4.11.1, DESIGN §4). The first request with a key
// claims it (a row in state `pending`); its final status and body are stored when it is answered;
// a repeat within 24 h gets that answer again without the route running. A different request under
// the same key is 422, a repeat while the first is still in flight is 409. 5xx answers release the
// key so the client can retry. Keys are scoped to the organisation. Stored bodies are sealed: some
// answers carry a secret shown once (a new API key, a webhook signing secret), and the database must
// not keep a readable copy of it.
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { sql } from 'kysely';
import type { FastifyPluginAsync } from 'fastify';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import { ApiError, badRequest, conflict } from './errors.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A claim older than this whose request never finished (process died) may be taken over. */
const STALE_PENDING_MS = 2 * 60 * 1000;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim: { orgId: string; key: string } | null;
  }
}

/** What makes two requests "the same": method, URL and body. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  const hash = createHash('sha256').update(`${method} ${url}\n`);
  if (typeof body === 'string' || Buffer.isBuffer(body)) hash.update(body);
  else hash.update(JSON.stringify(body ?? null));
  return hash.digest('hex');
}

/** Claims the key for this request; returns the stored row when someone else holds it. */
async function claim(db: Db, orgId: string, key: string, print: string) {
  const now = new Date();
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({ org_id: orgId, key, fingerprint: print, state: 'pending', created_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  if (inserted) return null;
  // Take over a key whose stored answer is past the window, or whose first request died pending.
  const takenOver = await db
    .updateTable('idempotency_keys')
    .set({ fingerprint: print, state: 'pending', response_status: null, response_type: null, response_body: null, created_at: now })
    .where('org_id', '=', orgId)
    .where('key', '=', key)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)),
        eb.and([eb('state', '=', 'pending'), eb('created_at', '<', new Date(now.getTime() - STALE_PENDING_MS))]),
      ]),
    )
    .returning('key')
    .executeTakeFirst();
  if (takenOver) return null;
  return db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();
}

async function release(db: Db, claimed: { orgId: string; key: string }): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('org_id', '=', claimed.orgId).where('key', '=', claimed.key).where('state', '=', 'pending').execute();
}

export interface IdempotencyOptions {
  db: Db;
  secretBox: SecretBox;
}

/** Binds a sealed body to its key, so a sealed body copied to another key does not open. */
const sealContext = (orgId: string, key: string) => `idempotency:${orgId}:${key}`;

const idempotencyPlugin: FastifyPluginAsync<IdempotencyOptions> = async (app, { db, secretBox }) => {
  app.decorateRequest('idempotencyClaim', null);

  app.addHook('preHandler', async (request, reply) => {
    if (!MUTATING.has(request.method) || !request.principal) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || !KEY_FORMAT.test(key)) throw badRequest('Idempotency-Key must be 1–255 visible ASCII characters', { field: 'Idempotency-Key' });
    const orgId = request.principal.orgId;
    const print = requestFingerprint(request.method, request.url, request.body);
    const existing = await claim(db, orgId, key, print);
    if (!existing) {
      request.idempotencyClaim = { orgId, key };
      return;
    }
    if (existing.fingerprint !== print) {
      throw new ApiError(422, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different request', { idempotency_key: key });
    }
    if (existing.state === 'pending' || existing.response_status === null) {
      throw conflict('a request with this Idempotency-Key is still being processed; retry later', { idempotency_key: key });
    }
    let body: string | undefined;
    try {
      body = existing.response_body === null ? undefined : secretBox.open(existing.response_body, sealContext(orgId, key));
    } catch {
      throw conflict('the stored answer for this Idempotency-Key cannot be read (the server key changed); use a new key', { idempotency_key: key });
    }
    reply.header('Idempotent-Replayed', 'true');
    if (existing.response_type) reply.type(existing.response_type);
    return reply.code(existing.response_status).send(body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claimed = request.idempotencyClaim;
    if (!claimed) return payload;
    request.idempotencyClaim = null;
    const storable = typeof payload === 'string' || payload === null || payload === undefined || Buffer.isBuffer(payload);
    if (reply.statusCode >= 500 || !storable) {
      await release(db, claimed);
      return payload;
    }
    const contentType = reply.getHeader('content-type');
    await db
      .updateTable('idempotency_keys')
      .where('org_id', '=', claimed.orgId)
      .where('key', '=', claimed.key)
      .where('state', '=', 'pending')
      .set({
        state: 'done',
        response_status: reply.statusCode,
        response_type: typeof contentType === 'string' ? contentType : null,
        response_body: payload === null || payload === undefined ? null : secretBox.seal(payload.toString(), sealContext(claimed.orgId, claimed.key)),
      })
      .execute();
    return payload;
  });

  // A request that never reached onSend (client went away mid-handler) must not hold its key.
  app.addHook('onResponse', async (request) => {
    const claimed = request.idempotencyClaim;
    if (claimed) await release(db, claimed);
  });
};

export async function sweepIdempotencyKeys(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - interval '24 hours'`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export default fp(idempotencyPlugin, { name: 'aegis-idempotency', dependencies: ['aegis-auth'] });
