// Proving control of an e-mail domain, as identity providers and SaaS products do (WorkOS, Okta,
// Google Workspace): the organisation publishes a TXT record `_aegis-verify.<domain>` holding the
// token Aegis shows, and Aegis reads it back. Until then — and again as soon as the record is gone —
// the domain admits nobody: it neither signs people in just in time nor finds the organisation's SSO.
import type { OrganizationDomainRow } from '../../../platform/db/schema.ts';
import { TxtLookupError, type TxtLookup } from '../../../platform/net/txt-records.ts';

export const PROOF_LABEL = '_aegis-verify';

export const proofRecordName = (domain: string): string => `${PROOF_LABEL}.${domain}`;
export const proofRecordValue = (token: string): string => `aegis-verify=${token}`;

export type ProofOutcome = { verified: true } | { verified: false; reason: string; found: string[] } | { verified: null; reason: string };

/** Reads the domain's proof record: verified, not there (with what was found instead), or unknown (the resolver failed). */
export async function checkProof(lookup: TxtLookup, row: Pick<OrganizationDomainRow, 'domain' | 'token'>): Promise<ProofOutcome> {
  const name = proofRecordName(row.domain);
  let found: string[];
  try {
    found = await lookup(name);
  } catch (err) {
    if (err instanceof TxtLookupError) return { verified: null, reason: err.message };
    throw err;
  }
  if (found.some((value) => value.trim() === proofRecordValue(row.token))) return { verified: true };
  const reason = found.length === 0 ? `no TXT record at ${name}` : `the TXT records at ${name} do not hold ${proofRecordValue(row.token)}`;
  return { verified: false, reason, found: found.slice(0, 10) };
}
