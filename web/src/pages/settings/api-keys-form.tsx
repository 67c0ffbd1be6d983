// The "New key" form: name, scopes, live or test. On success the parent shows the value once.
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, ApiError, ok } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { apiKeysQueryKey, SCOPES, type IssuedKey, type Scope } from './api-keys-model.ts';

export function NewKeyForm({ onCreated, onCancel }: { onCreated(key: IssuedKey): void; onCancel(): void }) {
  const { data: me } = useMe();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [environment, setEnvironment] = useState<'live' | 'test'>(me?.environment ?? 'live');
  const [problem, setProblem] = useState<string | null>(null);
  const create = useWrite(
    (body: { name: string; scopes: Scope[]; environment: 'live' | 'test' }) => ok(api.POST('/api/v1/api-keys', { body })),
    [apiKeysQueryKey],
    onCreated,
  );
  const toggle = (scope: Scope, on: boolean) => setScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (scopes.length === 0) return setProblem('Choose at least one scope.');
    setProblem(null);
    create.mutate({ name: name.trim(), scopes, environment });
  };
  const planRefused = create.error instanceof ApiError && create.error.code === 'plan_required';
  return (
    <form onSubmit={submit} aria-label="New API key">
      <Field label="Name" hint="What uses the key, e.g. CI pipeline.">
        {(props) => <input {...props} value={name} required maxLength={100} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <fieldset className="field">
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label key={scope} className="checkbox">
            <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => toggle(scope, e.target.checked)} /> {scope}
          </label>
        ))}
        <small>A write scope includes its read scope; admin includes everything and needs the pro or enterprise plan.</small>
      </fieldset>
      <fieldset className="field">
        <legend>Environment</legend>
        <label className="checkbox">
          <input type="radio" name="environment" value="live" checked={environment === 'live'} disabled={me?.environment === 'test'} onChange={() => setEnvironment('live')} /> Live
        </label>
        <label className="checkbox">
          <input type="radio" name="environment" value="test" checked={environment === 'test'} onChange={() => setEnvironment('test')} /> Test (sandbox only)
        </label>
      </fieldset>
      {problem && <p className="error" role="alert">{problem}</p>}
      {create.error && <ErrorMessage error={create.error} title="The key was not created" />}
      {planRefused && (
        <p className="notice">
          See <Link href="~/settings/plan">Plan</Link> for what each plan unlocks.
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="submit" className="button-primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create key'}</button>
      </div>
    </form>
  );
}
