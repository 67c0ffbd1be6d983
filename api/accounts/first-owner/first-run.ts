// At start-up, while `default` has no owner: AEGIS_OWNER_EMAIL names one outright; otherwise a
// one-time owner link is issued and announced once — in the log, and in the outbox file when mail
// goes there — for whoever installed the server to claim it.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../platform/db/database.ts';
import type { Mailer } from '../../../platform/mail/mailer.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { issueOwnerLink, OWNER_LINK_LIFETIME_MS, revokeOwnerLinks } from './owner-links.ts';
import { findDefaultOrganization, nameFirstOwner } from './ownership.ts';

export const OWNER_LINK_PATH = '/auth/first-owner';

export type FirstRun =
  /** No organisation `default` (a server whose keys were made otherwise): nothing to claim. */
  | { kind: 'no-default' }
  | { kind: 'owned' }
  /** AEGIS_OWNER_EMAIL was made the owner now. */
  | { kind: 'owner-set'; email: string }
  /** A link was issued; `token` goes into the announcement and nowhere else. */
  | { kind: 'link-issued'; token: string };

/** Decides, once per start, how `default` gets its first owner. */
export async function settleFirstOwner(db: Db, changes: AuthChanges, options: { ownerEmail: string | undefined }): Promise<FirstRun> {
  // Through AuthChanges: promoting an existing admin changes what their sessions may do.
  return changes.commit(db, async (trx): Promise<FirstRun> => {
    const org = await findDefaultOrganization(trx, { lock: true });
    if (!org) return { kind: 'no-default' };
    if (org.owned) {
      // However it got its owner (a role change, an owner invite), earlier links are dead now.
      await revokeOwnerLinks(trx, org.id);
      return { kind: 'owned' };
    }
    if (options.ownerEmail !== undefined) {
      const { user } = await nameFirstOwner(trx, { orgId: org.id, email: options.ownerEmail, actor: { type: 'system', id: 'AEGIS_OWNER_EMAIL' }, ip: null, via: 'AEGIS_OWNER_EMAIL' });
      return { kind: 'owner-set', email: user.email };
    }
    // Links from earlier starts stay valid until they expire: with several API processes starting
    // at once, whichever log the operator reads must hold a link that works.
    return { kind: 'link-issued', token: await issueOwnerLink(trx, org.id) };
  });
}

export function ownerLinkUrl(publicUrl: string, token: string): string {
  const url = new URL(OWNER_LINK_PATH, publicUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

/**
 * Prints the link once: without SMTP through the outbox mailer (the log and <data-dir>/outbox.log,
 * where every sign-in link of such a server is), with SMTP in the log only — it has no addressee.
 */
export async function announceOwnerLink(link: string, out: { log: FastifyBaseLogger; outbox: Mailer | undefined }): Promise<void> {
  const hours = OWNER_LINK_LIFETIME_MS / 3_600_000;
  const text = [
    'Organisation `default` has no owner yet. To become its owner, open this link in a browser and enter your e-mail address:',
    '',
    `  ${link}`,
    '',
    `It works once, for ${hours} hours, and stops working as soon as \`default\` has an owner. Or start the server with AEGIS_OWNER_EMAIL=<your address>.`,
  ].join('\n');
  if (out.outbox) await out.outbox.send({ to: 'the installer (owner of default)', subject: 'Claim your Aegis server', text });
  else out.log.warn(`first run:\n${text}`);
}
