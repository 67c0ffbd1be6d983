// /api/v1/vulnerabilities: the findings of all scans, deduplicated per target (spec 4.8), and
// their triage, verify-fix (./verify.ts) and virtual patches made from a finding (./virtual-patch.ts);
// sorted pages (./sort.ts) and each finding's history (./history.ts).
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { SCAN_TYPES } from '../../schemas/index.ts';
import { auditRequest } from '../../platform/audit-log.ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { conflict, notFound } from '../../platform/http/errors.ts';
import { parseEnumList, parseList } from '../../platform/http/filters.ts';
import { decodeCursor, pageLimit, toPage } from '../../platform/http/pagination.ts';
import { filterParam, listResponseSchema, pageQueryProperties } from '../../platform/http/schemas.ts';
import { SEVERITIES, VulnerabilityResource } from '../scans/schemas.ts';
import { announceDeliveries, recordEvents } from '../../platform/events/event-store.ts';
import { vulnerabilityChanged } from '../findings/events.ts';
import { findVulnerability, listVulnerabilities, listVulnerabilitiesSorted, toVulnerability, updateVulnerability, type TriageChanges, type VulnerabilityStatus } from '../findings/store.ts';
import { allowedFrom, transitionAllowed } from '../findings/transitions.ts';
import { sql } from 'kysely';
import { VirtualPatchResource } from '../../schemas/index.ts';
import { announceEnqueued } from '../../platform/jobs/signals.ts';
import { findPatch, insertPatch, toPatch } from '../shield/virtual-patches/store.ts';
import { requestVerification } from '../scans/verify-fix.ts';
import { derivePatch, siteServing } from './virtual-patch.ts';
import type { Verification, VulnerabilityRow } from '../findings/store.ts';
import { ticketLinksOf } from '../integrations/tickets/store.ts';
import { triageOf, triageView } from '../ai/queue.ts';
import { decodeSortCursor, encodeSortCursor, parseSort, SORTS } from '../findings/sort.ts';
import { decodeHistoryCursor, encodeHistoryCursor, historyOf, toHistoryEntry } from './history.ts';
import { HistoryEntryResource } from './history-schema.ts';

const STATUSES = ['open', 'acknowledged', 'resolved', 'accepted_risk'] as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

