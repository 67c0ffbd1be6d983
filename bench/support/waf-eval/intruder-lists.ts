// swisskyrepo/PayloadsAllTheThings' intruder lists (one payload per line), each payload placed as a
// client sends a form value: in the query string, in a urlencoded form body and in a JSON body
// (percent- or JSON-encoded, so the server's decoding gives back the payload as written: encoding
// `plain`). XXE payloads are also sent as an XML body, and the CRLF list (URL paths) as the path,
// since that is where those payloads are meant to go.
import type { BareRepo } from './bare-repo.ts';
import { CLIENT_HEADERS } from './gotestwaf-placeholders.ts';
import type { EvalRequest, Placement } from './types.ts';

/** Longer lists are thinned to this many payloads, evenly spread (dotdotpwn has 21 000 lines). */
export const PER_FILE_CAP = 1000;

interface ListSource {
  class: string;
  /** A directory (every file below it) or one file. */
  path: string;
  /** Files under `path` to leave out, and why (for the report). */
  exclude?: { pattern: RegExp; why: string };
  /** Placements besides query, form and JSON. */
  extra?: Placement[];
}

const SOURCES: ListSource[] = [
  { class: 'sqli', path: 'SQL Injection/Intruder' },
  { class: 'xss', path: 'XSS Injection/Intruders', exclude: { pattern: /event_handlers\.txt$/, why: 'event attribute names alone (onload, onanimationend, …): names to fuzz an attribute with, not payloads' } },
  { class: 'traversal', path: 'Directory Traversal/Intruder' },
  { class: 'traversal', path: 'File Inclusion/Intruders' },
  { class: 'cmdi', path: 'Command Injection/Intruder' },
  { class: 'ldap', path: 'LDAP Injection/Intruder', exclude: { pattern: /LDAP_attributes\.txt$/, why: 'attribute names (cn, mail, …), not payloads' } },
  { class: 'nosqli', path: 'NoSQL Injection/Intruder' },
  { class: 'ssti', path: 'Server Side Template Injection/Intruder' },
  { class: 'xxe', path: 'XXE Injection/Intruders', extra: ['xml'] },
  { class: 'crlf', path: 'CRLF Injection/Files/crlfinjection.txt', extra: ['path'] },
  { class: 'ssi', path: 'Server Side Include Injection/Files/ssi_esi.txt' },
];

export interface IntruderCorpus {
  attacks: EvalRequest[];
  notes: string[];
}

/** Every n-th line, so a capped list still covers its whole range (its variants are grouped). */
function thin<T>(list: T[], cap: number): T[] {
  if (list.length <= cap) return list;
  const step = list.length / cap;
  return Array.from({ length: cap }, (_, i) => list[Math.floor(i * step)]!);
}

/** The request carrying `payload` in `placement`. */
function place(payload: string, placement: Placement): Pick<EvalRequest, 'method' | 'target' | 'headers' | 'body'> {
  const headers = { ...CLIENT_HEADERS };
  switch (placement) {
    case 'query':
      return { method: 'GET', target: `/search?q=${encodeURIComponent(payload)}`, headers };
    case 'form':
      return { method: 'POST', target: '/search', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: `q=${encodeURIComponent(payload)}` };
    case 'json':
      return { method: 'POST', target: '/api/search', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ q: payload }) };
    case 'xml':
      return { method: 'POST', target: '/api/import', headers: { ...headers, 'content-type': 'application/xml' }, body: payload };
    case 'path':
      // The CRLF list is written as URL paths, percent-encoding and all; only what cannot be on a request line is encoded.
      return { method: 'GET', target: (payload.startsWith('/') ? payload : `/${payload}`).replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c)), headers };
    default:
      throw new Error(`no intruder placement ${placement}`);
  }
}

/**
 * Intruder placeholders some lists leave for the tester to fill (`.../{FILE}` in deep_traversal.txt):
 * filled with a file an attacker would ask for, as Burp Intruder's payload processing does. Sent as
 * written, `{FILE}` is no attack on anything.
 */
