// Settings → SSO → Verified domains: the e-mail domains the organisation proved by a DNS TXT record.
// Only a verified domain admits people just in time and finds the organisation's SSO from an
// address; each claim shows the record to publish, and Verify reads it now.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';
import { SSO_KEY } from './sso-form.tsx';

const DOMAINS_KEY = ['domains'] as const;

function ClaimForm() {
  const [domain, setDomain] = useState('');
  const claim = useWrite((name: string) => ok(api.POST('/api/v1/orgs/current/domains', { body: { domain: name } })), [DOMAINS_KEY], () => setDomain(''));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    claim.mutate(domain.trim().toLowerCase());
  };
  return (
    <>
      <form className="filters" onSubmit={submit} aria-label="Add a domain">
        <Field label="Domain" hint="An e-mail domain of your organisation, such as example.com.">
          {(props) => <input {...props} required autoComplete="off" value={domain} onChange={(e) => setDomain(e.target.value)} placeholder="example.com" />}
        </Field>
        <button type="submit" disabled={claim.isPending}>Add domain</button>
      </form>
      {claim.error && <ErrorMessage error={claim.error} title="The domain was not added" />}
    </>
  );
}

export function VerifiedDomains() {
  const domains = useQuery({ queryKey: DOMAINS_KEY, queryFn: () => ok(api.GET('/api/v1/orgs/current/domains', { params: { query: { limit: 200 } } })) });
  const verify = useWrite((id: string) => ok(api.POST('/api/v1/orgs/current/domains/{id}/verify', { params: { path: { id } } })), [DOMAINS_KEY, SSO_KEY]);
  const remove = useWrite((id: string) => ok(api.DELETE('/api/v1/orgs/current/domains/{id}', { params: { path: { id } } })), [DOMAINS_KEY, SSO_KEY]);
  return (
    <section aria-labelledby="sso-domains">
      <h3 id="sso-domains">Verified domains</h3>
      <p className="muted">
        Just-in-time sign-up and finding your SSO from an e-mail address work only for domains your organisation has proved it controls: publish the TXT record shown,
        then verify. Aegis reads the record again every day; a record taken away unverifies the domain.
      </p>
      {domains.isPending ? (
        <Loading label="Loading domains" />
      ) : domains.isError ? (
        <ErrorMessage error={domains.error} />
      ) : domains.data.data.length === 0 ? (
        <p>No domains yet.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Domains and their proof records</caption>
          <thead>
            <tr>
              <th scope="col">Domain</th>
              <th scope="col">Status</th>
              <th scope="col">TXT record</th>
              <th scope="col">Last checked</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {domains.data.data.map((d) => (
              <tr key={d.id}>
                <td>{d.domain}</td>
                <td><StatusBadge status={d.status} /></td>
                <td><code>{d.verification.name}</code> <code>{d.verification.value}</code></td>
                <td>{d.checked_at ? <Time at={d.checked_at} /> : 'never'}{d.check_error && <small className="muted"> — {d.check_error}</small>}</td>
                <td className="actions">
                  <button type="button" onClick={() => verify.mutate(d.id)} disabled={verify.isPending} aria-label={`Verify ${d.domain}`}>Verify</button>
                  <button type="button" className="button-danger" onClick={() => remove.mutate(d.id)} disabled={remove.isPending} aria-label={`Remove ${d.domain}`}>Remove</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {verify.error && <ErrorMessage error={verify.error} title="Not verified" />}
      {remove.error && <ErrorMessage error={remove.error} />}
      <ClaimForm />
    </section>
  );
}