export const vulnerabilityRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const tags = ['Vulnerabilities'];

  const shownTriage = (row: VulnerabilityRow) => {
    const triage = triageOf(row);
    return triage ? triageView(triage) : null;
  };
  /** The resources of `rows` with their ticket links (one query for all) and their latest AI triage. */
  async function withTickets(rows: readonly VulnerabilityRow[]) {
    const links = await ticketLinksOf(db, rows.map((r) => r.id));
    return (row: VulnerabilityRow) => ({ ...toVulnerability(row), ticket: links.get(row.id) ?? null, triage: shownTriage(row) });
  }
  const shown = async (row: VulnerabilityRow) => (await withTickets([row]))(row);

  app.get(
    '/api/v1/vulnerabilities',
    {
      config: { auth: 'vulnerabilities:read' },
      schema: {
        tags,
        summary: 'List vulnerabilities',
        description:
          'Newest first by default. `sort` orders by another field — `-severity` (most severe first), `severity`, `first_seen_at`, `last_seen_at`, `created_at`, `updated_at`, each ascending or with `-` descending — ' +
          'with ties broken by id; the cursor of a sorted page carries its sort key, so it must be passed back with the same `sort` and filters.',
        querystring: {
          type: 'object',
          properties: {
            ...pageQueryProperties,
            severity: filterParam('Filter by severity, e.g. `high,critical`.'),
            status: filterParam('Filter by status: open, acknowledged, resolved, accepted_risk.'),
            scan_type: filterParam('Filter by scan type.'),
            cwe: filterParam('Filter by CWE, e.g. `CWE-89,CWE-79`.'),
            scan_id: { type: 'string', maxLength: 64, description: 'Only the findings seen in this scan.' },
            target: { type: 'string', maxLength: 2048, description: 'Only findings of this target.' },
            false_positive: { type: 'boolean' },
            sort: { type: 'string', enum: SORTS, description: 'Order of the list: a field, descending with a leading `-`. Without it, newest first.' },
          },
        },
        response: { 200: listResponseSchema(VulnerabilityResource) },
      },
    },
    async (request) => {
      const q = request.query;
      const limit = pageLimit(q);
      const filters = {
        orgId: principalOf(request).orgId,
        limit,
        severities: parseEnumList('severity', q.severity, SEVERITIES),
        statuses: parseEnumList('status', q.status, STATUSES),
        scanTypes: parseEnumList('scan_type', q.scan_type, SCAN_TYPES),
        cwes: parseList('cwe', q.cwe)?.map((c) => c.toUpperCase()),
        scanId: q.scan_id,
        target: q.target,
        falsePositive: q.false_positive,
      };
      const spec = parseSort(q.sort);
      if (spec) {
        const rows = await listVulnerabilitiesSorted(db, { ...filters, spec, cursor: decodeSortCursor(spec, q.cursor) });
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        const show = await withTickets(page);
        return { data: page.map(show), pagination: { next: rows.length > limit && last ? encodeSortCursor(spec, { key: last.sort_key, id: last.id }) : null } };
      }
      const rows = await listVulnerabilities(db, { ...filters, after: decodeCursor(q.cursor) });
      return toPage(rows, limit, await withTickets(rows));
    },
  );

  app.get(
    '/api/v1/vulnerabilities/:id/history',
    {
      config: { auth: 'vulnerabilities:read' },
      schema: {
        tags,
        summary: 'What happened to a vulnerability',
        description:
          'Newest first: each change of the finding (from its `vulnerability.*` events: status, resolution, false positive, notes, verification, virtual patch — `changes` lists each field from → to), ' +
          'made by a person or API key (`actor`) or by Aegis itself (`actor: null`: a scan that resolved or reopened it, a verify-fix result, a ticket closed at the tracker), ' +
          'and the requests that change no field at once (`kind: action`: a ticket, an AI triage, a verify-fix, a virtual patch; `type` is the audit action, `metadata` its details). ' +
          'Changes are kept as long as events (30 days); the requests as long as the audit log.',
        params: idParams,
        querystring: { type: 'object', properties: { ...pageQueryProperties } },
        response: { 200: listResponseSchema(HistoryEntryResource) },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const row = await findVulnerability(db, orgId, request.params.id);
      if (!row) throw notFound('vulnerability');
      const limit = pageLimit(request.query);
      const rows = await historyOf(db, orgId, row.id, limit, decodeHistoryCursor(request.query.cursor));
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return { data: page.map(toHistoryEntry), pagination: { next: rows.length > limit && last ? encodeHistoryCursor(last) : null } };
    },
  );

  app.get(
    '/api/v1/vulnerabilities/:id',
    { config: { auth: 'vulnerabilities:read' }, schema: { tags, summary: 'Get a vulnerability', params: idParams, response: { 200: VulnerabilityResource } } },
    async (request) => {
      const row = await findVulnerability(db, principalOf(request).orgId, request.params.id);
      if (!row) throw notFound('vulnerability');
      return shown(row);
    },
  );

  app.patch(
    '/api/v1/vulnerabilities/:id',
    {
      config: { auth: 'vulnerabilities:write' },
      schema: {
        tags,
        summary: 'Triage a vulnerability',
        description:
          'Changes `status`, `false_positive` and `notes`. Allowed status changes: open → acknowledged | resolved | accepted_risk; acknowledged → open | resolved | ' +
          'accepted_risk; accepted_risk → open | acknowledged | resolved; resolved → open. Others are a 409 naming the allowed ones. Scans resolve a finding they no ' +
          'longer see (`resolution: fixed`) and reopen one they see again.',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            status: { type: 'string', enum: STATUSES },
            false_positive: { type: 'boolean' },
            notes: { type: 'string', maxLength: 10_000 },
          },
        },
        response: { 200: VulnerabilityResource },
      },
    },
    async (request) => {
      const { orgId } = principalOf(request);
      const body = request.body;
      const updated = await db.transaction().execute(async (trx) => {
        const before = await findVulnerability(trx, orgId, request.params.id, { forUpdate: true });
        if (!before) throw notFound('vulnerability');
        const from = before.status as VulnerabilityStatus;
        const changes: TriageChanges = {};
        if (body.status !== undefined && body.status !== from) {
          if (!transitionAllowed(from, body.status)) {
            throw conflict(`a vulnerability cannot go from ${from} to ${body.status}`, { status: from, allowed: allowedFrom(from) });
          }
          changes.status = body.status;
          changes.resolution = body.status === 'resolved' ? 'manual' : null;
          if (body.status !== 'resolved') changes.fixed_at = null;
        }
        if (body.false_positive !== undefined) changes.false_positive = body.false_positive;
        if (body.notes !== undefined) changes.notes = body.notes;
        const after = await updateVulnerability(trx, orgId, before.id, changes);
        await auditRequest(trx, request, {
          action: 'vulnerability.updated',
          target: { type: 'vulnerability', id: before.id },
          metadata: { fields: Object.keys(body).sort(), ...(changes.status ? { from, to: changes.status } : {}) },
        });
        const event = vulnerabilityChanged(before, after);
        const recorded = event ? await recordEvents(trx, [event]) : undefined;
        return { after, deliveries: recorded?.deliveries ?? 0 };
      });
      announceDeliveries(db, updated.deliveries);
      return shown(updated.after);
    },
  );

  app.post(
    '/api/v1/vulnerabilities/:id/verify',
    {
      config: { auth: 'vulnerabilities:write' },
      schema: {
        tags,
        summary: 'Verify a fix',
        description:
          'Re-runs exactly the check that produced the finding — the recorded request(s) of a URL finding, through the scope and authentication of the scan that found it; a rescan of the same source for a code finding — as a job. Follow `verification` on the finding: `not_reproduced` resolves it (`resolution: verified`) and deletes its virtual patch when that was made with `auto_remove`; `reproduced` keeps it open with fresh evidence. 409 while a verification is under way.',
        params: idParams,
        response: { 202: VulnerabilityResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const updated = await db.transaction().execute(async (trx) => {
        const row = await findVulnerability(trx, orgId, request.params.id, { forUpdate: true });
        if (!row) throw notFound('vulnerability');
        const current = row.verification as Verification | null;
        if (current && (current.status === 'queued' || current.status === 'running')) throw conflict('a verification of this finding is under way', { job_id: current.job_id });
        const verification = await requestVerification(trx, row);
        await auditRequest(trx, request, { action: 'vulnerability.verify_requested', target: { type: 'vulnerability', id: row.id }, metadata: { job_id: verification.job_id } });
        return (await findVulnerability(trx, orgId, row.id))!;
      });
      announceEnqueued(db);
      return reply.code(202).send(await shown(updated));
    },
  );

  app.post(
    '/api/v1/vulnerabilities/:id/virtual-patch',
    {
      config: { auth: 'shield:write' },
      schema: {
        tags,
        summary: 'Shield a finding with a virtual patch',
        description:
          "Derives a virtual patch from an injection finding of a URL scan — its path, method and parameter, and a regex for the attack class (SQL injection, XSS, traversal, open redirect, command or template injection) — on the organisation's Shield site whose domain serves the finding's URL (409 when none does). With `auto_remove`, the patch is deleted when a verification finds the problem fixed.",
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            auto_remove: { type: 'boolean', default: false },
            action: { type: 'string', enum: ['block', 'challenge', 'log'], default: 'block' },
            expires_in_days: { type: ['integer', 'null'], minimum: 1, maximum: 3650 },
          },
        },
        response: { 201: VirtualPatchResource },
      },
    },
    async (request, reply) => {
      const { orgId } = principalOf(request);
      const body = request.body ?? {};
      const patch = await db.transaction().execute(async (trx) => {
        const row = await findVulnerability(trx, orgId, request.params.id, { forUpdate: true });
        if (!row) throw notFound('vulnerability');
        const derived = derivePatch(row);
        const site = await siteServing(trx, orgId, derived.hostname);
        if (!site) throw conflict(`no Shield site of this organisation serves ${derived.hostname}; create one for that domain first`, { hostname: derived.hostname });
        if (row.virtual_patch_id && (await findPatch(trx, site.id, row.virtual_patch_id))) {
          throw conflict('this finding already has a virtual patch', { virtual_patch_id: row.virtual_patch_id, site_id: site.id });
        }
        const created = await insertPatch(trx, orgId, site.id, { ...derived.patch, action: body.action ?? 'block', expires_in_days: body.expires_in_days ?? null });
        const patched = await trx
          .updateTable('vulnerabilities')
          .set({ virtual_patch_id: created.id, virtual_patch_auto_remove: body.auto_remove ?? false, updated_at: sql<Date>`now()` })
          .where('id', '=', row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditRequest(trx, request, {
          action: 'virtual_patch.created',
          target: { type: 'virtual_patch', id: created.id },
          metadata: { site_id: site.id, url_pattern: created.url_pattern, match_param: created.match_param, vulnerability_id: row.id, auto_remove: body.auto_remove ?? false },
        });
        const event = vulnerabilityChanged(row, patched);
        const recorded = event ? await recordEvents(trx, [event]) : undefined;
        return { created, deliveries: recorded?.deliveries ?? 0 };
      });
      announceDeliveries(db, patch.deliveries);
      return reply.code(201).send(toPatch(patch.created));
    },
  );
};
