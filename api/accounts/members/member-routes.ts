// Members and invites of the caller's organisation (spec 5.3), all `admin`:
//   GET    /api/v1/orgs/current/members             list, with roles
//   PATCH  /api/v1/orgs/current/members/:user_id    change a role
//   DELETE /api/v1/orgs/current/members/:user_id    remove
//   POST   /api/v1/orgs/current/invite              invite an address with a role (mails a link)
//   GET    /api/v1/orgs/current/invites             list; DELETE .../invites/:id revokes
// and, for a signed-in person, POST /api/v1/me/invites/accept. The browser landing page of the
// link is in invite-pages.ts.
//
// The owner role is the one thing an admin may not hand out or take away: only an owner's session
// may (never a key: api/accounts/auth/owner-powers.ts), except that an organisation with no owner yet gets
// its first from an admin. An organisation that has an owner always keeps one. Role changes and
// removals run through AuthChanges, so the member's sessions on every process see them at their
// next request.
import formBody from '@fastify/formbody';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { auditRequest } from '../../../platform/audit-log.ts';
import type { AuthChanges } from '../auth/auth-changes.ts';
import { organizationLevel, principalOf, sessionOf } from '../auth/plugin.ts';
import { requireOwnerSession } from '../auth/owner-powers.ts';
import { ROLES, type Role } from '../auth/roles.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { InviteRow } from '../../../platform/db/schema.ts';
import { ApiError, conflict, notFound } from '../../../platform/http/errors.ts';
import { parseEnumList } from '../../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, nullableTimestampSchema, pageQueryProperties, timestampSchema } from '../../../platform/http/schemas.ts';
import { organizationSchema } from '../people/resources.ts';
import { joinByInvite } from '../sign-in/accounts.ts';
import { emailSchema } from '../sign-in/forms.ts';
import type { Mailer } from '../../../platform/mail/mailer.ts';
import type { SessionTokens } from '../sessions/session-token.ts';
import { findUserByEmail, normalizeEmail } from '../people/user-store.ts';
import { invitePageRoutes, pendingInviteByToken, unusableInvite } from './invite-pages.ts';
import { createInvite, INVITE_LIFETIME_MS, INVITE_STATUSES, inviteStatus, listInvites, revokeInvite, revokePendingInvites } from '../people/invite-store.ts';
import { findMember, listMembers, lockOwners, membershipsOf, removeMembership, setMemberRole, type MemberRow } from '../people/org-store.ts';

export interface OrgRoutesOptions {
  db: Db;
  mailer: Mailer;
  changes: AuthChanges;
  tokens: SessionTokens;
  publicUrl: () => string;
}

const roleSchema = { type: 'string', enum: ROLES, description: 'owner, admin, member or viewer (docs/people.md lists what each may do).' } as const;

const memberSchema = {
  type: 'object',
  required: ['user_id', 'email', 'name', 'role', 'joined_at', 'last_login_at'],
  properties: {
    user_id: { type: 'string' },
    email: { type: 'string' },
    name: { type: ['string', 'null'] },
    role: roleSchema,
    joined_at: { ...timestampSchema, description: 'When the person joined the organisation.' },
    last_login_at: { ...nullableTimestampSchema, description: 'Last sign-in (any organisation); null before the first.' },
  },
} as const;

const inviteSchema = {
  type: 'object',
  required: ['id', 'email', 'role', 'status', 'expires_at', 'created_at', 'invited_by'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string', description: 'The invited address (lower-cased).' },
    role: roleSchema,
    status: { type: 'string', enum: INVITE_STATUSES, description: '`pending` until accepted, revoked (also by a newer invite to the same address) or expired (after 7 days).' },
    expires_at: timestampSchema,
    created_at: timestampSchema,
    invited_by: {
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { type: 'string', enum: ['api_key', 'user', 'system'] }, id: { type: 'string' } },
      description: 'Who sent it: a user or an API key.',
    },
  },
} as const;

const userIdParams = { type: 'object', required: ['user_id'], properties: { user_id: { type: 'string', maxLength: 64 } } } as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

const toMember = (m: MemberRow) => ({
  user_id: m.id,
  email: m.email,
  name: m.name,
  role: m.role,
  joined_at: m.joined_at.toISOString(),
  last_login_at: m.last_login_at?.toISOString() ?? null,
});

const toInvite = (row: InviteRow) => ({
  id: row.id,
  email: row.email,
  role: row.role as Role,
  status: inviteStatus(row),
  expires_at: row.expires_at.toISOString(),
  created_at: row.created_at.toISOString(),
  invited_by: { type: row.invited_by_type as 'api_key' | 'user' | 'system', id: row.invited_by_id },
});

