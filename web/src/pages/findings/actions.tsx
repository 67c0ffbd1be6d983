// What can be done to a finding besides triage: verify the fix, open a ticket, AI triage (all
// vulnerabilities:write) and, for a URL finding, shield it with a virtual patch (shield:write).
// Each shows the API's error (a 409's message names the existing ticket or patch).
import { useState } from 'react';
import { api, ok } from '../../api/client.ts';
import { useCan } from '../../api/session.ts';
import { ConfirmDialog, Modal } from '../../components/dialog.tsx';
import { Field, useWrite } from '../../components/forms.tsx';
import { ErrorMessage } from '../../components/status.tsx';
import { findingsKey, isUrlFinding, type Finding } from './model.ts';
import { TicketForm } from './ticket-form.tsx';

export function FindingActions({ finding }: { finding: Finding }) {
  const canWrite = useCan('vulnerabilities:write');
  const canShield = useCan('shield:write');
  const [ticketOpen, setTicketOpen] = useState(false);
  const [patchOpen, setPatchOpen] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const path = { params: { path: { id: finding.id } } };
  const verify = useWrite(() => ok(api.POST('/api/v1/vulnerabilities/{id}/verify', path)), [findingsKey], () => setDone('Verification queued: the result appears under Verify-fix.'));
  const triage = useWrite(() => ok(api.POST('/api/v1/vulnerabilities/{id}/triage', { ...path, body: {} })), [findingsKey], () => setDone('AI triage queued: the verdict appears under AI triage.'));
  const verifying = finding.verification?.status === 'queued' || finding.verification?.status === 'running';
  const showPatch = canShield && isUrlFinding(finding);
  if (!canWrite && !showPatch) return null;
  return (
    <section aria-labelledby="actions-heading">
      <h2 id="actions-heading">Actions</h2>
      <div className="actions">
        {canWrite && (
          <>
            <button type="button" onClick={() => verify.mutate(undefined)} disabled={verify.isPending || verifying}>
              {verifying ? 'Verifying…' : 'Verify fix'}
            </button>
            <button type="button" onClick={() => setTicketOpen(true)}>Create ticket</button>
            <button type="button" onClick={() => triage.mutate(undefined)} disabled={triage.isPending || finding.triage?.status === 'pending'}>AI triage</button>
          </>
        )}
        {showPatch && (
          <button type="button" onClick={() => setPatchOpen(true)} disabled={finding.virtual_patch !== null}>
            {finding.virtual_patch ? 'Virtual patch deployed' : 'Deploy virtual patch'}
          </button>
        )}
      </div>
      {done && <p className="success" role="status">{done}</p>}
      {verify.error && <ErrorMessage error={verify.error} title="Verify-fix was not started" />}
      {triage.error && <ErrorMessage error={triage.error} title="AI triage was not started" />}
      {ticketOpen && (
        <Modal open title="Create a ticket" onClose={() => setTicketOpen(false)}>
          <TicketForm finding={finding} onDone={() => { setTicketOpen(false); setDone('Ticket requested: its link appears once the tracker has it.'); }} onCancel={() => setTicketOpen(false)} />
        </Modal>
      )}
      {patchOpen && <VirtualPatchDialog finding={finding} onClose={(message) => { setPatchOpen(false); if (message) setDone(message); }} />}
    </section>
  );
}

function VirtualPatchDialog({ finding, onClose }: { finding: Finding; onClose(message?: string): void }) {
  const [autoRemove, setAutoRemove] = useState(true);
  const [action, setAction] = useState<'block' | 'challenge' | 'log'>('block');
  const deploy = useWrite(
    () => ok(api.POST('/api/v1/vulnerabilities/{id}/virtual-patch', { params: { path: { id: finding.id } }, body: { auto_remove: autoRemove, action } })),
    [findingsKey],
    (patch) => onClose(`Virtual patch ${patch.id} deployed on ${patch.url_pattern}.`),
  );
  return (
    <ConfirmDialog open title="Deploy a virtual patch" confirmLabel={deploy.isPending ? 'Deploying…' : 'Deploy'} busy={deploy.isPending} onConfirm={() => deploy.mutate(undefined)} onCancel={() => onClose()}>
      <p>Shield will {action} requests that carry this attack on the finding's path and parameter, on the site that serves its URL.</p>
      <Field label="Action">
        {(props) => (
          <select {...props} value={action} onChange={(e) => setAction(e.target.value as typeof action)}>
            <option value="block">Block</option>
            <option value="challenge">Challenge</option>
            <option value="log">Log only</option>
          </select>
        )}
      </Field>
      <div className="field checkbox">
        <label>
          <input type="checkbox" checked={autoRemove} onChange={(e) => setAutoRemove(e.target.checked)} /> Remove it when a verify-fix finds the problem fixed
        </label>
      </div>
      {deploy.error && <ErrorMessage error={deploy.error} title="The virtual patch was not deployed" />}
    </ConfirmDialog>
  );
}
