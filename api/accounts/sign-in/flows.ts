// Sign-ins started at an identity provider (Google, an organisation's OIDC or SAML IdP). The row
// keeps what the callback must check — PKCE verifier, nonce, SAML request id — keyed by the digest
// of the `state` the browser carries there and back. A flow lives 10 minutes and finishes once.
import { sql } from 'kysely';
import { hashToken, newToken } from '../../../platform/crypto/tokens.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { AuthFlowRow, FlowIdentity } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';

export const FLOW_LIFETIME_MS = 10 * 60 * 1000;
export type FlowKind = 'google' | 'sso_oidc' | 'sso_saml' | 'integration';
/** `login` starts a session; `test` is an admin's "Try login", which only reports; `connect` completes a provider connection. */
export type FlowPurpose = 'login' | 'test' | 'connect';

export interface NewFlow {
  kind: FlowKind;
  purpose: FlowPurpose;
  orgId?: string | null;
  /** Who started a test flow. */
  userId?: string | null;
  codeVerifier?: string | null;
  nonce?: string | null;
  /** The SAML AuthnRequest's ID (checked against InResponseTo). */
  requestId?: string | null;
  /** The pending provider connection a `connect` flow completes. */
  integrationId?: string | null;
}

export async function startFlow(db: Db, flow: NewFlow): Promise<{ state: string; row: AuthFlowRow }> {
  const state = newToken();
  const row = await db
    .insertInto('auth_flows')
    .values({
      id: newId('flw'),
      state_hash: hashToken(state),
      kind: flow.kind,
      purpose: flow.purpose,
      org_id: flow.orgId ?? null,
      user_id: flow.userId ?? null,
      code_verifier: flow.codeVerifier ?? null,
      nonce: flow.nonce ?? null,
      request_id: flow.requestId ?? null,
      integration_id: flow.integrationId ?? null,
      expires_at: new Date(Date.now() + FLOW_LIFETIME_MS),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { state, row };
}

/** Sets the SAML request id once the AuthnRequest is built (it needs the flow's state first). */
export async function setFlowRequestId(db: Db, flowId: string, requestId: string): Promise<void> {
  await db.updateTable('auth_flows').set({ request_id: requestId }).where('id', '=', flowId).execute();
}

/** Finishes the flow `state` names, once; undefined when unknown, finished already or expired. */
export async function finishFlow(db: Db, state: string, kind: FlowKind): Promise<AuthFlowRow | undefined> {
  return db
    .updateTable('auth_flows')
    .set({ used_at: sql<Date>`now()` })
    .where('state_hash', '=', hashToken(state))
    .where('kind', '=', kind)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Keeps what the identity provider vouched for on a finished flow, for the browser that started
 * it to complete (a SAML response arrives as a cross-site post, which carries no flow cookie).
 */
export async function holdIdentity(db: Db, flowId: string, identity: FlowIdentity): Promise<void> {
  await db.updateTable('auth_flows').set({ identity: JSON.stringify(identity) }).where('id', '=', flowId).execute();
}

/** Completes, once, the flow `state` names that holds an identity; undefined when there is none to complete. */
export async function completeHeldFlow(db: Db, state: string, kind: FlowKind): Promise<(AuthFlowRow & { identity: FlowIdentity }) | undefined> {
  const row = await db
    .updateTable('auth_flows')
    .set({ completed_at: sql<Date>`now()` })
    .where('state_hash', '=', hashToken(state))
    .where('kind', '=', kind)
    .where('used_at', 'is not', null)
    .where('completed_at', 'is', null)
    .where('identity', 'is not', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst();
  return row?.identity ? { ...row, identity: row.identity } : undefined;
}

/** Deletes flows and remembered SAML assertions past their life (housekeeping). */
export async function sweepFlows(db: Db): Promise<void> {
  await db.deleteFrom('auth_flows').where('expires_at', '<', sql<Date>`now()`).execute();
  await db.deleteFrom('saml_assertions').where('expires_at', '<', sql<Date>`now()`).execute();
}
