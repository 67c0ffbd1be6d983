// Whether the organisation proved it controls the site's domain, what the gateway does about it
// (site.status), and how to prove it: a DNS TXT record or an HTTP token, each with a button that
// asks the API to check it now (POST …/verify-domain). A refusal shows what the API found instead.
import { ApiError, api, ok } from '../../../api/client.ts';
import { useCan } from '../../../api/session.ts';
import { StatusBadge, Time } from '../../../components/badges.tsx';
import { Facts } from '../../../components/facts.tsx';
import { useWrite } from '../../../components/forms.tsx';
import { ErrorMessage } from '../../../components/status.tsx';
import { siteKey, sitesKey, type Site } from '../shared/api.ts';
import { PROOF_METHODS } from './facts.ts';

type Method = 'dns' | 'http';

export function DomainProofSection({ site }: { site: Site }) {
  const proof = site.domain_verification;
  const verified = proof.status === 'verified';
  // Held here, not in the steps: a successful check moves the steps into <details>, and its
  // message must survive that.
  const check = useWrite(
    (method: Method) => ok(api.POST('/api/v1/shield/sites/{id}/verify-domain', { params: { path: { id: site.id } }, body: { method } })),
    [sitesKey, siteKey(site.id)],
  );
  const steps = <ProofSteps site={site} busy={check.isPending} onCheck={(method) => check.mutate(method)} />;
  return (
    <section aria-labelledby="site-domain-title">
      <div className="shield-section-head">
        <h2 id="site-domain-title">Domain verification</h2>
      </div>
      <p>
        <strong>{site.domain}</strong> <StatusBadge status={proof.status} /> · traffic <StatusBadge status={site.status} />
      </p>
      <ServingText site={site} />
      {verified ? (
        <>
          <Facts
            layout="grid"
            items={[
              ['Proved by', proof.method ? PROOF_METHODS[proof.method] : '—'],
              ['Verified', <Time key="v" at={proof.verified_at} />],
              ['Last checked', <Time key="c" at={proof.checked_at} />],
            ]}
          />
          {proof.method === 'dns' && <p className="muted">Keep the TXT record: it is read again periodically (daily by default), and once it is gone the site is no longer verified.</p>}
          <details className="shield-proof-details">
            <summary>How to prove control again</summary>
            {steps}
          </details>
        </>
      ) : (
        <>
          {proof.checked_at && (
            <p>
              Last checked <Time at={proof.checked_at} />{proof.error && <>: {proof.error}</>}
            </p>
          )}
          {steps}
        </>
      )}
      {check.isPending && <p role="status">Checking…</p>}
      {check.isSuccess && check.variables && (
        <p className="success" role="status">Verified: your organisation controls {site.domain} ({PROOF_METHODS[check.variables]}).</p>
      )}
      {check.error && <CheckFailed error={check.error} domain={site.domain} />}
    </section>
  );
}

function ServingText({ site }: { site: Site }) {
  if (site.status === 'pending') {
    return (
      <p className="notice" role="note">
        Shield does not serve this site’s traffic until you prove that your organisation controls <strong>{site.domain}</strong>: publish one of the two proofs below, then check it.
      </p>
    );
  }
  if (site.status === 'superseded') {
    return (
      <p className="notice" role="note">
        Another organisation proved control of <strong>{site.domain}</strong>, and its site gets the traffic: this one serves nothing. A verified domain is never taken over.
      </p>
    );
  }
  return null;
}

function ProofSteps({ site, busy, onCheck }: { site: Site; busy: boolean; onCheck(method: Method): void }) {
  const canWrite = useCan('shield:write');
  const { txt_record: txt, http_token: http } = site.domain_verification;
  return (
    <>
      <p>Prove control in one of two ways.</p>
      <h3>Option 1: a DNS TXT record</h3>
      <p>Add this record to the DNS zone of {site.domain}:</p>
      <Record rows={[['Name', txt.name], ['Type', 'TXT'], ['Value', txt.value]]} />
      {canWrite && <button type="button" onClick={() => onCheck('dns')} disabled={busy}>Check DNS record</button>}
      <h3>Option 2: an HTTP token</h3>
      <p>Have the server that answers for {site.domain} today answer this URL (plain HTTP) with status 200 and exactly the token as its body:</p>
      <Record rows={[['URL', http.url], ['Body', http.body]]} />
      {canWrite && <button type="button" onClick={() => onCheck('http')} disabled={busy}>Check HTTP token</button>}
    </>
  );
}

/** What to publish, one field a line: values are long and copied whole, so each gets the full width. */
function Record({ rows }: { rows: ReadonlyArray<[string, string]> }) {
  return (
    <dl className="shield-record">
      {rows.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd><code>{value}</code></dd>
        </div>
      ))}
    </dl>
  );
}

function CheckFailed({ error, domain }: { error: Error; domain: string }) {
  const found = error instanceof ApiError && Array.isArray(error.details.found) ? error.details.found.filter((v): v is string => typeof v === 'string') : [];
  return (
    <>
      <ErrorMessage error={error} title={`${domain} is not verified`} />
      {found.length > 0 && (
        <div className="shield-found">
          <p>Found instead:</p>
          <ul>{found.map((value) => <li key={value}><code className="shield-cell-code">{value}</code></li>)}</ul>
        </div>
      )}
    </>
  );
}
