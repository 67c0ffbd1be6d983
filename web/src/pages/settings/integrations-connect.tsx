// Connecting a provider. OAuth providers answer with an authorize URL the browser is sent to (the
// provider returns it to the API, which lands back on this page); a token (API key, with the site or
// instance URL where the provider needs one) is checked against the provider at once; AWS is two
// steps: a pending connection with the role to create, then the role's ARN.
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../api/client.ts';
import type { Answer, BodyOf } from '../../api/types.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { SecretOnce } from '../../components/secret.tsx';
import { ErrorMessage } from '../../components/status.tsx';

export const INTEGRATIONS_KEY = ['integrations'] as const;

type TokenProvider = 'github' | 'gitlab' | 'jira' | 'linear' | 'openai' | 'anthropic';
export type Provider = TokenProvider | 'aws';
type ConnectBody = BodyOf<'/api/v1/integrations/{provider}/connect', 'post'>;
type ConnectAnswer = Answer<'/api/v1/integrations/{provider}/connect', 'post'>;
type AwsAnswer = Answer<'/api/v1/integrations/aws/connect', 'post'>;

interface ProviderInfo {
  label: string;
  oauth: boolean;
  token: string;
  /** The extra URL field, when the provider takes one. */
  url?: { label: string; hint: string; required: boolean };
  email?: boolean;
}

export const PROVIDERS: Record<TokenProvider, ProviderInfo> = {
  github: { label: 'GitHub', oauth: true, token: 'Personal access token' },
  gitlab: { label: 'GitLab', oauth: true, token: 'Personal access token', url: { label: 'Instance URL', hint: 'A self-managed GitLab; leave empty for gitlab.com.', required: false } },
  jira: { label: 'Jira', oauth: true, token: 'API token', email: true, url: { label: 'Site URL', hint: 'https://<name>.atlassian.net', required: true } },
  linear: { label: 'Linear', oauth: true, token: 'API key' },
  openai: { label: 'OpenAI-compatible', oauth: false, token: 'API key', url: { label: 'Base URL', hint: 'Azure OpenAI, a gateway or a local server; empty for https://api.openai.com/v1.', required: false } },
  anthropic: { label: 'Anthropic', oauth: false, token: 'API key', url: { label: 'Base URL', hint: 'Another Messages API base URL; empty for Anthropic.', required: false } },
};

function TokenForm({ provider, onConnected }: { provider: TokenProvider; onConnected(answer: ConnectAnswer): void }) {
  const info = PROVIDERS[provider];
  const [token, setToken] = useState('');
  const [email, setEmail] = useState('');
  const [url, setUrl] = useState('');
  const connect = useWrite((body: ConnectBody) => ok(api.POST('/api/v1/integrations/{provider}/connect', { params: { path: { provider } }, body })), [INTEGRATIONS_KEY], onConnected);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    connect.mutate({ token, ...(info.email && email ? { email: email.trim() } : {}), ...(info.url && url.trim() ? { url: url.trim() } : {}) });
  };
  return (
    <form onSubmit={submit} aria-label={`Connect ${info.label} with a token`}>
      <Field label={info.token} hint="Checked with the provider now; stored sealed and never shown again.">
        {(p) => <input {...p} type="password" autoComplete="off" required value={token} onChange={(e) => setToken(e.target.value)} />}
      </Field>
      {info.email && <Field label="Atlassian account e-mail">{(p) => <input {...p} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}</Field>}
      {info.url && (
        <Field label={info.url.label} hint={info.url.hint}>
          {(p) => <input {...p} type="url" required={info.url?.required} value={url} onChange={(e) => setUrl(e.target.value)} />}
        </Field>
      )}
      {connect.isError && <ErrorMessage error={connect.error} title="Not connected" />}
      <button type="submit" className="button-primary" disabled={connect.isPending}>{connect.isPending ? 'Checking…' : `Connect ${info.label}`}</button>
    </form>
  );
}