/** 409 unless someone other than `userId` stays owner (the owner rows are locked by the caller's transaction). */
async function keepAnOwner(trx: Db, orgId: string, member: MemberRow, what: string): Promise<void> {
  const owners = await lockOwners(trx, orgId);
  if (owners.some((id) => id !== member.id)) return;
  throw conflict(`${member.email} is the last owner of this organisation and cannot be ${what}: make another member owner first`, { reason: 'last_owner' });
}

export const orgRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: OrgRoutesOptions }> = async (app, { db, mailer, changes, tokens, publicUrl }) => {
  app.addHook('onRoute', organizationLevel);
  await app.register(formBody, { bodyLimit: 16 * 1024 });
  await app.register(invitePageRoutes, { db, tokens, changes });
  const tags = ['Members'];

  app.get(
    '/api/v1/orgs/current/members',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: { tags, summary: 'List members', querystring: { type: 'object', properties: pageQueryProperties }, response: { 200: listResponseSchema(memberSchema) } },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listMembers(db, { orgId: principalOf(request).organization.id, after: decodeCursor(request.query.cursor), limit });
      return toPage(rows, limit, toMember);
    },
  );

  app.patch(
    '/api/v1/orgs/current/members/:user_id',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: "Change a member's role",
        description:
          'Takes effect at once, also for the member’s open sessions. Granting or taking away `owner` needs an owner’s session, never a key (403 `owner_session_required`; an organisation with no owner yet gets its first from an admin); the last owner cannot be demoted (409). Audited as `member.role_changed`.',
        params: userIdParams,
        body: { type: 'object', additionalProperties: false, required: ['role'], properties: { role: roleSchema } },
        response: { 200: memberSchema },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { role } = request.body;
      const member = await changes.commit(db, async (trx) => {
        const current = await findMember(trx, principal.organization.id, request.params.user_id);
        if (!current) throw notFound('member');
        if (current.role === role) return current;
        if (current.role === 'owner') {
          requireOwnerSession(principal, 'take the owner role away');
          await keepAnOwner(trx, principal.organization.id, current, 'demoted');
        } else if (role === 'owner') {
          requireOwnerSession(principal, 'grant the owner role', { ownerless: (await lockOwners(trx, principal.organization.id)).length === 0 });
        }
        await setMemberRole(trx, principal.organization.id, current.id, role);
        await auditRequest(trx, request, {
          action: 'member.role_changed',
          target: { type: 'user', id: current.id },
          metadata: { from: current.role, to: role, email: current.email },
        });
        return { ...current, role };
      });
      return toMember(member);
    },
  );

  app.delete(
    '/api/v1/orgs/current/members/:user_id',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Remove a member',
        description: 'Takes effect at once: the person’s sessions in this organisation stop working. Removing an owner needs an owner’s session (403 `owner_session_required`); the last owner cannot be removed (409). Audited as `member.removed`.',
        params: userIdParams,
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await changes.commit(db, async (trx) => {
        const member = await findMember(trx, principal.organization.id, request.params.user_id);
        if (!member) throw notFound('member');
        if (member.role === 'owner') {
          requireOwnerSession(principal, 'remove an owner');
          await keepAnOwner(trx, principal.organization.id, member, 'removed');
        }
        await removeMembership(trx, principal.organization.id, member.id);
        await auditRequest(trx, request, { action: 'member.removed', target: { type: 'user', id: member.id }, metadata: { email: member.email, role: member.role } });
      });
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/orgs/current/invite',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Invite a person',
        description: `Mails the address a link to join with the role; the link works once, for ${INVITE_LIFETIME_MS / 86_400_000} days. A new invite to the same address replaces a pending one. Inviting a member: 409. Inviting as \`owner\` needs an owner’s session (or, while the organisation has no owner, an admin). Audited as \`invite.sent\`. The token is never returned.`,
        body: { type: 'object', additionalProperties: false, required: ['email', 'role'], properties: { email: emailSchema, role: roleSchema } },
        response: { 201: inviteSchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { role } = request.body;
      const email = normalizeEmail(request.body.email);
      const { row, token } = await db.transaction().execute(async (trx) => {
        if (role === 'owner') requireOwnerSession(principal, 'invite an owner', { ownerless: (await lockOwners(trx, principal.organization.id)).length === 0 });
        const user = await findUserByEmail(trx, email);
        const member = user && (await findMember(trx, principal.organization.id, user.id));
        if (member) throw conflict(`${email} is already a member of this organisation (role ${member.role}); change the role instead`, { user_id: member.id, role: member.role });
        const replaced = await revokePendingInvites(trx, principal.organization.id, email);
        const created = await createInvite(trx, { orgId: principal.organization.id, email, role, invitedBy: principal.actor });
        await auditRequest(trx, request, { action: 'invite.sent', target: { type: 'invite', id: created.row.id }, metadata: { email, role, replaced } });
        return created;
      });
      const link = new URL('/auth/invite', publicUrl());
      link.searchParams.set('token', token);
      const org = principal.organization.name;
      const text = `You are invited to join ${org} on Aegis as ${role}.\n\n${link.toString()}\n\nThe link works once, until ${row.expires_at.toUTCString()}. If you did not expect it, ignore this mail.`;
      // Sent after answering, as sign-in links are; a failure is logged (revoke and invite again to resend).
      void mailer.send({ to: email, subject: `Join ${org} on Aegis`, text }).catch((err: unknown) => request.log.error({ err, invite: row.id }, 'invite mail could not be sent'));
      return reply.code(201).send(toInvite(row));
    },
  );

  app.get(
    '/api/v1/orgs/current/invites',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'List invites',
        querystring: { type: 'object', properties: { ...pageQueryProperties, status: filterParam('Filter by status: pending, accepted, revoked, expired.') } },
        response: { 200: listResponseSchema(inviteSchema) },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const rows = await listInvites(db, {
        orgId: principalOf(request).organization.id,
        after: decodeCursor(request.query.cursor),
        limit,
        statuses: parseEnumList('status', request.query.status, INVITE_STATUSES),
      });
      return toPage(rows, limit, toInvite);
    },
  );

  app.delete(
    '/api/v1/orgs/current/invites/:id',
    {
      config: { auth: 'admin', managesAccess: true },
      schema: {
        tags,
        summary: 'Revoke an invite',
        description: 'The link stops working at once. An accepted invite cannot be revoked (409): remove the member instead. Audited as `invite.revoked`.',
        params: idParams,
        response: { 200: inviteSchema },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const result = await db.transaction().execute(async (trx) => {
        const revoked = await revokeInvite(trx, principal.organization.id, request.params.id);
        if (revoked?.changed) await auditRequest(trx, request, { action: 'invite.revoked', target: { type: 'invite', id: revoked.row.id }, metadata: { email: revoked.row.email, role: revoked.row.role } });
        return revoked;
      });
      if (!result) throw notFound('invite');
      if (result.row.accepted_at) throw conflict('this invite was accepted already: remove the member instead', { status: 'accepted' });
      return toInvite(result.row);
    },
  );

  app.post(
    '/api/v1/me/invites/accept',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Accept an invite',
        description:
          'Joins the invite’s organisation with its role, for a signed-in person whose address the invite is for (else 403). Used, revoked, expired or forged tokens: 401 with `details.reason` (used, revoked, expired, invalid). The session stays in its current organisation (switch with PUT /api/v1/me/current-organization).',
        body: { type: 'object', additionalProperties: false, required: ['token'], properties: { token: { type: 'string', minLength: 1, maxLength: 200, description: 'The token from the invite link.' } } },
        response: { 200: { type: 'object', required: ['organization', 'role'], properties: { organization: organizationSchema, role: roleSchema } } },
      },
    },
    async (request) => {
      const principal = sessionOf(request);
      // An identity provider (or the first-owner link) vouches for the person to one organisation
      // only; joining another needs proof of the address itself.
      if (principal.boundOrgId !== null) {
        throw new ApiError(403, 'sign_in_required', 'accepting an invite needs a sign-in that proves your address (an e-mail link or Google, or the invite link itself): this session came from an organisation’s identity provider, or the server’s first-owner link, and works for that organisation only', { sign_in_url: '/auth/login' });
      }
      const orgId = await changes.commit(db, async (trx) => {
        const invite = await pendingInviteByToken(trx, request.body.token);
        if (invite.email !== normalizeEmail(principal.user.email)) {
          throw new ApiError(403, 'forbidden', `this invite is for another e-mail address than yours (${principal.user.email}): sign in with the invited address to accept it`, { reason: 'other_address' });
        }
        if (!(await joinByInvite(trx, invite, principal.user.id, request.ip))) throw unusableInvite('accepted');
        return invite.org_id;
      });
      const membership = (await membershipsOf(db, principal.user.id)).find((m) => m.organization.id === orgId);
      if (!membership) throw notFound('membership');
      return { organization: membership.organization, role: membership.role };
    },
  );
};
