// A site's TLS settings: the defaults of a new site, how an update merges into what is stored, and
// the one rule the JSON Schema cannot say (HSTS preload needs subdomains and a year).
import { HSTS_PRELOAD_MIN_AGE } from '../../../schemas/index.ts';
import type { SiteTlsSettings, TlsMode } from '../../../platform/db/schema.ts';
import { validationFailed } from '../../../platform/http/errors.ts';

type Hsts = NonNullable<SiteTlsSettings['hsts']>;

/** `tls` as a create or update body may give it: any field left out. */
export interface TlsInput {
  mode?: TlsMode | undefined;
  redirect_http?: boolean | undefined;
  hsts?: Partial<Hsts> | null | undefined;
  min_version?: SiteTlsSettings['min_version'] | undefined;
}

const HSTS_DEFAULT: Hsts = { max_age: HSTS_PRELOAD_MIN_AGE, include_subdomains: false, preload: false };

/** A new site's settings when its creator gives none: ACME when the server terminates TLS, else plain HTTP. */
export function defaultTls(tlsPort: number | undefined): SiteTlsSettings {
  return { mode: tlsPort !== undefined ? 'acme' : 'off', redirect_http: false, hsts: null, min_version: '1.2' };
}

function mergeHsts(stored: Hsts | null, given: Partial<Hsts> | null | undefined): Hsts | null {
  if (given === undefined) return stored;
  if (given === null) return null;
  return { ...(stored ?? HSTS_DEFAULT), ...given };
}

/**
 * `given` over `base`: the fields given replace theirs and the others stay, inside `hsts` too
 * (an `hsts` object given where there was none starts from the defaults).
 */
export function mergeTls(base: SiteTlsSettings, given: TlsInput | undefined): SiteTlsSettings {
  if (!given) return base;
  return {
    mode: given.mode ?? base.mode,
    redirect_http: given.redirect_http ?? base.redirect_http,
    hsts: mergeHsts(base.hsts, given.hsts),
    min_version: given.min_version ?? base.min_version,
  };
}

/** Browsers' preload list takes only a policy that covers subdomains for at least a year: refuse what it would reject. */
export function checkTls(tls: SiteTlsSettings): void {
  const hsts = tls.hsts;
  if (!hsts?.preload) return;
  const missing: string[] = [];
  if (!hsts.include_subdomains) missing.push('tls.hsts.include_subdomains true');
  if (hsts.max_age < HSTS_PRELOAD_MIN_AGE) missing.push(`tls.hsts.max_age of at least ${HSTS_PRELOAD_MIN_AGE} (a year)`);
  if (missing.length === 0) return;
  const message = `needs ${missing.join(' and ')}: the HSTS preload list refuses anything less`;
  throw validationFailed(`request body is invalid: tls.hsts.preload ${message}`, { fields: [{ field: 'tls.hsts.preload', message }] });
}
