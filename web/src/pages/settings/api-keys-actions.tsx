// Rotate and Revoke, each behind a confirmation. A rotation's new value is shown once, here.
import { api, ok } from '../../api/client.ts';
import { ConfirmDialog, Modal } from '../../components/dialog.tsx';
import { useWrite } from '../../components/forms.tsx';
import { SecretOnce } from '../../components/secret.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { apiKeysQueryKey, maskedKey, type ApiKey, type IssuedKey } from './api-keys-model.ts';

export function RotateKey({ target, onIssued, onClose }: { target: ApiKey; onIssued(key: IssuedKey): void; onClose(): void }) {
  const rotate = useWrite((id: string) => ok(api.POST('/api/v1/api-keys/{id}/rotate', { params: { path: { id } } })), [apiKeysQueryKey], onIssued);
  return (
    <ConfirmDialog open title={`Rotate ${target.name}?`} confirmLabel="Rotate" busy={rotate.isPending} onConfirm={() => rotate.mutate(target.id)} onCancel={onClose}>
      <p>
        A new key with the same name and scopes is issued and shown once. The old key (<code>{maskedKey(target)}</code>) keeps
        working for 7 days, then is revoked: update its users before then.
      </p>
      {rotate.error && <ErrorMessage error={rotate.error} title="The key was not rotated" />}
    </ConfirmDialog>
  );
}

export function RevokeKey({ target, onClose }: { target: ApiKey; onClose(): void }) {
  const revoke = useWrite((id: string) => ok(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id } } })), [apiKeysQueryKey], onClose);
  return (
    <ConfirmDialog open danger title={`Revoke ${target.name}?`} confirmLabel="Revoke" busy={revoke.isPending} onConfirm={() => revoke.mutate(target.id)} onCancel={onClose}>
      <p>
        The key <code>{maskedKey(target)}</code> stops working at once, for every request. This cannot be undone.
      </p>
      {revoke.error && <ErrorMessage error={revoke.error} title="The key was not revoked" />}
    </ConfirmDialog>
  );
}

/** The value of a key just created or rotated: shown in this dialog once, gone when it closes. */
export function IssuedKeyDialog({ issued, title, onClose }: { issued: IssuedKey; title: string; onClose(): void }) {
  return (
    <Modal open title={title} onClose={onClose}>
      <SecretOnce label={`API key ${issued.name}`} value={issued.key} />
      <p>Scopes: {issued.scopes.join(', ')}. Use it as <code>Authorization: Bearer …</code>.</p>
      <div className="actions">
        <button type="button" className="button-primary" onClick={onClose}>Done</button>
      </div>
    </Modal>
  );
}
