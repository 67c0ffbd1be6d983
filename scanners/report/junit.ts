// JUnit XML for CI test reports (GitLab `artifacts:reports:junit`, Jenkins, Azure): one testsuite
// per scan, one failing testcase per finding, so each finding shows as a failed test. A testcase's
// `file` is the finding's file, or its URL for a URL scan.
import { countBySeverity, locationText, locationUri, messageOf, type ScanReport } from './model.ts';

/** XML 1.0 text: escaped, without the control characters XML cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

export function renderJunit(report: ScanReport): string {
  const n = countBySeverity(report.findings).total;
  const suite = `aegis ${report.scanType}`;
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites name="aegis scan" tests="${n}" failures="${n}" errors="0">`);
  out.push(`  <testsuite name="${xmlEscape(suite)}" tests="${n}" failures="${n}" errors="0" skipped="0" timestamp="${xmlEscape(report.generatedAt)}">`);
  for (const f of report.findings) {
    const body = [
      `${f.severity.toUpperCase()} ${f.rule_id}${f.cwe ? ` (${f.cwe})` : ''}`,
      `at ${locationText(f)}`,
      messageOf(f),
      f.evidence ? `evidence: ${f.evidence}` : '',
      `fingerprint: ${f.fingerprint}`,
    ].filter(Boolean);
    out.push(`    <testcase classname="${xmlEscape(`${suite}.${f.rule_id}`)}" name="${xmlEscape(`${f.title} at ${locationText(f)}`)}" file="${xmlEscape(locationUri(f))}">`);
    out.push(`      <failure type="${f.severity}" message="${xmlEscape(`${f.title} (${f.severity})`)}">${xmlEscape(body.join('\n'))}</failure>`);
    out.push('    </testcase>');
  }
  out.push('  </testsuite>');
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
