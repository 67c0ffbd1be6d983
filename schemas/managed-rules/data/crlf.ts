// CRLF injection: line breaks that end a header the application writes from input (a redirect's
// Location, a Set-Cookie, a log line) and start one of the attacker's — response splitting, session
// fixation, cache poisoning. Canonical text has every line-break run as one `\n`; the characters some
// servers truncate to a CR or LF (U+560A/U+560D `嘊嘍`, U+010A/U+010D) count as line breaks here.
// Level 1 needs a header name and colon after the break, or a status line; multi-line form fields
// ("Note: …" on a line of its own) pass: the names are those that change how a response is handled.
import type { RuleDefinition } from '../types.ts';

const T = ['value', 'name', 'path', 'referer', 'header', 'body'] as const;
/**
 * Line breaks, the characters truncated to one (lower case: canonical text is lower-cased), and a
 * break still percent-encoded after canonical decoding (%0a sent encoded three times or more, for
 * a chain of redirects or proxies that each decode once).
 */
const BREAK = String.raw`(?:[\n\x{010b}\x{010d}\x{560a}\x{560d}]|%(?:25)*0[ad])`;
/** Headers no multi-line text writes at the start of a line. */
const INJECTED_HEADER = String.raw`(?:set-cookie|content-(?:type|length|disposition|security-policy|encoding)|transfer-encoding|access-control-allow-[a-z-]+|x-xss-protection|x-frame-options|cache-control|x-forwarded-[a-z]+|x-original-url|x-rewrite-url|strict-transport-security|x-powered-by)`;
/** Headers whose names are also words ("Location: Berlin" in a message): only after a one-token start. */
const WORD_HEADER = String.raw`(?:location|refresh|link|host|cookie|authorization|vary|server|status)`;

export const CRLF_RULES: readonly RuleDefinition[] = [
  {
    id: 'crlf.header_injection',
    category: 'crlf',
    paranoia_level: 1,
    description: 'A line break followed by a header that changes how a response is handled (%0d%0aSet-Cookie:, %0aLocation:)',
    targets: T,
    pattern: String.raw`${BREAK}\s*${INJECTED_HEADER}\s*:|^[^\s]*${BREAK}\s*${WORD_HEADER}\s*:`,
  },
  {
    id: 'crlf.response_splitting',
    category: 'crlf',
    paranoia_level: 1,
    description: 'A line break followed by an HTTP status line or a blank line and markup (a second response)',
    targets: T,
    pattern: String.raw`${BREAK}\s*http/\d(?:\.\d)?\s+\d{3}\b|${BREAK}\s*content-length\s*:\s*0\b`,
  },
  {
    id: 'crlf.any_header',
    category: 'crlf',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A line break followed by any header-shaped line (%0aX-Anything: value) in a path, a header or a one-line value',
    targets: ['path', 'referer', 'header', 'name'],
    pattern: String.raw`${BREAK}\s*[a-z][a-z0-9-]{1,40}\s*:`,
  },
];
