// `GET /api/v1/scans/:id/sarif`: a completed scan's findings as a SARIF 2.1.0 log (for GitHub code
// scanning and other SARIF consumers), from the same formatter as `aegis scan --format sarif`: code
// scans (SAST, SCA, secrets) located in files, URL scans (DAST, API, CVE) at absolute URLs.
// Organisation-scoped like `GET /api/v1/scans/:id`: another organisation's scan is a 404.
// Each result carries the stored fingerprint (`partialFingerprints.primaryLocationLineHash`) and
// the vulnerability id (`properties["aegis/vulnerability_id"]`), which `aegis scan` reads in server mode.
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { principalOf } from '../accounts/auth/plugin.ts';
import type { Db } from '../../platform/db/database.ts';
import { conflict, notFound } from '../../platform/http/errors.ts';
import { isUrlScanType, sortFindings, toSarif, type ReportFinding, type ReportScanType } from '../../scanners/report/index.ts';
import { vulnerabilitiesOfScan } from '../findings/store.ts';
import { findScan } from './store.ts';

const REPORT_SCAN_TYPES: readonly string[] = ['sast', 'sca', 'secrets', 'dast', 'api', 'cve'];
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
        summary: "A scan's findings as SARIF 2.1.0",
        description:
          'One run, the rules that produced findings, one result per finding seen by this scan, with a line-independent `partialFingerprints.primaryLocationLineHash` (the fingerprint `aegis scan --baseline` matches) ' +
          'and the vulnerability id in `properties["aegis/vulnerability_id"]`. ' +
          'Code scans (SAST, SCA, secrets) locate results in files relative to `%SRCROOT%`; URL scans (DAST, API, CVE) at the absolute URL of the request that showed the finding, with its method and parameter in the result properties. ' +
          'Any scan type, once completed; a scan that has not completed is a 409.',
        params: idParams,
      },
    },
    async (request, reply) => {
      const scan = await findScan(db, principalOf(request).orgId, request.params.id);
      if (!scan) throw notFound('scan');
      if (!REPORT_SCAN_TYPES.includes(scan.scan_type)) throw conflict(`SARIF is not available for ${scan.scan_type} scans`, { scan_type: scan.scan_type });
      if (scan.status !== 'completed') throw conflict(`the scan has not completed (${scan.status})`, { status: scan.status });
      const scanType = scan.scan_type as ReportScanType;
      const rows = await vulnerabilitiesOfScan(db, scan.id);
      const ids = new Map<ReportFinding, string>();
      const findings = rows.map((row) => {
        const f: ReportFinding = {
          rule_id: row.rule_id,
          title: row.title,
          severity: row.severity as ReportFinding['severity'],
          cwe: row.cwe,
          location: row.location as unknown as ReportFinding['location'],
          evidence: row.evidence,
          fingerprint: row.fingerprint,
          details: (row.details ?? {}) as Record<string, unknown>,
        };
        ids.set(f, row.id);
        return f;
      });
      // URL scans: what the scan covered (requests, pages, notes), as `aegis scan --format sarif` gives it.
      const stored = scan.coverage as { requests?: unknown; items?: unknown; notes?: unknown } | null;
      const covered =
        isUrlScanType(scanType) && typeof stored?.requests === 'number'
          ? { requests: stored.requests, items: typeof stored.items === 'number' ? stored.items : 0, notes: Array.isArray(stored.notes) ? stored.notes.map(String) : [] }
          : undefined;
      const log = toSarif(
        {
          scanType,
          tool: { name: 'aegis', version, informationUri: 'https://github.com/aegis-security/aegis' },
          target: scan.target,
          findings: sortFindings(findings),
          suppressed: { baseline: 0, diff_base: 0 },
          ...(covered ? { coverage: covered } : {}),
          generatedAt: new Date().toISOString(),
        },
        { resultProperties: (f) => ({ 'aegis/vulnerability_id': ids.get(f), 'aegis/scan_id': scan.id }) },
      );
      return reply.type('application/sarif+json').send(JSON.stringify(log));
    },
  );
};
