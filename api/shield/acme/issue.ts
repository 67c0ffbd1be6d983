// One ACME order for one domain (RFC 8555 §7.4): create the order, answer each authorization still
// pending with the most preferred challenge the CA offers (AEGIS_ACME_CHALLENGES), wait for the CA
// to validate it, then finalize with a CSR for a new key, download the chain and check it (for this
// key, covering the domain). Runs under an ACME transport; stores nothing but the challenge answers
// (through `answer`).
import * as acme from 'acme-client';
import { covers, keyMatches, parseChain, parsePrivateKey } from '../../../platform/crypto/certificates.ts';
import type { AcmeChallengeType } from '../../../platform/db/schema.ts';
import type { ChallengeToAnswer } from './challenges.ts';
import { newEcdsaKey } from './keys.ts';

export interface IssueRequest {
  domain: string;
  /** Challenge types in order of preference. */
  challenges: readonly AcmeChallengeType[];
  /** Makes the gateways answer a challenge (./challenges.ts publishChallenge). */
  answer(challenge: ChallengeToAnswer): Promise<void>;
}

/** A challenge the CA validated: its type and token (public: the CA fetches the token in the clear; never the key authorization). */
export interface ValidatedChallenge {
  type: AcmeChallengeType;
  token: string;
}

export interface Issued {
  /** The leaf first, then the CA's chain (PEM). */
  certificatePem: string;
  privateKeyPem: string;
  /** The challenges the CA validated in this order, by type and token (none when it reused earlier validations of the account). */
  validated: ValidatedChallenge[];
  fingerprint: string;
  notAfter: Date;
}

/** The CA's challenge of the first preferred type it offers. */
function pick(authorization: acme.Authorization, preference: readonly AcmeChallengeType[]) {
  for (const type of preference) {
    const found = authorization.challenges.find((c) => c.type === type);
    if (found) return { type, challenge: found };
  }
  const offered = authorization.challenges.map((c) => c.type).join(', ') || 'none';
  throw new Error(`the CA offers no challenge of the types AEGIS_ACME_CHALLENGES allows (${preference.join(', ')}) for ${authorization.identifier.value}; it offers ${offered}`);
}

export async function issueCertificate(client: acme.Client, request: IssueRequest): Promise<Issued> {
  const order = await client.createOrder({ identifiers: [{ type: 'dns', value: request.domain }] });
  const validated: ValidatedChallenge[] = [];
  for (const authorization of await client.getAuthorizations(order)) {
    // A valid authorization is one the CA reuses from an earlier order of this account.
    if (authorization.status === 'valid') continue;
    const { type, challenge } = pick(authorization, request.challenges);
    const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
    await request.answer({ type, domain: authorization.identifier.value, token: challenge.token, keyAuthorization, authorization });
    await client.completeChallenge(challenge);
    await client.waitForValidStatus(challenge);
    validated.push({ type, token: challenge.token });
  }
  const privateKeyPem = newEcdsaKey();
  // The domain as the only subject alternative name; no common name (at most 64 characters, and CAs are dropping it).
  const [, csr] = await acme.crypto.createCsr({ altNames: [request.domain] }, privateKeyPem);
  const finalized = await client.finalizeOrder(order, csr);
  const certificatePem = await client.getCertificate(finalized);
  const chain = parseChain(certificatePem);
  if (!keyMatches(chain, parsePrivateKey(privateKeyPem))) throw new Error('the CA returned a certificate for another key');
  if (!covers(chain, request.domain)) throw new Error(`the CA returned a certificate for ${chain.names.join(', ')}, not ${request.domain}`);
  return { certificatePem: chain.pem, privateKeyPem, validated, fingerprint: chain.fingerprint, notAfter: chain.notAfter };
}
