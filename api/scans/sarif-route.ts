// `GET /api/v1/scans/:id/sarif`: a completed code scan's findings as a SARIF 2.1.0 log (for GitHub
// code scanning and other SARIF consumers), from the same formatter as `aegis scan --format sarif`.
// Organisation-scoped like `GET /api/v1/scans/:id`: another organisation's scan is a 404.
// Each result carries the stored fingerprint (`partialFingerprints.primaryLocationLineHash`) and
// the vulnerability id (`properties["aegis/vulnerability_id"]`), which `aegis scan` reads in server mode.
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../auth/plugin.ts';
import type { Db } from '../db/database.ts';
import { conflict, notFound } from '../http/errors.ts';
import { sortFindings, toSarif } from '../scanners/report/index.ts';
import type { CodeScanType, Finding } from '../scanners/types.ts';
import { vulnerabilitiesOfScan } from '../vulnerabilities/store.ts';
import { findScan } from './store.ts';

const CODE_SCAN_TYPES: readonly string[] = ['sast', 'sca', 'secrets'];
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } } as const;

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export const scanSarifRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: { db: Db } }> = async (app, { db }) => {
  const version = packageVersion();
  app.get(
    '/api/v1/scans/:id/sarif',
    {
      config: { auth: 'scans:read' },
      schema: {
        tags: ['Scans'],
        summary: "A code scan's findings as SARIF 2.1.0",
        description:
          'One run, the rules that produced findings, one result per finding seen by this scan, with a line-independent `partialFingerprints.primaryLocationLineHash`. ' +
          'Code scans (SAST, SCA, secrets) that have completed; others are a 409.',
        params: idParams,
      },
    },
    async (request, reply) => {
      const scan = await findScan(db, principalOf(request).orgId, request.params.id);
      if (!scan) throw notFound('scan');
      if (!CODE_SCAN_TYPES.includes(scan.scan_type)) throw conflict('SARIF is available for code scans (sast, sca, secrets) only', { scan_type: scan.scan_type });
      if (scan.status !== 'completed') throw conflict(`the scan has not completed (${scan.status})`, { status: scan.status });
      const rows = await vulnerabilitiesOfScan(db, scan.id);
      const ids = new Map<Finding, string>();
      const findings = rows.map((row) => {
        const f: Finding = {
          rule_id: row.rule_id,
          title: row.title,
          severity: row.severity as Finding['severity'],
          cwe: row.cwe,
          location: row.location as unknown as Finding['location'],
          evidence: row.evidence,
          fingerprint: row.fingerprint,
          details: (row.details ?? {}) as Record<string, unknown>,
        };
        ids.set(f, row.id);
        return f;
      });
      const log = toSarif(
        {
          scanType: scan.scan_type as CodeScanType,
          tool: { name: 'aegis', version, informationUri: 'https://github.com/aegis-security/aegis' },
          target: scan.target,
          findings: sortFindings(findings),
          suppressed: { baseline: 0, diff_base: 0 },
          generatedAt: new Date().toISOString(),
        },
        { resultProperties: (f) => ({ 'aegis/vulnerability_id': ids.get(f), 'aegis/scan_id': scan.id }) },
      );
      return reply.type('application/sarif+json').send(JSON.stringify(log));
    },
  );
};