const PLACEHOLDERS: Readonly<Record<string, string>> = { '{FILE}': 'etc/passwd' };
const fill = (payload: string): string => payload.replace(/\{FILE\}/g, PLACEHOLDERS['{FILE}']!);

/** Lines of a payload file: empty lines skipped, as bench/managed-rules-eval.ts always read them. */
const payloadLines = (text: string): string[] => text.split(/\r?\n/).filter((line) => line.trim() !== '');

/** A vector file that writes each vector over several lines, one `<div id="N">` block each (MarioXSSVectors). */
const VECTOR_BLOCK = /^<div id="\d+">/;

/** The payloads of a file: its lines, or its `<div id="N">` blocks joined when it writes vectors that way. */
function payloadsOf(text: string): string[] {
  const lines = payloadLines(text);
  if (lines.filter((line) => VECTOR_BLOCK.test(line)).length < 3) return lines;
  const blocks: string[] = [];
  for (const line of lines) {
    if (VECTOR_BLOCK.test(line) || blocks.length === 0) blocks.push(line);
    else blocks[blocks.length - 1] += `\n${line}`;
  }
  return blocks;
}

/**
 * Lines that are no attack on their own, by their shape (never by what any WAF makes of them): a
 * comment of the list's author (`# you will need to customize…`) or a heading of its sections
 * (`#Google.com:`), or probe characters with no letter or digit and at most four characters once
 * percent-decoded (`'`, `||`, `;`, `%0a`) — fuzzers send those to see an error page, and an
 * application gets them in ordinary text.
 */
function notAnAttack(line: string): string | null {
  if (/^#\s+[a-z][a-z\s,.'()/-]*$/i.test(line)) return 'comment';
  // A section heading of a list (`#Google.com:`, `#AOL/Yahoo`): a name, no call and no markup.
  if (/^#[a-z][\w\s,.'/-]*:?$/i.test(line)) return 'comment';
  let decoded = line;
  try {
    decoded = decodeURIComponent(line);
  } catch {
    // Not valid percent-encoding: judge the line as written.
  }
  // Short: `../../../` has no letter either, and it is a traversal.
  if (!/[\p{L}\p{N}]/u.test(decoded) && [...decoded.trim()].length <= 4) return 'probe characters';
  return null;
}

export function intruderRequests(repo: BareRepo): IntruderCorpus {
  const attacks: EvalRequest[] = [];
  const notes: string[] = [];
  const seen = new Map<string, Set<string>>();
  for (const source of SOURCES) {
    const files = repo.files(source.path);
    if (files.length === 0) notes.push(`${source.path}: not in this checkout`);
    for (const file of files) {
      if (source.exclude?.pattern.test(file)) {
        notes.push(`left out ${file}: ${source.exclude.why}`);
        continue;
      }
      // One class's payloads once, from the first file that lists them.
      const classSeen = seen.get(source.class) ?? seen.set(source.class, new Set()).get(source.class)!;
      const all = payloadsOf(repo.read(file));
      const dropped = new Map<string, number>();
      const lines = all.filter((line) => {
        const why = notAnAttack(line);
        if (why) dropped.set(why, (dropped.get(why) ?? 0) + 1);
        return why === null && !classSeen.has(line) && classSeen.add(line);
      });
      if (dropped.size > 0) notes.push(`${file}: left out ${[...dropped].map(([why, n]) => `${n} ${why} line${n === 1 ? '' : 's'}`).join(', ')}`);
      const kept = thin(lines, PER_FILE_CAP);
      if (kept.length < lines.length) notes.push(`${file}: ${kept.length} of its ${lines.length} new payloads (every ${(lines.length / kept.length).toFixed(1)}th)`);
      const filled = kept.filter((line) => line.includes('{FILE}')).length;
      if (filled > 0) notes.push(`${file}: {FILE} filled with ${PLACEHOLDERS['{FILE}']} in ${filled} payloads`);
      for (const payload of kept.map(fill)) {
        for (const placement of ['query', 'form', 'json', ...(source.extra ?? [])] as Placement[]) {
          attacks.push({ ...place(payload, placement), class: source.class, placement, encoding: 'plain', source: `patt:${file}` });
        }
      }
    }
  }
  return { attacks, notes };
}
