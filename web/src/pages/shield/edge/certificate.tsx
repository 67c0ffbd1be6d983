// The certificate a site is served with over TLS: its status in one word (none / pending / issued /
// failed), what it covers, who issued it and when it expires — with a warning from 30 days before —
// and, for ACME, where the order stands and why the last attempt failed. Never the key: the API
// does not return it.
import type { ReactNode } from 'react';
import { StatusBadge, Time } from '../../../components/badges.tsx';
import { Facts } from '../../../components/facts.tsx';
import type { Site } from '../shared/api.ts';
import { certificateStatus, daysLeft, EXPIRY_WARNING_DAYS, type Certificate, type CertificateStatus } from './facts.ts';

export function CertificateSection({ site }: { site: Site }) {
  const certificate = site.certificate;
  const status = certificateStatus(certificate);
  const served = certificate?.source ? certificate : null;
  return (
    <section aria-labelledby="site-certificate-title">
      <div className="shield-section-head">
        <h2 id="site-certificate-title">Certificate</h2>
      </div>
      <p>
        Status <StatusBadge status={status} />
      </p>
      <StatusText site={site} status={status} />
      {served && <ServedCertificate certificate={served} mode={site.tls.mode} />}
      {certificate?.acme_order && <AcmeOrder order={certificate.acme_order} />}
    </section>
  );
}

function StatusText({ site, status }: { site: Site; status: CertificateStatus }) {
  const order = site.certificate?.acme_order;
  if (status === 'failed') {
    return (
      <div className="error">
        <strong>The last certificate order failed</strong>
        <p>{order?.error ?? 'The certificate authority gave no reason.'}</p>
        <p>
          {site.certificate?.source ? 'The current certificate keeps serving until it expires. ' : 'HTTPS to this site has no certificate until an order succeeds. '}
          Next attempt: <Time at={order?.next_attempt_at} />.
        </p>
      </div>
    );
  }
  if (status === 'pending') {
    return <p>Aegis is obtaining a certificate for <strong>{site.domain}</strong> by ACME. It needs the domain to point at the Shield gateway, on ports 80 and 443.</p>;
  }
  if (status === 'none') return <p>{NO_CERTIFICATE[site.tls.mode](site.domain)}</p>;
  return null;
}

const NO_CERTIFICATE: Record<Site['tls']['mode'], (domain: string) => ReactNode> = {
  off: () => 'TLS is off for this site: it has no certificate and is served over plain HTTP only.',
  custom: (domain) => <>No certificate is uploaded: HTTPS to <strong>{domain}</strong> fails until one is (<code>PUT /api/v1/shield/sites/&#123;id&#125;/certificate</code>).</>,
  acme: (domain) => <>No certificate yet. Aegis orders one for <strong>{domain}</strong> once the domain points at the Shield gateway.</>,
};

function ServedCertificate({ certificate, mode }: { certificate: Certificate; mode: Site['tls']['mode'] }) {
  const left = daysLeft(certificate.not_after);
  return (
    <>
      <Facts
        layout="grid"
        items={[
          ['Source', certificate.source === 'acme' ? 'obtained by ACME' : 'uploaded'],
          ['Issuer', certificate.issuer ?? '—'],
          ['Names covered', <NameList key="n" names={certificate.names} />],
          ['Expires', <ExpiresAt key="e" at={certificate.not_after} days={left} />],
          ['Fingerprint (SHA-256)', <code key="f" className="shield-cell-code">{certificate.fingerprint ?? '—'}</code>],
        ]}
      />
      {left !== null && left < EXPIRY_WARNING_DAYS && <ExpiryWarning at={certificate.not_after} days={left} mode={mode} />}
    </>
  );
}

function NameList({ names }: { names: string[] }) {
  if (names.length === 0) return <>none</>;
  return (
    <ul className="shield-names">
      {names.map((name) => <li key={name}><code>{name}</code></li>)}
    </ul>
  );
}

function ExpiresAt({ at, days }: { at: string | null; days: number | null }) {
  if (days === null) return <>—</>;
  const relative = days < 0 ? `expired ${-days} ${plural(-days, 'day')} ago` : days === 0 ? 'today' : `in ${days} ${plural(days, 'day')}`;
  return <><Time at={at} /> ({relative})</>;
}

function ExpiryWarning({ at, days, mode }: { at: string | null; days: number; mode: Site['tls']['mode'] }) {
  const what = mode === 'acme'
    ? 'Aegis renews ACME certificates about 30 days before they expire: if this warning stays, look at the order below.'
    : 'Upload a renewed certificate before then.';
  return (
    <p className="notice" role="note">
      {days < 0
        ? <>This certificate expired on <Time at={at} />: browsers refuse it. </>
        : <>This certificate expires in {days} {plural(days, 'day')}, on <Time at={at} />. </>}
      {what}
    </p>
  );
}

function AcmeOrder({ order }: { order: NonNullable<Certificate['acme_order']> }) {
  return (
    <>
      <h3>ACME order</h3>
      <Facts
        layout="grid"
        items={[
          ['Order', <StatusBadge key="s" status={order.status} />],
          // A failed order's error is already in the box above; a retry under way still shows the last one.
          ...(order.status !== 'failed' && order.error ? [['Last error', order.error] as [string, string]] : []),
          ['Next attempt', <Time key="t" at={order.next_attempt_at} />],
        ]}
      />
    </>
  );
}

const plural = (n: number, word: string) => (n === 1 ? word : `${word}s`);
