// A site's mode. A stronger mode applies at once; a weaker one (block → challenge → log) first
// says what stops being blocked and asks for confirmation. A select and a button (not a select
// that saves on change), so that moving through the options by keyboard changes nothing. Preview
// impact replays the recorded traffic under the chosen mode before anything changes.
import { useState } from 'react';
import { api, ok } from '../../../api/client.ts';
import { useCan } from '../../../api/session.ts';
import { ConfirmDialog } from '../../../components/dialog.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { ErrorMessage } from '../../../components/status.tsx';
import { siteKey, sitesKey, type Site, type SiteMode } from '../shared/api.ts';
import { useImpactPreview } from '../shared/impact.ts';
import { ImpactButton, ImpactResult } from '../shared/impact-report.tsx';
import { MODES, modeLabel, strength, weakening } from './modes.ts';

export function ModeControl({ site }: { site: Site }) {
  const canWrite = useCan('shield:write');
  const [choice, setChoice] = useState<SiteMode>(site.mode);
  const [confirming, setConfirming] = useState(false);
  const [changed, setChanged] = useState<SiteMode | null>(null);
  // The stored mode moved (this change, or another person's): the choice follows it (React's
  // adjust-state-during-render pattern, so the success message survives the refetch).
  const [seen, setSeen] = useState<SiteMode>(site.mode);
  if (seen !== site.mode) {
    setSeen(site.mode);
    setChoice(site.mode);
  }
  const preview = useImpactPreview(site.id);
  // Save's body is `{ mode: choice }`; the preview proposes the same site change.
  const body = { mode: choice };
  const save = useWrite(
    (change: { mode: SiteMode }) => ok(api.PATCH('/api/v1/shield/sites/{id}', { params: { path: { id: site.id } }, body: change })),
    [sitesKey, siteKey(site.id)],
    (updated) => {
      setConfirming(false);
      setChanged(updated.mode);
      preview.reset();
    },
  );
  const current = MODES.find((m) => m.value === site.mode);
  if (!canWrite) {
    return (
      <p>
        Mode: <strong>{current?.label}</strong> — {current?.what}
      </p>
    );
  }
  const apply = () => {
    setChanged(null);
    if (choice === site.mode) return;
    if (strength(choice) < strength(site.mode)) setConfirming(true);
    else save.mutate(body);
  };
  return (
    <form className="shield-mode" onSubmit={(e) => { e.preventDefault(); apply(); }}>
      <Field label="Mode" hint={MODES.find((m) => m.value === choice)?.what}>
        {(p) => (
          <select {...p} value={choice} onChange={(e) => { setChoice(e.currentTarget.value as SiteMode); preview.reset(); }}>
            {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}{m.value === site.mode ? ' (current)' : ''}</option>)}
          </select>
        )}
      </Field>
      <button type="submit" disabled={choice === site.mode || save.isPending}>Change mode</button>
      <ImpactButton preview={preview} propose={() => ({ site: body })} disabled={choice === site.mode} />
      <ImpactResult preview={preview} fieldLabels={{ mode: 'Mode' }} />
      {changed && <p className="success" role="status">Mode changed to {modeLabel(changed)}.</p>}
      {save.error && <ErrorMessage error={save.error} title="The mode was not changed" />}
      <ConfirmDialog
        open={confirming}
        title={`Weaken ${site.domain} to ${modeLabel(choice)}?`}
        confirmLabel={`Switch to ${modeLabel(choice)}`}
        danger
        busy={save.isPending}
        onConfirm={() => save.mutate(body)}
        onCancel={() => { setConfirming(false); setChoice(site.mode); }}
      >
        <p>
          From <strong>{modeLabel(site.mode)}</strong> to <strong>{modeLabel(choice)}</strong>:
        </p>
        <ul>
          {weakening(site.mode, choice).map((line) => <li key={line}>{line}</li>)}
        </ul>
        <p>The change is recorded in the audit log.</p>
      </ConfirmDialog>
    </form>
  );
}
