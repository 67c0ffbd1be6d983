// The schema's enforcement strictness (…/schema-config). Lowering it lets through requests the
// current level refuses, so a lowering asks for confirmation; raising does not. A select and a
// button, as for the site's mode, so that keyboard moves through the options change nothing.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../../api/client.ts';
import type { Answer } from '../../../api/types.ts';
import { useCan } from '../../../api/session.ts';
import { ConfirmDialog } from '../../../components/dialog.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { ErrorMessage, Loading } from '../../../components/status.tsx';
import { rulesKey, siteKey } from '../shared/api.ts';

type Level = Answer<'/api/v1/shield/sites/{id}/schema-config'>['strictness'];

const LEVELS: ReadonlyArray<{ value: Level; label: string; what: string }> = [
  { value: 'lenient', label: 'Lenient', what: 'path and method must match a declared operation' },
  { value: 'standard', label: 'Standard', what: 'also parameters, their types and JSON bodies' },
  { value: 'strict', label: 'Strict', what: 'also refuses unknown parameters, unknown body properties and undeclared endpoints' },
];
const rank = (level: Level) => LEVELS.findIndex((l) => l.value === level);

export function Strictness({ siteId }: { siteId: string }) {
  const canWrite = useCan('shield:write');
  const config = useQuery({ queryKey: rulesKey(siteId, 'schema-config'), queryFn: () => ok(api.GET('/api/v1/shield/sites/{id}/schema-config', { params: { path: { id: siteId } } })) });
  const [pending, setPending] = useState<Level | null>(null);
  const save = useWrite(
    (strictness: Level) => ok(api.PATCH('/api/v1/shield/sites/{id}/schema-config', { params: { path: { id: siteId } }, body: { strictness } })),
    [siteKey(siteId)],
    () => setPending(null),
  );
  if (config.isPending) return <Loading label="Loading the strictness" />;
  if (config.isError) return <ErrorMessage error={config.error} />;
  const current = config.data.strictness;
  const choose = (next: Level) => {
    if (next === current) return;
    if (rank(next) < rank(current)) setPending(next);
    else save.mutate(next);
  };
  const lost = pending ? LEVELS.filter((l) => rank(l.value) > rank(pending) && rank(l.value) <= rank(current)) : [];
  return (
    <div>
      <h3>Strictness</h3>
      {canWrite ? (
        <form
          className="shield-mode"
          key={current}
          onSubmit={(e) => {
            e.preventDefault();
            choose(new FormData(e.currentTarget).get('strictness') as Level);
          }}
        >
          <Field label="Enforcement strictness" hint={`Now ${current}: ${LEVELS.find((l) => l.value === current)?.what}.`}>
            {(p) => (
              <select {...p} name="strictness" defaultValue={current}>
                {LEVELS.map((l) => <option key={l.value} value={l.value}>{l.label}{l.value === current ? ' (current)' : ''}</option>)}
              </select>
            )}
          </Field>
          <button type="submit" disabled={save.isPending}>Change strictness</button>
        </form>
      ) : (
        <p>
          <strong>{LEVELS.find((l) => l.value === current)?.label}</strong>: {LEVELS.find((l) => l.value === current)?.what}.
        </p>
      )}
      {save.error && <ErrorMessage error={save.error} title="The strictness was not changed" />}
      <ConfirmDialog
        open={pending !== null}
        title="Lower the schema strictness?"
        confirmLabel={`Lower to ${pending ?? ''}`}
        danger
        busy={save.isPending}
        onConfirm={() => pending && save.mutate(pending)}
        onCancel={() => setPending(null)}
      >
        <p>These checks stop refusing requests:</p>
        <ul>
          {lost.map((l) => <li key={l.value}>{l.label}: {l.what}</li>)}
        </ul>
      </ConfirmDialog>
    </div>
  );
}
