// Settings → SSO: the organisation's identity provider (OIDC or SAML), what to enter at the IdP,
// "Try login" (a one-time URL that runs a real sign-in and reports), enforcement (an owner's, in
// person), removal, and the verified domains just-in-time sign-up needs. SSO is an Enterprise
// feature: other plans see the gate, and the API's own refusal when they try.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, api, ok } from '../../api/client.ts';
import { useCan, useMe } from '../../api/session.ts';
import { ConfirmDialog } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { StatusBadge, Time } from '../../components/badges.tsx';
import { ErrorMessage, Loading } from '../../components/status.tsx';
import { SSO_KEY, SsoSettingsForm, type SsoConnection } from './sso-form.tsx';
import { VerifiedDomains } from './sso-domains.tsx';
import './webhooks-settings.css';

function PlanGate({ plan }: { plan: string }) {
  return (
    <p className="notice" role="note" data-testid="plan-gate">
      Single sign-on needs the <strong>Enterprise</strong> plan; this organisation is on <strong>{plan}</strong>. Settings can be prepared here, but saving
      them is refused until the plan changes.
    </p>
  );
}

function TryLogin() {
  const test = useWrite(() => ok(api.POST('/api/v1/orgs/current/sso/test')));
  return (
    <div>
      <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>Try login</button>
      {test.isError && <ErrorMessage error={test.error} title="Try login could not start" />}
      {test.isSuccess && (
        <p className="success" role="status">
          <a href={test.data.url} target="_blank" rel="noopener">Open the Try login page</a> — it signs you in at the identity provider and reports whether it worked, without
          starting a session or enforcing anything. The link works once, until <Time at={test.data.expires_at} />. This page shows the result when you come back.
        </p>
      )}
    </div>
  );
}

function Connection({ sso }: { sso: SsoConnection }) {
  const owner = useMe().data?.role === 'owner';
  const [confirm, setConfirm] = useState<'enforce' | 'unenforce' | 'delete' | null>(null);
  const enforce = useWrite((enforced: boolean) => ok(api.POST('/api/v1/orgs/current/sso/enforcement', { body: { enforced } })), [SSO_KEY], () => setConfirm(null));
  const remove = useWrite(() => ok(api.DELETE('/api/v1/orgs/current/sso')), [SSO_KEY], () => setConfirm(null));
  return (
    <section aria-labelledby="sso-connection">
      <h3 id="sso-connection">Connection</h3>
      <dl className="facts">
        <dt>Protocol</dt>
        <dd>{sso.protocol === 'oidc' ? 'OpenID Connect' : 'SAML 2.0'}</dd>
        {sso.oidc && (
          <>
            <dt>Issuer</dt>
            <dd><code>{sso.oidc.issuer}</code></dd>
            <dt>Client ID</dt>
            <dd><code>{sso.oidc.client_id}</code></dd>
            <dt>Client secret</dt>
            <dd>{sso.oidc.client_secret_set ? 'stored (never shown)' : 'not set'}</dd>
          </>
        )}
        {sso.saml && (
          <>
            <dt>IdP entity ID</dt>
            <dd><code>{sso.saml.idp_entity_id}</code></dd>
            <dt>IdP sign-in URL</dt>
            <dd><code>{sso.saml.sso_url}</code></dd>
            <dt>Metadata</dt>
            <dd>{sso.saml.metadata_url ? <code>{sso.saml.metadata_url}</code> : 'uploaded document'} · {sso.saml.certificate_count} signing certificate(s)</dd>
          </>
        )}
        <dt>Enforced</dt>
        <dd><StatusBadge status={sso.enforced ? 'enforced' : 'not_enforced'} /></dd>
        <dt>Last successful Try login</dt>
        <dd>{sso.tested_at ? <Time at={sso.tested_at} /> : 'never since the settings changed'}</dd>
        <dt>Just-in-time domains</dt>
        <dd>
          {sso.jit_domains.length ? `${sso.jit_domains.join(', ')} (as ${sso.jit_role})` : 'none'}
          {sso.jit_domains_pending.length > 0 && <small className="muted"> — not verified yet, so admitting nobody: {sso.jit_domains_pending.join(', ')}</small>}
        </dd>
      </dl>
      <div className="actions">
        <TryLogin />
        {!owner ? null : sso.enforced ? (
          <button type="button" onClick={() => setConfirm('unenforce')}>Stop enforcing</button>
        ) : (
          <button type="button" className="button-primary" onClick={() => setConfirm('enforce')}>Enforce SSO</button>
        )}
        {!sso.enforced && <button type="button" className="button-danger" onClick={() => setConfirm('delete')}>Remove connection</button>}
      </div>
      {!owner && <p className="muted">Only an owner, signed in, can enforce SSO or stop enforcing it.</p>}
      {enforce.isError && <ErrorMessage error={enforce.error} />}
      {remove.isError && <ErrorMessage error={remove.error} />}
      <ConfirmDialog
        open={confirm === 'enforce' || confirm === 'unenforce'}
        title={confirm === 'enforce' ? 'Enforce SSO?' : 'Stop enforcing SSO?'}
        confirmLabel={confirm === 'enforce' ? 'Enforce SSO' : 'Stop enforcing'}
        danger={confirm === 'unenforce'}
        busy={enforce.isPending}
        onConfirm={() => enforce.mutate(confirm === 'enforce')}
        onCancel={() => setConfirm(null)}
      >
        {confirm === 'enforce' ? (
          <p>Every member will have to sign in through the identity provider. E-mail links and Google stop working for them, and sessions that did not come through it end at once.</p>
        ) : (
          <p>Members will be able to sign in with e-mail links and Google again.</p>
        )}
      </ConfirmDialog>
      <ConfirmDialog open={confirm === 'delete'} title="Remove the SSO connection?" confirmLabel="Remove" danger busy={remove.isPending} onConfirm={() => remove.mutate()} onCancel={() => setConfirm(null)}>
        <p>Members will no longer be able to sign in through this identity provider.</p>
      </ConfirmDialog>
    </section>
  );
}

