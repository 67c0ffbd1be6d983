// The TLS & domain tab of a site: whether its domain is proved (and how to prove it), the
// certificate it is served with, and its TLS settings — everything that decides whether browsers
// reach it over HTTPS.
import type { Site } from '../shared/api.ts';
import { CertificateSection } from './certificate.tsx';
import { DomainProofSection } from './domain-proof.tsx';
import { TlsSettingsSection } from './tls-settings.tsx';

export function SiteEdge({ site }: { site: Site }) {
  return (
    <>
      <DomainProofSection site={site} />
      <CertificateSection site={site} />
      <TlsSettingsSection site={site} />
    </>
  );
}
