// wallarm/gotestwaf's test cases (testcases/<set>/<case>.yml: payloads, encoders, placeholders)
// turned into requests the way gotestwaf generates them: every payload × encoder × placeholder.
// Each file maps to an attack class; the owasp-api files mix classes, so their payloads are
// classed by what they contain; testcases/false-pos is benign text. GraphQL and gRPC cases are
// left out: they need endpoints that speak those protocols.
import { parse as parseYaml } from 'yaml';
import type { BareRepo } from './bare-repo.ts';
import { ENCODERS } from './gotestwaf-encoders.ts';
import { placeRequest, type Placeholder, type RawRequestConfig } from './gotestwaf-placeholders.ts';
import type { EvalRequest } from './types.ts';

export interface GotestwafCorpus {
  attacks: EvalRequest[];
  /** testcases/false-pos, source `gotestwaf:false-pos`. */
  benign: EvalRequest[];
  /** What was left out or adjusted, for the report. */
  notes: string[];
}

/** How a file's payloads are classed: a class, by content, benign, or skipped (with why). */
type FileClass = { class: string } | { byContent: true } | { benign: true } | { skip: string };

const FILE_CLASSES: [RegExp, FileClass][] = [
  [/\/false-pos\//, { benign: true }],
  [/owasp-api\/graphql/, { skip: 'GraphQL placeholder: needs a GraphQL endpoint' }],
  [/owasp-api\/grpc/, { skip: 'gRPC placeholder: needs a gRPC endpoint' }],
  [/owasp-api\//, { byContent: true }],
  // Before sql-injection, which its name contains.
  [/nosql-injection/, { class: 'nosqli' }],
  [/sql-injection|sqli/, { class: 'sqli' }],
  [/xss/, { class: 'xss' }],
  [/rce|shell-injection/, { class: 'cmdi' }],
  [/path-traversal|lfi/, { class: 'traversal' }],
  [/crlf/, { class: 'crlf' }],
  [/ldap-injection/, { class: 'ldap' }],
  [/mail-injection/, { class: 'mail' }],
  [/ss-include/, { class: 'ssi' }],
  [/sst-injection/, { class: 'ssti' }],
  [/xml-injection|xxe/, { class: 'xxe' }],
  [/user-agent/, { class: 'user_agent' }],
];

/** The owasp-api payloads are SQL or script snippets; which one, by their words. */
function classByContent(payload: string): string {
  if (/<script|alert|confirm|prompt|javascript:/i.test(payload)) return 'xss';
  if (/\b(union|select|and|or|sleep)\b|json_depth/i.test(payload)) return 'sqli';
  return 'other';
}

interface TestCase {
  payloads: string[];
  encoders: string[];
  placeholders: Placeholder[];
}

/** A RawRequest's settings as gotestwaf reads them: method required, path `/` by default. */
function rawRequestConfig(value: unknown): RawRequestConfig | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const conf = value as Record<string, unknown>;
  if (typeof conf.method !== 'string') return undefined;
  const headers = typeof conf.headers === 'object' && conf.headers !== null ? Object.fromEntries(Object.entries(conf.headers).map(([k, v]) => [k, String(v)])) : {};
  return { method: conf.method, path: typeof conf.path === 'string' && conf.path !== '' ? conf.path : '/', headers, body: typeof conf.body === 'string' ? conf.body : '' };
}

function parseCase(text: string): TestCase {
  // gotestwaf's YAML library (go-yaml, after libyaml) reads `\'` in a double-quoted string as `'`;
  // the YAML spec and the `yaml` package do not, and three payloads use it.
  const doc = parseYaml(text.replace(/(?<!\\)((?:\\\\)*)\\'/g, "$1'")) as Record<string, unknown>;
  const list = (key: string): unknown[] => (Array.isArray(doc[key]) ? (doc[key] as unknown[]) : []);
  const placeholders = list('placeholder').map((entry): Placeholder => {
    if (typeof entry === 'string') return { name: entry };
    const [name, config] = Object.entries(entry as Record<string, unknown>)[0] ?? ['?', undefined];
    return { name, config: rawRequestConfig(config) };
  });
  return { payloads: list('payload').map(String), encoders: list('encoder').map(String), placeholders };
}

export function gotestwafRequests(repo: BareRepo): GotestwafCorpus {
  const attacks: EvalRequest[] = [];
  const benign: EvalRequest[] = [];
  const skipped = new Map<string, number>();
  let queryEscaped = 0;
  const skip = (why: string, n = 1) => skipped.set(why, (skipped.get(why) ?? 0) + n);
  for (const path of repo.files('testcases').filter((p) => /\.ya?ml$/.test(p))) {
    const name = path.replace(/^testcases\//, '');
    const fileClass = FILE_CLASSES.find(([pattern]) => pattern.test(path))?.[1] ?? { class: 'other' };
    const test = parseCase(repo.read(path));
    if ('skip' in fileClass) {
      skip(`${name}: ${fileClass.skip}`, test.payloads.length * test.encoders.length * test.placeholders.length);
      continue;
    }
    for (const [p, payload] of test.payloads.entries()) {
      for (const encoderName of test.encoders) {
        const encoder = ENCODERS[encoderName];
        if (!encoder) {
          skip(`unknown encoder ${encoderName}`, test.placeholders.length);
          continue;
        }
        const encoded = encoder.encode(payload);
        for (const placeholder of test.placeholders) {
          const wire = placeRequest(placeholder, encoded, `${name}|${p}|${encoderName}|${placeholder.name}`);
          if ('unbuildable' in wire) {
            skip(`${placeholder.name}: ${wire.unbuildable}`);
            continue;
          }
          if (wire.queryEscaped) queryEscaped++;
          const request: EvalRequest = {
            method: wire.method,
            target: wire.target,
            headers: wire.headers,
            ...(wire.body === undefined ? {} : { body: wire.body }),
            class: 'benign' in fileClass ? 'benign' : 'byContent' in fileClass ? classByContent(payload) : fileClass.class,
            placement: wire.placement,
            encoding: encoder.label,
            source: 'benign' in fileClass ? 'gotestwaf:false-pos' : `gotestwaf:${name}`,
          };
          ('benign' in fileClass ? benign : attacks).push(request);
        }
      }
    }
  }
  const notes = [...skipped].map(([why, n]) => `skipped ${n}: ${why}`);
  if (queryEscaped > 0) notes.push(`${queryEscaped} query strings had spaces or non-ASCII bytes percent-encoded (Go would write them raw, an invalid request line)`);
  return { attacks, benign, notes };
}
