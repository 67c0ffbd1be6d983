// What the gateways answer while the CA validates an order (`acme_challenges`; the gateway reads
// the rows, gateway/edge): HTTP-01 (RFC 8555 §8.3) is the token and its key authorization, served at
// /.well-known/acme-challenge/<token> on the plain port; TLS-ALPN-01 (RFC 8737) is a self-signed
// certificate for the domain carrying the critical acmeIdentifier extension (the SHA-256 of the key
// authorization), served to connections that offer ALPN `acme-tls/1`, with its key sealed and bound
// to the row. Rows go when their order ends; a crashed order's rows expire.
import { sql } from 'kysely';
import * as acme from 'acme-client';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { AcmeChallengeType } from '../../../platform/db/schema.ts';
import { newId } from '../../../platform/ids.ts';
import { newEcdsaKey } from './keys.ts';
import { CHALLENGE_TTL_MS } from './settings.ts';

export interface ChallengeToAnswer {
  type: AcmeChallengeType;
  domain: string;
  token: string;
  keyAuthorization: string;
  /** The authorization it belongs to (TLS-ALPN-01's certificate names its identifier). */
  authorization: acme.Authorization;
}

/** The key sealed in a TLS-ALPN-01 row is bound to it. */
export const challengeKeyContext = (id: string): string => `acme-challenge:${id}`;

/** Stores the answer to one challenge for the gateways; returns the row's id. */
export async function publishChallenge(db: Db, box: SecretBox, challenge: ChallengeToAnswer): Promise<string> {
  const id = newId('acmech');
  let certificate: { pem: string; keySealed: string } | null = null;
  if (challenge.type === 'tls-alpn-01') {
    const key = newEcdsaKey();
    // acme-client's own RFC 8737 certificate (acmeIdentifier extension, critical; the domain as its only name).
    const [, pem] = await acme.crypto.createAlpnCertificate(challenge.authorization, challenge.keyAuthorization, key);
    certificate = { pem: pem.toString(), keySealed: box.seal(key, challengeKeyContext(id)) };
  }
  await db
    .insertInto('acme_challenges')
    .values({
      id,
      domain: challenge.domain,
      type: challenge.type,
      token: challenge.token,
      key_authorization: challenge.keyAuthorization,
      certificate_pem: certificate?.pem ?? null,
      private_key_sealed: certificate?.keySealed ?? null,
      expires_at: new Date(Date.now() + CHALLENGE_TTL_MS),
    })
    .execute();
  return id;
}

/** Removes an order's challenge rows once the order ended, whichever way. */
export async function withdrawChallenges(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('acme_challenges').where('id', 'in', [...ids]).execute();
}

/** Removes rows whose order never withdrew them (its process died); returns how many. */
export async function sweepExpiredChallenges(db: Db): Promise<number> {
  const deleted = await db.deleteFrom('acme_challenges').where('expires_at', '<', sql<Date>`now()`).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
