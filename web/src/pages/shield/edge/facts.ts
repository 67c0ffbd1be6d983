// What the TLS & domain tab says about a site, worked out from the site as the API answers it: the
// certificate's status in one word, the days left before it expires, and the words for the TLS
// settings. Pure, so every section reads the same answer.
import type { Site } from '../shared/api.ts';

export type Certificate = NonNullable<Site['certificate']>;
export type CertificateStatus = 'none' | 'pending' | 'issued' | 'failed';

/** Within this many days of expiry the tab warns (ACME renews about as early). */
export const EXPIRY_WARNING_DAYS = 30;

/**
 * A failed ACME order wins, even with a certificate still serving (its renewal is what failed);
 * then a certificate there is `issued`, an order still running `pending`, and nothing `none`.
 */
export function certificateStatus(certificate: Site['certificate']): CertificateStatus {
  if (!certificate) return 'none';
  if (certificate.acme_order?.status === 'failed') return 'failed';
  if (certificate.source !== null) return 'issued';
  if (certificate.acme_order?.status === 'pending') return 'pending';
  return 'none';
}

const DAY_MS = 86_400_000;

/** Whole days from `now` until `notAfter` (negative once expired); null without a date. */
export function daysLeft(notAfter: string | null, now: number = Date.now()): number | null {
  if (!notAfter) return null;
  return Math.floor((Date.parse(notAfter) - now) / DAY_MS);
}

export const TLS_MODES: Record<Site['tls']['mode'], { label: string; what: string }> = {
  acme: { label: 'Automatic (ACME)', what: 'Aegis obtains the certificate and renews it about 30 days before it expires. The domain must point at the Shield gateway.' },
  custom: { label: 'Uploaded certificate', what: 'The gateway serves the certificate uploaded for this site; renewing it is up to you.' },
  off: { label: 'Off', what: 'The site is served over plain HTTP only.' },
};

export function hstsText(hsts: Site['tls']['hsts']): string {
  if (!hsts) return 'off';
  const parts = [`max-age ${hsts.max_age.toLocaleString()} s`];
  if (hsts.include_subdomains) parts.push('includes subdomains');
  if (hsts.preload) parts.push('preload');
  return parts.join(', ');
}

export const PROOF_METHODS: Record<'dns' | 'http' | 'acme', string> = {
  dns: 'DNS TXT record',
  http: 'HTTP token',
  acme: 'ACME validation',
};
