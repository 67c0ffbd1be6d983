// The keys as listed (never their values): the last four characters, scopes, dates, and for an
// admin the Rotate and Revoke buttons of each key still in use.
import { StatusBadge, Time } from '../../components/badges.tsx';
import { maskedKey, type ApiKey } from './api-keys-model.ts';

export function ApiKeysTable({ keys, canWrite, onRotate, onRevoke }: { keys: ApiKey[]; canWrite: boolean; onRotate(key: ApiKey): void; onRevoke(key: ApiKey): void }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} data-testid={`api-key-${key.id}`}>
              <th scope="row">{key.name}</th>
              <td><code className="key-masked">{maskedKey(key)}</code></td>
              <td>{key.scopes.join(', ')}</td>
              <td><StatusBadge status={key.status} /></td>
              <td><Time at={key.created_at} /></td>
              <td>{key.last_used_at ? <Time at={key.last_used_at} /> : 'never'}</td>
              <td>{key.expires_at ? <Time at={key.expires_at} /> : 'never'}</td>
              {canWrite && (
                <td>
                  <div className="actions">
                    {key.status === 'active' && (
                      <button type="button" onClick={() => onRotate(key)} aria-label={`Rotate ${key.name}`}>Rotate</button>
                    )}
                    {key.status !== 'revoked' && (
                      <button type="button" className="button-danger" onClick={() => onRevoke(key)} aria-label={`Revoke ${key.name}`}>Revoke</button>
                    )}
                  </div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
