// openappsec/mgm-web-attack-payloads: the attack payloads (mgm security partners' WAF Payload
// Collection) of open-appsec's WAF Comparison Project, the public 2025-26 comparison of commercial
// and open WAFs. Each payload is sent as that project's tool sends it: GET /?p=… and a urlencoded
// POST p=…, the payload quoted as Python's urllib.parse.quote quotes it (only letters, digits, `_.-~`
// and `/` kept) with `%25` put back to `%`, so a payload written percent-encoded reaches the
// application decoded once (encoding `as_written`). Shellshock also goes in the User-Agent, as the
// collection's own nuclei template sends it. The collection's false-positive lists are sent the same
// way as benign cases.
import type { BareRepo } from './bare-repo.ts';
import type { EvalRequest } from './types.ts';

const DIR = 'nuclei/payloads';
/** The collection's directories, and the class each is reported under. */
const CLASSES: Readonly<Record<string, string>> = { cmdexe: 'cmdi', shellshock: 'cmdi', log4shell: 'java', sqli: 'sqli', xss: 'xss', traversal: 'traversal', xxe: 'xxe' };
/** The User-Agent the comparison's tool sends. */
const USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:105.0) Gecko/20100101 Firefox/105.0';

export interface WcpCorpus {
  attacks: EvalRequest[];
  benign: EvalRequest[];
  notes: string[];
}

/** urllib.parse.quote(text) (UTF-8, safe `/`), then `%25` → `%`: percent escapes already in the payload stay escapes. */
export function wcpQuote(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.~/-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out.replaceAll('%25', '%');
}

function requestsFor(payload: string, kind: string, cls: string, source: string): EvalRequest[] {
  const value = wcpQuote(payload);
  const common = { class: cls, encoding: 'as_written', source };
  const requests: EvalRequest[] = [
    { ...common, method: 'GET', target: `/?p=${value}`, headers: { 'user-agent': USER_AGENT }, placement: 'query' },
    { ...common, method: 'POST', target: '/', headers: { 'user-agent': USER_AGENT, 'content-type': 'application/x-www-form-urlencoded' }, body: `p=${value}`, placement: 'form' },
  ];
  if (kind === 'shellshock') requests.push({ ...common, method: 'GET', target: '/?tp_param=foobar', headers: { 'user-agent': payload }, placement: 'user_agent' });
  return requests;
}

export function wcpRequests(repo: BareRepo): WcpCorpus {
  const attacks: EvalRequest[] = [];
  const benign: EvalRequest[] = [];
  const notes: string[] = [];
  for (const [kind, cls] of Object.entries(CLASSES)) {
    for (const [file, into, as] of [['true-positives', attacks, cls], ['false-positives', benign, 'benign']] as const) {
      const path = `${DIR}/${kind}/${file}.txt`;
      if (repo.files(path).length === 0) {
        notes.push(`${path}: not in this checkout`);
        continue;
      }
      const lines = repo.read(path).split(/\r?\n/).filter((line) => line.length > 0);
      for (const line of lines) into.push(...requestsFor(line, kind, as, `wcp:${kind}`));
    }
  }
  return { attacks, benign, notes };
}
