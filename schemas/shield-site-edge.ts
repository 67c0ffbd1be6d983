// The parts of a Shield site that make it an edge (issue 41): its TLS settings (writable) and what
// Aegis computes about it (read-only): whether it serves, whether its organisation proved control
// of the domain and how to do so, and the certificate it is served with. docs/shield-edge.md.
import { withoutDefaults } from './common.ts';

/** One year: the shortest max-age the HSTS preload list accepts. */
export const HSTS_PRELOAD_MIN_AGE = 31_536_000;
/** Two years: the longest max-age worth sending (browsers cap it about there). */
export const HSTS_MAX_AGE_LIMIT = 63_072_000;
export const TLS_MODES = ['acme', 'custom', 'off'] as const;
export const SITE_STATUSES = ['active', 'pending', 'superseded'] as const;
export const DOMAIN_PROOF_METHODS = ['dns', 'http', 'acme'] as const;

const hstsProperties = {
  max_age: {
    type: 'integer',
    minimum: 0,
    maximum: HSTS_MAX_AGE_LIMIT,
    default: HSTS_PRELOAD_MIN_AGE,
    description: 'Seconds browsers keep to HTTPS (`max-age`), at most 63072000 (two years); default one year. 0 tells browsers to forget the policy.',
  },
  include_subdomains: { type: 'boolean', default: false, description: 'Whether the policy covers every subdomain (`includeSubDomains`): only when all of them serve HTTPS.' },
  preload: {
    type: 'boolean',
    default: false,
    description: 'Adds `preload` (asking browsers to ship the domain as HTTPS-only). Needs `include_subdomains` and a `max_age` of at least 31536000.',
  },
} as const;

const hsts = {
  type: ['object', 'null'],
  additionalProperties: false,
  default: null,
  description: 'Strict-Transport-Security sent on HTTPS answers; null (default) sends none. Browsers then refuse plain HTTP for the domain for `max_age` seconds: turn it on once HTTPS works.',
  properties: hstsProperties,
} as const;

const tlsProperties = {
  mode: {
    type: 'string',
    enum: TLS_MODES,
    description:
      '`acme`: Aegis obtains and renews a certificate itself (the domain must point at the gateway); `custom`: the certificate uploaded with PUT /api/v1/shield/sites/{id}/certificate ' +
      '(uploading one sets this); `off`: plain HTTP only.',
  },
  redirect_http: { type: 'boolean', default: false, description: 'Answer plain-HTTP requests with a permanent redirect to HTTPS once the site has a certificate.' },
  hsts,
  min_version: { type: 'string', enum: ['1.2', '1.3'], default: '1.2', description: 'Oldest TLS version accepted from clients: `1.2` (default) or `1.3`.' },
} as const;

/** `tls` as config and create bodies give it: `mode` is required, the rest defaults. */
export const tlsSpec = {
  type: 'object',
  additionalProperties: false,
  required: ['mode'],
  description:
    'TLS at the edge: how the site gets its certificate, HTTP→HTTPS redirect, HSTS and the oldest TLS version. Omitted on create: `mode` is `acme` when the server has a TLS port ' +
    '(AEGIS_SHIELD_TLS_PORT), else `off`, the rest their defaults. Omitted in config: left as it is.',
  properties: tlsProperties,
} as const;

/** `tls` in an update: every field optional, merged into the stored settings (hsts too, field by field). */
export const tlsUpdate = {
  type: 'object',
  additionalProperties: false,
  description: tlsSpec.description,
  properties: withoutDefaults({ ...tlsProperties, hsts: { ...hsts, properties: withoutDefaults(hstsProperties) } }),
} as const;

export const tlsResource = {
  ...tlsSpec,
  required: ['mode', 'redirect_http', 'hsts', 'min_version'],
  properties: { ...tlsProperties, hsts: { ...hsts, required: ['max_age', 'include_subdomains', 'preload'] } },
} as const;

const nullableTime = (description: string) => ({ type: ['string', 'null'], format: 'date-time', readOnly: true, description }) as const;

export const siteStatusSchema = {
  type: 'string',
  enum: SITE_STATUSES,
  readOnly: true,
  description:
    'Whether the gateway serves this site. `active`: it does. `pending`: it serves nothing until the organisation proves control of the domain ' +
    '(`domain_verification` says how) — with AEGIS_SHIELD_DOMAIN_PROOF=required every unverified site, otherwise one whose domain an older site of another organisation serves. ' +
    '`superseded`: another organisation proved control of the domain and its site serves it.',
} as const;

export const domainVerificationSchema = {
  type: 'object',
  readOnly: true,
  required: ['status', 'method', 'verified_at', 'checked_at', 'error', 'txt_record', 'http_token'],
  description: 'Whether the organisation proved it controls the domain, and the two ways to prove it: publish `txt_record`, or serve `http_token`; then POST /api/v1/shield/sites/{id}/verify-domain.',
  properties: {
    status: { type: 'string', enum: ['verified', 'unverified'], description: '`verified` once a proof succeeded (and, for DNS, while the record stays).' },
    method: { type: ['string', 'null'], enum: [...DOMAIN_PROOF_METHODS, null], description: 'How control was proved: `dns`, `http` or `acme` (a certificate validation); null while unverified.' },
    verified_at: nullableTime('When control was proved; null while unverified.'),
    checked_at: nullableTime('When the proof was last checked (DNS proofs are checked again periodically).'),
    error: { type: ['string', 'null'], description: 'What the last check found instead of the proof, or why it could not look; null after a success.' },
    txt_record: {
      type: 'object',
      required: ['name', 'value'],
      description: 'The DNS TXT record that proves control.',
      properties: { name: { type: 'string', description: '`_aegis-verify.<domain>`.' }, value: { type: 'string', description: '`aegis-verify=<token>`.' } },
    },
    http_token: {
      type: 'object',
      required: ['url', 'body'],
      description: 'The HTTP answer that proves control: a GET of `url` (plain HTTP, the server answering for the domain) must return 200 with exactly `body`.',
      properties: { url: { type: 'string', description: '`http://<domain>/.well-known/aegis-verify/<token>`.' }, body: { type: 'string', description: 'The token.' } },
    },
  },
} as const;

export const certificateSummarySchema = {
  type: ['object', 'null'],
  readOnly: true,
  required: ['source', 'names', 'issuer', 'not_after', 'fingerprint', 'acme_order'],
  description: 'The certificate the site is served with over TLS (never its key), and where obtaining one by ACME stands; null when it has neither.',
  properties: {
    source: { type: ['string', 'null'], enum: ['custom', 'acme', null], description: '`custom` (uploaded) or `acme`; null while there is no certificate yet.' },
    names: { type: 'array', items: { type: 'string' }, description: 'DNS names the certificate covers.' },
    issuer: { type: ['string', 'null'], description: 'The issuer’s distinguished name.' },
    not_after: nullableTime('When the certificate expires.'),
    fingerprint: { type: ['string', 'null'], description: 'SHA-256 of the certificate (DER), hex pairs separated by colons.' },
    acme_order: {
      type: ['object', 'null'],
      required: ['status', 'error', 'next_attempt_at'],
      description: 'Obtaining or renewing the certificate by ACME (`tls.mode: acme`); null when none was started.',
      properties: {
        status: { type: 'string', enum: ['pending', 'valid', 'failed'], description: '`pending` while an order runs or waits, `valid` once it delivered, `failed` after its last attempt failed.' },
        error: { type: ['string', 'null'], description: 'Why the last attempt failed.' },
        next_attempt_at: nullableTime('When the next attempt (a retry or the renewal) is due.'),
      },
    },
  },
} as const;