function OAuthButton({ provider }: { provider: TokenProvider }) {
  const info = PROVIDERS[provider];
  const start = useWrite(() => ok(api.POST('/api/v1/integrations/{provider}/connect', { params: { path: { provider } }, body: {} })), [], (answer) => {
    if (answer.authorize_url) window.location.assign(answer.authorize_url);
  });
  return (
    <div>
      <button type="button" className="button-primary" onClick={() => start.mutate()} disabled={start.isPending || start.isSuccess}>
        {start.isPending || start.isSuccess ? 'Opening…' : `Authorize with ${info.label}`}
      </button>
      {start.isError && <ErrorMessage error={start.error} title="Could not start the authorization" />}
    </div>
  );
}

function AwsConnect({ onConnected }: { onConnected(): void }) {
  const [pending, setPending] = useState<AwsAnswer | null>(null);
  const [roleArn, setRoleArn] = useState('');
  const start = useWrite(() => ok(api.POST('/api/v1/integrations/aws/connect', { body: {} })), [INTEGRATIONS_KEY], setPending);
  const finish = useWrite((role_arn: string) => ok(api.POST('/api/v1/integrations/aws/connect', { body: { integration: pending?.integration.id, role_arn } })), [INTEGRATIONS_KEY], onConnected);
  if (!pending?.setup) {
    return (
      <div>
        <p>Step 1: Aegis makes an external id and the role to create in your AWS account.</p>
        {start.isError && <ErrorMessage error={start.error} />}
        <button type="button" className="button-primary" onClick={() => start.mutate()} disabled={start.isPending}>Start AWS connection</button>
      </div>
    );
  }
  const { setup } = pending;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    finish.mutate(roleArn.trim());
  };
  return (
    <div>
      <p>Step 2: create a role in the account that trusts {setup.principal ? <code>{setup.principal}</code> : "Aegis's principal (not configured on this server)"} with the external id <code>{setup.external_id}</code>, using these policies, then give its ARN.</p>
      <details>
        <summary>Trust policy</summary>
        <pre>{JSON.stringify(setup.trust_policy, null, 2)}</pre>
      </details>
      <details>
        <summary>Permissions policy (read-only)</summary>
        <pre>{JSON.stringify(setup.permissions_policy, null, 2)}</pre>
      </details>
      <form onSubmit={submit} aria-label="Finish the AWS connection">
        <Field label="Role ARN" hint="arn:aws:iam::123456789012:role/AegisDiscovery">
          {(p) => <input {...p} required value={roleArn} onChange={(e) => setRoleArn(e.target.value)} />}
        </Field>
        {finish.isError && <ErrorMessage error={finish.error} title="AWS did not let Aegis assume the role" />}
        <button type="submit" className="button-primary" disabled={finish.isPending}>Connect AWS account</button>
      </form>
    </div>
  );
}

/** Pick a provider, then connect it the ways it allows. */
export function ConnectProvider({ onDone }: { onDone(): void }) {
  const [provider, setProvider] = useState<Provider>('github');
  const [webhook, setWebhook] = useState<ConnectAnswer['webhook'] | null>(null);
  if (webhook) {
    return (
      <div>
        <p className="success" role="status">Connected. Configure the provider to send its webhooks to <code>{webhook.url}</code>, signed with this secret:</p>
        <SecretOnce label="Inbound webhook secret" value={webhook.secret} />
        <button type="button" onClick={onDone}>Done</button>
      </div>
    );
  }
  const connected = (answer: ConnectAnswer) => (answer.webhook ? setWebhook(answer.webhook) : onDone());
  return (
    <div>
      <Field label="Provider">
        {(p) => (
          <select {...p} value={provider} onChange={(e) => setProvider(e.target.value as Provider)}>
            {Object.entries(PROVIDERS).map(([name, info]) => <option key={name} value={name}>{info.label}</option>)}
            <option value="aws">AWS (attack-surface discovery)</option>
          </select>
        )}
      </Field>
      {provider === 'aws' ? (
        <AwsConnect onConnected={onDone} />
      ) : (
        <>
          {PROVIDERS[provider].oauth && (
            <>
              <OAuthButton key={`oauth-${provider}`} provider={provider} />
              <p className="muted">or with a token:</p>
            </>
          )}
          <TokenForm key={provider} provider={provider} onConnected={connected} />
        </>
      )}
    </div>
  );
}
