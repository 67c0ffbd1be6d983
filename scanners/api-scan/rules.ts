// The API scan's rules: stable ids (policies and fingerprints name them), severity and CWE.
import { createHash } from 'node:crypto';
import type { Severity } from '../types.ts';

export type ApiRuleId =
  | 'api-server-error'
  | 'api-schema-violation'
  | 'api-undeclared-status'
  | 'api-auth-bypass'
  | 'api-injection-sqli'
  | 'api-injection-error'
  | 'api-bola';

export interface ApiRule {
  id: ApiRuleId;
  title: string;
  severity: Severity;
  cwe: string | null;
  description: string;
}

export const API_RULES: Readonly<Record<ApiRuleId, ApiRule>> = {
  'api-server-error': {
    id: 'api-server-error',
    title: 'Server error on a valid request',
    severity: 'medium',
    cwe: 'CWE-755',
    description: 'A request built from the operation\'s own schemas and examples was answered with a 5xx status: an exceptional condition the server does not handle.',
  },
  'api-schema-violation': {
    id: 'api-schema-violation',
    title: 'Response does not match the declared schema',
    severity: 'medium',
    // CWE-684 (Incorrect Provision of Specified Functionality): the server does not do what its
    // published specification says. CWE-1287 describes a recipient failing to check the type of its
    // input, which is the risk this creates for clients, not the flaw of the server that answers.
    cwe: 'CWE-684',
    description: 'The body of a response with a declared status is not valid against the JSON schema the document declares for it (or is not JSON when JSON is declared).',
  },
  'api-undeclared-status': {
    id: 'api-undeclared-status',
    title: 'Undeclared response status',
    severity: 'low',
    cwe: null,
    description: 'A valid request got a status code the operation does not declare, and the operation declares no `default` response.',
  },
  'api-auth-bypass': {
    id: 'api-auth-bypass',
    title: 'Operation answers without the declared authentication',
    severity: 'high',
    cwe: 'CWE-306',
    description: 'The operation declares a security requirement, yet a request without any credentials got a 2xx answer.',
  },
  'api-injection-sqli': {
    id: 'api-injection-sqli',
    title: 'SQL injection (database error)',
    severity: 'high',
    cwe: 'CWE-89',
    description: 'A quote added to a string parameter made the response carry a database error message that the valid request did not: the value reaches an SQL statement unescaped.',
  },
  'api-injection-error': {
    id: 'api-injection-error',
    title: 'Possible SQL injection (server error on a quote)',
    severity: 'medium',
    cwe: 'CWE-89',
    description: 'A quote added to a string parameter caused a 5xx that the valid request did not, while the same quote doubled (escaped, as SQL does) did not: the value probably reaches a query unescaped.',
  },
  'api-bola': {
    id: 'api-bola',
    title: 'Another object reachable by changing its id (BOLA)',
    severity: 'high',
    cwe: 'CWE-639',
    description:
      'A secured read operation served the scan\'s identity a different object, carrying the id asked for, when its id path parameter was changed to a neighbouring id the identity was not shown in its own listings. One identity cannot prove the object belongs to someone else (it may be shared by design): confirm by hand.',
  },
};

export type { PolicyMark as PolicyAction } from '../web/policy.ts';

/** Rule, method, path template and parameter: the same problem keeps its fingerprint across scans. */
export function apiFingerprint(rule: ApiRuleId, method: string, pathTemplate: string, parameter?: string): string {
  return createHash('sha256').update(`${rule}\n${method.toUpperCase()}\n${pathTemplate}\n${parameter ?? ''}`).digest('hex');
}
