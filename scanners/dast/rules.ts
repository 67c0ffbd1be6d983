// The DAST rule catalogue. Ids are stable (findings, policies and fingerprints refer to them);
// CWEs and severities follow OWASP ZAP's equivalent rules where there is one.
//
// Policy: a scan policy maps rule ids to `warn`, `fail` or `ignore`. Rules a policy leaves out get
// the default: `fail` for high and critical severities, `warn` otherwise. An ignored rule is not
// run at all (no probe is sent for it) and never reported.
import type { Severity } from '../types.ts';
import type { AttackClass } from '../web/types.ts';
import { policyMark, type PolicyMark, type ScanPolicy } from '../web/policy.ts';

export type DastPolicyAction = PolicyMark;
export type DastPolicy = ScanPolicy;

export interface DastRule {
  id: string;
  title: string;
  cwe: string;
  severity: Severity;
  /** Passive rules only read responses the crawl got; active rules send probes of their own. */
  kind: 'passive' | 'active';
  /** Injection rules: the attack class a virtual patch is derived for. */
  attack?: AttackClass;
  description: string;
}

const RULE_LIST: readonly DastRule[] = [
  {
    id: 'dast-xss-reflected',
    title: 'Reflected cross-site scripting',
    cwe: 'CWE-79',
    severity: 'high',
    kind: 'active',
    attack: 'xss',
    description: 'A unique marker sent with `"\'><` is returned unescaped in an HTML response, outside comments and text-only elements: the parameter can inject markup and script.',
  },
  {
    id: 'dast-sqli-error',
    title: 'SQL injection (error-based)',
    cwe: 'CWE-89',
    severity: 'high',
    kind: 'active',
    attack: 'sqli',
    description: 'Adding quotes to the parameter makes the response show a database syntax error absent from the normal response: the value is concatenated into SQL.',
  },
  {
    id: 'dast-sqli-boolean',
    title: 'SQL injection (boolean-based)',
    cwe: 'CWE-89',
    severity: 'high',
    kind: 'active',
    attack: 'sqli',
    description: 'Appending an always-true condition leaves the response as it was while an always-false one changes it, consistently over two pairs: the condition is evaluated by the database.',
  },
  {
    id: 'dast-sqli-time',
    title: 'SQL injection (time-based)',
    cwe: 'CWE-89',
    severity: 'high',
    kind: 'active',
    attack: 'sqli',
    description: 'A database sleep appended to the parameter delays the response by the requested time, for two different delays, while the same payload with no delay does not.',
  },
  {
    id: 'dast-cmdi-time',
    title: 'OS command injection (time-based)',
    cwe: 'CWE-78',
    severity: 'critical',
    kind: 'active',
    attack: 'cmdi',
    description: 'A shell `sleep` appended to the parameter delays the response by the requested time, for two different delays, while `sleep 0` does not: the value reaches a shell.',
  },
  {
    id: 'dast-ssti',
    title: 'Server-side template injection',
    cwe: 'CWE-1336',
    severity: 'high',
    kind: 'active',
    attack: 'ssti',
    description: 'A template expression multiplying two random numbers comes back as their product: the value is compiled as a template, which usually leads to code execution.',
  },
  {
    id: 'dast-open-redirect',
    title: 'Open redirect',
    cwe: 'CWE-601',
    severity: 'medium',
    kind: 'active',
    attack: 'open_redirect',
    description: 'A URL-valued parameter set to an external host the scanner chose produces a redirect to that host: phishing links can borrow the site’s name.',
  },
  {
    id: 'dast-path-traversal',
    title: 'Path traversal',
    cwe: 'CWE-22',
    severity: 'high',
    kind: 'active',
    attack: 'traversal',
    description: '`../` sequences (plain, absolute or encoded, in a parameter or the raw URL path) return the content of a system file such as /etc/passwd or win.ini.',
  },
  {
    id: 'dast-missing-csp',
    title: 'Content-Security-Policy header missing',
    cwe: 'CWE-693',
    severity: 'medium',
    kind: 'passive',
    description: 'HTML pages are served without a Content-Security-Policy, the main mitigation when an injection slips through.',
  },
  {
    id: 'dast-missing-hsts',
    title: 'Strict-Transport-Security header missing',
    cwe: 'CWE-319',
    severity: 'low',
    kind: 'passive',
    description: 'HTTPS responses carry no Strict-Transport-Security header, so a first plain-HTTP visit can be intercepted and downgraded. Checked on https targets only.',
  },
  {
    id: 'dast-missing-xfo',
    title: 'Clickjacking protection missing',
    cwe: 'CWE-1021',
    severity: 'medium',
    kind: 'passive',
    description: 'HTML pages have neither X-Frame-Options nor a CSP frame-ancestors directive: other sites can frame them.',
  },
  {
    id: 'dast-missing-xcto',
    title: 'X-Content-Type-Options header missing',
    cwe: 'CWE-693',
    severity: 'low',
    kind: 'passive',
    description: 'Responses lack `X-Content-Type-Options: nosniff`, so browsers may sniff content into an executable type.',
  },
  {
    id: 'dast-cookie-flags',
    title: 'Cookie without security flags',
    cwe: 'CWE-1004',
    severity: 'low',
    kind: 'passive',
    description: 'A cookie is set without HttpOnly or SameSite (and without Secure on HTTPS): script can read it, or it rides along on cross-site requests.',
  },
  {
    id: 'dast-cors-misconfig',
    title: 'CORS allows any origin with credentials',
    cwe: 'CWE-942',
    severity: 'medium',
    kind: 'passive',
    description: 'A foreign Origin sent by the crawler is echoed in Access-Control-Allow-Origin (or `*` is used) together with Access-Control-Allow-Credentials: true: any site can read authenticated responses.',
  },
  {
    id: 'dast-version-banner',
    title: 'Server software version disclosed',
    cwe: 'CWE-497',
    severity: 'low',
    kind: 'passive',
    description: 'Server, X-Powered-By or X-AspNet(Mvc)-Version headers name software with its version, which points attackers at known vulnerabilities.',
  },
  {
    id: 'dast-error-disclosure',
    title: 'Error details or stack trace disclosed',
    cwe: 'CWE-209',
    severity: 'medium',
    kind: 'passive',
    description: 'A response contains a stack trace or framework error page (Node, Java, Python, PHP, .NET, Ruby) revealing code paths and internals.',
  },
  {
    id: 'dast-directory-listing',
    title: 'Directory listing enabled',
    cwe: 'CWE-548',
    severity: 'medium',
    kind: 'passive',
    description: 'A directory URL returns an auto-generated index of its files ("Index of /…"), exposing files not meant to be linked.',
  },
];

export const DAST_RULES: ReadonlyMap<string, DastRule> = new Map(RULE_LIST.map((r) => [r.id, r]));

export function dastRule(id: string): DastRule {
  const rule = DAST_RULES.get(id);
  if (!rule) throw new Error(`unknown DAST rule: ${id}`);
  return rule;
}

/** The action for a rule under a policy: the policy's own, else fail for high/critical, warn otherwise. */
export function policyFor(rule: DastRule, policy: DastPolicy | undefined): DastPolicyAction {
  return policyMark(rule.id, rule.severity, policy);
}

/** Ids of the rules a policy leaves on. */
export function enabledRules(policy: DastPolicy | undefined): Set<string> {
  return new Set(RULE_LIST.filter((r) => policyFor(r, policy) !== 'ignore').map((r) => r.id));
}

/** Policy keys that name no DAST rule (reported in the coverage notes: a typo would otherwise go unnoticed). */
export function unknownPolicyRules(policy: DastPolicy | undefined): string[] {
  return Object.keys(policy ?? {}).filter((id) => !DAST_RULES.has(id));
}
