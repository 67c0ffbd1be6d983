// Protocol anomalies: encodings a legitimate client does not produce (the request reader records
// them, inspect/fields.ts), scanner fingerprints and debugging methods.
//
// Levels of the anomaly rules:
//   - overlong_utf8, percent_u, nul_byte, multipart_invalid — level 1. No browser or HTTP library
//     sends overlong UTF-8, IIS %uXXXX escapes or NUL characters, and a multipart body that does not
//     parse is either broken or built to be read differently by the gateway and the origin;
//   - invalid_utf8 — level 2: old clients and some non-UTF-8 forms still send Latin-1 bytes (%E9);
//   - duplicate_json_key — level 3: a parser-differential trick, but some serialisers emit repeats;
//   - parameter_pollution — level 4: `tag=a&tag=b` is how many forms send lists.
import type { Anomaly } from '../anomalies.ts';
import type { ParanoiaLevel, RuleDefinition } from '../types.ts';
import { ALL_INPUT } from './fragments.ts';

const ANOMALY_RULES: Record<Anomaly, { level: ParanoiaLevel; description: string }> = {
  overlong_utf8: { level: 1, description: 'An overlong UTF-8 encoding (%C0%AF for /), used to slip characters past filters' },
  percent_u: { level: 1, description: 'An IIS %uXXXX escape, which only old IIS decodes' },
  nul_byte: { level: 1, description: 'A NUL character in the path or a parameter, which truncates strings in C-based code' },
  multipart_invalid: { level: 1, description: 'A multipart body that does not parse cleanly (missing boundary, unterminated, malformed part headers)' },
  invalid_utf8: { level: 2, description: 'Percent-encoded bytes that are not UTF-8 (%FF)' },
  duplicate_json_key: { level: 3, description: 'A JSON object with the same key twice, which parsers resolve differently' },
  parameter_pollution: { level: 4, description: 'A parameter sent more than once under one name' },
};

const anomalyRules = (Object.keys(ANOMALY_RULES) as Anomaly[]).map(
  (anomaly): RuleDefinition => ({
    id: `protocol.${anomaly}`,
    category: 'protocol',
    paranoia_level: ANOMALY_RULES[anomaly].level,
    description: ANOMALY_RULES[anomaly].description,
    targets: [],
    check: { kind: 'anomaly', anomaly },
  }),
);

const SCANNERS = [
  'sqlmap', 'nikto', 'nmap scripting engine', 'masscan', 'zgrab', 'nuclei', 'acunetix', 'netsparker', 'wpscan', 'dirbuster', 'gobuster',
  'feroxbuster', 'ffuf', 'wfuzz', 'w3af', 'arachni', 'skipfish', 'commix', 'havij', 'openvas', 'nessus', 'jaeles', 'xsstrike',
  'sqlninja', 'whatweb', 'joomscan', 'droopescan', 'dotdotpwn', 'fimap', 'paros', 'webinspect', 'morfeus', 'zmeu', 'jorgee', 'hydra',
  'brutus', 'bsqlbf', 'pangolin', 'httprint', 'dirb', 'uniscan', 'sqlsus', 'webshag', 'nsfocus', 'netlab360', 'fuzz faster u fool', 'openvasvt',
  'nasl', 'interactsh', 'burp collaborator', 'qualys was', 'appscan', 'zap/', 'detectify', 'crowdstrike falcon surface',
];

export const PROTOCOL_RULES: readonly RuleDefinition[] = [
  ...anomalyRules.filter((r) => r.paranoia_level === 1),
  {
    id: 'protocol.scanner_user_agent',
    category: 'protocol',
    paranoia_level: 1,
    description: 'A User-Agent naming a vulnerability scanner or attack tool (sqlmap, nikto, nuclei, masscan, …)',
    targets: ['user_agent'],
    pattern: `(?:^|[^a-z0-9])(?:${SCANNERS.map((s) => s.replace(/ /g, '\\s')).join('|')})(?:[^a-z0-9]|$)`,
  },
  {
    id: 'protocol.oast_callback',
    category: 'protocol',
    paranoia_level: 1,
    description: 'A host of an out-of-band testing service (Burp Collaborator, interactsh, oast.*, dnslog, canarytokens): a probe that asks the server to call out',
    targets: ALL_INPUT,
    pattern: String.raw`[a-z0-9-]{6,}\.(?:burpcollaborator\.net|oastify\.com|oast\.(?:me|pro|fun|site|online|live)|interact\.sh|interactsh\.com|dnslog\.cn|ceye\.io|requestrepo\.com|canarytokens\.com|bxss\.me|xss\.ht|dnslog\.link)\b`,
  },
  {
    id: 'protocol.encoded_unreserved',
    category: 'protocol',
    paranoia_level: 1,
    description:
      'Letters, digits or dots left percent-encoded after decoding, three in a row (%2568%2574 sent for %68%74, %25%2532%2565 — each hex digit encoded again — for %2e): no client encodes characters that need no encoding, let alone twice; it hides a word or a dot-dot from a filter that decodes once',
    targets: ['value', 'name', 'path'],
    // The raw text is the value decoded once, as the application reads it: what is still encoded was encoded twice on the wire.
    form: 'raw',
    pattern: String.raw`(?:%(?:25|%)*(?:2e|3[0-9]|4[1-9a-f]|5[0-9a]|6[1-9a-f]|7[0-9a])){3}`,
  },
  ...anomalyRules.filter((r) => r.paranoia_level === 2),
  {
    id: 'protocol.debug_method',
    category: 'protocol',
    paranoia_level: 2,
    description: 'The TRACE, TRACK or DEBUG method, which echo requests or switch servers into debugging',
    targets: [],
    check: { kind: 'method', methods: ['TRACE', 'TRACK', 'DEBUG'] },
  },
  {
    id: 'protocol.header_injection',
    category: 'protocol',
    paranoia_level: 2,
    description: 'A line break followed by a response header name (CRLF injection: %0d%0aSet-Cookie:)',
    targets: ['value', 'name', 'path', 'referer'],
    pattern: String.raw`\n\s*(?:set-cookie|location|content-(?:type|length|security-policy)|transfer-encoding|access-control-allow-[a-z-]+|x-xss-protection|refresh|link|http/\d)\s*:`,
  },
  {
    id: 'protocol.xml_entity_declaration',
    category: 'protocol',
    paranoia_level: 2,
    description: 'An XML entity or DTD declaration (entity-expansion attacks such as billion laughs)',
    targets: ['value', 'body'],
    pattern: String.raw`<!\s*(?:entity|doctype[^>]*\[)`,
  },
  ...anomalyRules.filter((r) => r.paranoia_level === 3),
  {
    id: 'protocol.missing_user_agent',
    category: 'protocol',
    paranoia_level: 3,
    description: 'No User-Agent header (browsers and mainstream HTTP libraries always send one)',
    targets: [],
    check: { kind: 'missing_header', header: 'user-agent' },
  },
  ...anomalyRules.filter((r) => r.paranoia_level === 4),
];
