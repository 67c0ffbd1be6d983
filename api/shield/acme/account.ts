// The ACME account of a directory: one per directory URL, shared by every node. Its key is made
// once (the first order anywhere), sealed with the server key bound to the directory URL; the terms
// of service are accepted on registration; the contact is AEGIS_ACME_EMAIL when set, and updated
// at the CA when it changes. Requests run under the caller's transport (./transport.ts).
import type * as acme from 'acme-client';
import type { SecretBox } from '../../../platform/crypto/secret-box.ts';
import type { Db } from '../../../platform/db/database.ts';
import { newEcdsaKey } from './keys.ts';
import { newAcmeClient } from './transport.ts';

export interface AccountSettings {
  directoryUrl: string;
  email: string | undefined;
}

const keyContext = (directoryUrl: string): string => `acme-account:${directoryUrl}`;

/** The CA polls: first after a second, doubling to ten seconds, for about a minute in all. */
const POLLING = { backoffAttempts: 10, backoffMin: 1_000, backoffMax: 10_000 };

/** The stored account of the directory, created (key only) when there is none; two nodes racing keep the first key. */
async function accountRow(db: Db, box: SecretBox, directoryUrl: string) {
  const existing = await db.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirst();
  if (existing) return existing;
  const key = newEcdsaKey();
  await db
    .insertInto('acme_accounts')
    .values({ directory_url: directoryUrl, key_sealed: box.seal(key, keyContext(directoryUrl)), email: null, account_url: null })
    .onConflict((oc) => oc.column('directory_url').doNothing())
    .execute();
  return db.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirstOrThrow();
}

/** A client of the directory signed in as the account, registered (or its contact updated) first when needed. */
export async function accountClient(db: Db, box: SecretBox, settings: AccountSettings): Promise<acme.Client> {
  const row = await accountRow(db, box, settings.directoryUrl);
  const client = newAcmeClient({
    directoryUrl: settings.directoryUrl,
    accountKey: box.open(row.key_sealed, keyContext(settings.directoryUrl)),
    ...(row.account_url ? { accountUrl: row.account_url } : {}),
    ...POLLING,
  });
  const email = settings.email ?? null;
  const contact = email ? [`mailto:${email}`] : [];
  if (!row.account_url) {
    // A key the CA already knows (another node registered it first) gets its account back.
    await client.createAccount({ termsOfServiceAgreed: true, contact });
  } else if (row.email === email) {
    return client;
  } else {
    await client.updateAccount({ contact });
  }
  await db.updateTable('acme_accounts').set({ account_url: client.getAccountUrl(), email }).where('directory_url', '=', settings.directoryUrl).execute();
  return client;
}
