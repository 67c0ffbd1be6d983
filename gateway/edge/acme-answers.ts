// What the gateway answers while an ACME CA validates an order (api/shield/acme writes the
// `acme_challenges` rows; every gateway process answers from them, so whichever node the CA reaches
// answers):
//
//   HTTP-01 (RFC 8555 §8.3): `GET /.well-known/acme-challenge/<token>` on the plain listener, for
//   the row with that token whose domain is the request's Host and which has not expired: the key
//   authorization as text/plain. Answered before any site lookup, so a site that does not serve
//   yet (its domain not proved) can still obtain its certificate.
//   TLS-ALPN-01 (RFC 8737): a handshake offering ALPN `acme-tls/1` for a name gets that row's
//   self-signed certificate (its key sealed, context `acme-challenge:<id>`).
//
// Both read the database on each request: they are rare, and a row must be answered the moment it
// is written. A flood of such requests is bounded: at most LOOKUPS_IN_FLIGHT at once per process;
// past that an HTTP-01 request goes on to the ordinary pipeline and a handshake is refused.
import type { SecureContext } from 'node:tls';
import { sql } from 'kysely';
import { open } from '../../platform/crypto/secret-box.ts';
import type { Db } from '../../platform/db/database.ts';
import { certificateContext } from './tls-options.ts';

export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
/** base64url tokens (RFC 8555 §8.3: at least 128 bits); anything else is no token of ours. */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;
const LOOKUPS_IN_FLIGHT = 16;

export const challengeKeyContext = (id: string): string => `acme-challenge:${id}`;

export class AcmeAnswers {
  #inFlight = 0;

  constructor(
    private readonly db: Db,
    private readonly serverKey: Buffer,
  ) {}

  /** The key authorization for `token` on `domain` (HTTP-01), or null: no such live row, or too many lookups at once. */
  async http01(domain: string, token: string): Promise<string | null> {
    if (!TOKEN.test(token)) return null;
    return this.#bounded(async () => {
      const row = await this.db
        .selectFrom('acme_challenges')
        .select('key_authorization')
        .where('type', '=', 'http-01')
        .where('token', '=', token)
        .where('domain', '=', domain)
        .where('expires_at', '>', sql<Date>`now()`)
        .executeTakeFirst();
      return row?.key_authorization ?? null;
    });
  }

  /** The TLS-ALPN-01 certificate for `domain` as a TLS context, or null. */
  async tlsAlpn01(domain: string): Promise<SecureContext | null> {
    return this.#bounded(async () => {
      const row = await this.db
        .selectFrom('acme_challenges')
        .select(['id', 'certificate_pem', 'private_key_sealed'])
        .where('type', '=', 'tls-alpn-01')
        .where('domain', '=', domain)
        .where('expires_at', '>', sql<Date>`now()`)
        .where('certificate_pem', 'is not', null)
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      if (!row?.certificate_pem || !row.private_key_sealed) return null;
      return certificateContext(row.certificate_pem, open(this.serverKey, row.private_key_sealed, challengeKeyContext(row.id)));
    });
  }

  async #bounded<T>(work: () => Promise<T | null>): Promise<T | null> {
    if (this.#inFlight >= LOOKUPS_IN_FLIGHT) return null;
    this.#inFlight++;
    try {
      return await work();
    } finally {
      this.#inFlight--;
    }
  }
}
