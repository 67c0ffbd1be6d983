// Report formats for scan findings, code (file, package) and URL alike (`aegis scan`, `GET /api/v1/scans/:id/sarif`).
export * from './model.ts';
export { renderJson, toJsonReport, baselineFingerprints, BaselineError, JSON_REPORT_FORMAT, JSON_REPORT_VERSION, type JsonReport } from './json.ts';
export { renderSarif, toSarif, cweTag, SARIF_SCHEMA, SECURITY_SEVERITY, type SarifLog, type SarifOptions } from './sarif.ts';
export { renderJunit, xmlEscape } from './junit.ts';
export { renderText, type TextOptions } from './text.ts';