function ServiceProvider({ sso }: { sso: SsoConnection }) {
  return (
    <section aria-labelledby="sso-sp">
      <h3 id="sso-sp">At your identity provider</h3>
      <dl className="facts">
        <dt>OIDC redirect URI</dt>
        <dd><code>{sso.oidc_redirect_uri}</code></dd>
        <dt>SAML entity ID (audience)</dt>
        <dd><code>{sso.service_provider.entity_id}</code></dd>
        <dt>SAML ACS URL (HTTP-POST)</dt>
        <dd><code>{sso.service_provider.acs_url}</code></dd>
        <dt>SAML SP metadata</dt>
        <dd><code>{sso.service_provider.metadata_url}</code></dd>
      </dl>
    </section>
  );
}

export default function SsoSettings() {
  const admin = useCan('admin');
  const plan = useMe().data?.organization.plan ?? 'trial';
  const [editing, setEditing] = useState(false);
  const sso = useQuery({
    queryKey: SSO_KEY,
    enabled: admin,
    queryFn: async (): Promise<SsoConnection | null> => {
      try {
        return await ok(api.GET('/api/v1/orgs/current/sso'));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
  if (!admin) {
    return (
      <>
        <h2>Single sign-on</h2>
        <p className="notice" role="note">Only owners and admins can see and change the organisation's SSO settings.</p>
      </>
    );
  }
  return (
    <>
      <h2>Single sign-on</h2>
      <p className="muted">Members sign in through your identity provider (OIDC or SAML 2.0). Try login before enforcing it.</p>
      {plan !== 'enterprise' && <PlanGate plan={plan} />}
      {sso.isPending ? (
        <Loading label="Loading SSO settings" />
      ) : sso.isError ? (
        <ErrorMessage error={sso.error} />
      ) : (
        <>
          {sso.data && <Connection sso={sso.data} />}
          {sso.data?.enforced ? (
            <p className="notice" role="note">Settings cannot change while SSO is enforced: stop enforcing first.</p>
          ) : sso.data && !editing ? (
            <button type="button" onClick={() => setEditing(true)}>Change settings</button>
          ) : (
            <section aria-labelledby="sso-settings">
              <h3 id="sso-settings">{sso.data ? 'Change settings' : 'Set up SSO'}</h3>
              {!sso.data && <p>No identity provider is connected yet.</p>}
              <SsoSettingsForm current={sso.data} onSaved={() => setEditing(false)} />
            </section>
          )}
          {sso.data && <ServiceProvider sso={sso.data} />}
          <VerifiedDomains />
        </>
      )}
    </>
  );
}
