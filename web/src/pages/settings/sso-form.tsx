// The SSO connection's settings form (PUT /api/v1/orgs/current/sso): OIDC (issuer, client id,
// secret — left empty keeps the stored one) or SAML (metadata URL or document), and just-in-time
// membership. The API checks the issuer or metadata before saving and answers 422 naming the field.
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import type { Answer, BodyOf } from '../../api/types.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';

export type SsoConnection = Answer<'/api/v1/orgs/current/sso'>;
type SsoBody = BodyOf<'/api/v1/orgs/current/sso', 'put'>;
type JitRole = NonNullable<SsoBody['jit_role']>;

export const SSO_KEY = ['sso'] as const;

const splitDomains = (text: string): string[] => text.split(/[\s,]+/).map((d) => d.trim().toLowerCase()).filter(Boolean);

export function SsoSettingsForm({ current, onSaved }: { current: SsoConnection | null; onSaved(): void }) {
  const [protocol, setProtocol] = useState<'oidc' | 'saml'>(current?.protocol ?? 'oidc');
  const [issuer, setIssuer] = useState(current?.oidc?.issuer ?? '');
  const [clientId, setClientId] = useState(current?.oidc?.client_id ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [metadataUrl, setMetadataUrl] = useState(current?.saml?.metadata_url ?? '');
  const [metadataXml, setMetadataXml] = useState('');
  const [domains, setDomains] = useState((current?.jit_domains ?? []).join(', '));
  const [jitRole, setJitRole] = useState<JitRole>(current?.jit_role ?? 'member');
  const save = useWrite((body: SsoBody) => ok(api.PUT('/api/v1/orgs/current/sso', { body })), [SSO_KEY], onSaved);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const common = { jit_domains: splitDomains(domains), jit_role: jitRole };
    if (protocol === 'oidc') {
      save.mutate({ protocol, issuer: issuer.trim(), client_id: clientId.trim(), ...(clientSecret ? { client_secret: clientSecret } : {}), ...common });
    } else {
      save.mutate({ protocol, ...(metadataXml.trim() ? { metadata_xml: metadataXml } : { metadata_url: metadataUrl.trim() }), ...common });
    }
  };

  return (
    <form onSubmit={submit} aria-label="SSO settings">
      <fieldset>
        <legend>Protocol</legend>
        <label><input type="radio" name="protocol" value="oidc" checked={protocol === 'oidc'} onChange={() => setProtocol('oidc')} /> OpenID Connect</label>{' '}
        <label><input type="radio" name="protocol" value="saml" checked={protocol === 'saml'} onChange={() => setProtocol('saml')} /> SAML 2.0</label>
      </fieldset>
      {protocol === 'oidc' ? (
        <>
          <Field label="Issuer URL" hint="Its /.well-known/openid-configuration is read before saving.">
            {(p) => <input {...p} type="url" required value={issuer} onChange={(e) => setIssuer(e.target.value)} placeholder="https://idp.example.com" />}
          </Field>
          <Field label="Client ID">{(p) => <input {...p} required value={clientId} onChange={(e) => setClientId(e.target.value)} />}</Field>
          <Field label="Client secret" hint={current?.oidc?.client_secret_set ? 'A secret is stored (never shown). Leave empty to keep it.' : 'Sealed at rest and never shown again.'}>
            {(p) => <input {...p} type="password" autoComplete="off" required={!current?.oidc?.client_secret_set} value={clientSecret} onChange={(e) => setClientSecret(e.target.value)} />}
          </Field>
        </>
      ) : (
        <>
          <Field label="IdP metadata URL" hint="Or paste the metadata document below instead.">
            {(p) => <input {...p} type="url" value={metadataUrl} onChange={(e) => setMetadataUrl(e.target.value)} placeholder="https://idp.example.com/saml/metadata" />}
          </Field>
          <Field label="IdP metadata XML">{(p) => <textarea {...p} rows={5} value={metadataXml} onChange={(e) => setMetadataXml(e.target.value)} />}</Field>
        </>
      )}
      <Field label="Just-in-time domains" hint="Verified e-mail domains whose people become members on their first SSO sign-in (comma separated; optional).">
        {(p) => <input {...p} value={domains} onChange={(e) => setDomains(e.target.value)} placeholder="example.com" />}
      </Field>
      <Field label="Role of just-in-time members">
        {(p) => (
          <select {...p} value={jitRole} onChange={(e) => setJitRole(e.target.value as JitRole)}>
            <option value="member">member</option>
            <option value="viewer">viewer</option>
            <option value="admin">admin</option>
          </select>
        )}
      </Field>
      {save.isError && <ErrorMessage error={save.error} title="SSO settings were not saved" />}
      <button type="submit" className="button-primary" disabled={save.isPending}>{save.isPending ? 'Checking and saving…' : 'Save SSO settings'}</button>
    </form>
  );
}
