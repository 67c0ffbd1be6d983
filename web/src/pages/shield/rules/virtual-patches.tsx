// Virtual patches of a site: a parameter of matching requests tested against an RE2 pattern. Only
// labels change after creation (a different match is a different patch), so editing shows the
// match as facts and the labels as the one editable field. The form previews a new patch's impact
// on recorded traffic before it is saved.
import { api, ok } from '../../../api/client.ts';
import type { BodyOf } from '../../../api/types.ts';
import { ManagedEditWarning, StatusBadge, Time } from '../../../components/badges.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { rulesKey, type VirtualPatch } from '../shared/api.ts';
import { ErrorMessage } from '../../../components/status.tsx';
import { Facts } from '../../../components/facts.tsx';
import { FormActions, HTTP_METHODS, LabelsField } from '../shared/form-parts.tsx';
import { optionalNumber, text } from '../shared/form-values.ts';
import { operationOf, useImpactPreview, type RuleWrite } from '../shared/impact.ts';
import { ImpactButton, ImpactResult } from '../shared/impact-report.tsx';
import { textToLabels } from '../shared/labels.ts';
import { RuleTab, type Column, type FormProps } from '../shared/rule-tab.tsx';

const FIELD_LABELS = { url_pattern: 'URL pattern', method: 'Method', match_param: 'Parameter', match_regex: 'Pattern (RE2)', action: 'Action', expires_in_days: 'Expires in days', labels: 'Labels' };
const ACTIONS = ['block', 'log', 'challenge'] as const satisfies ReadonlyArray<VirtualPatch['action']>;

const describe = (p: VirtualPatch) => `${p.method} ${p.url_pattern} ${p.match_param}`;

const columns: ReadonlyArray<Column<VirtualPatch>> = [
  { header: 'Request', cell: (p) => <code className="shield-cell-code">{p.method} {p.url_pattern}</code> },
  { header: 'Parameter', cell: (p) => <code>{p.match_param}</code> },
  { header: 'Pattern', cell: (p) => <code className="shield-cell-code">{p.match_regex}</code> },
  { header: 'Action', cell: (p) => <StatusBadge status={p.action} /> },
  { header: 'Expires', cell: (p) => (p.expires_at ? <>{p.status === 'expired' && <StatusBadge status="expired" />} <Time at={p.expires_at} /></> : 'never') },
];

type PatchCreate = BodyOf<'/api/v1/shield/sites/{id}/virtual-patches', 'post'>;
type PatchUpdate = BodyOf<'/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', 'patch'>;

/** What Save sends for the form: the new patch, or `row`'s new labels. The impact preview proposes the same. */
function patchWrite(form: FormData, row: VirtualPatch | undefined): RuleWrite<PatchCreate, PatchUpdate> {
  if (row) return { op: 'update', id: row.id, body: { labels: textToLabels(text(form, 'labels')) } };
  return {
    op: 'create',
    body: {
      url_pattern: text(form, 'url_pattern'),
      method: text(form, 'method') as VirtualPatch['method'],
      match_param: text(form, 'match_param'),
      match_regex: text(form, 'match_regex'),
      action: text(form, 'action') as VirtualPatch['action'],
      expires_in_days: optionalNumber(form, 'expires_in_days'),
      labels: textToLabels(text(form, 'labels')),
    },
  };
}

function PatchForm({ siteId, row, onDone, onCancel }: FormProps<VirtualPatch> & { siteId: string }) {
  const invalidates = [rulesKey(siteId, 'virtual-patches')];
  const save = useWrite(
    (form: FormData) => {
      const write = patchWrite(form, row);
      return write.op === 'update'
        ? ok(api.PATCH('/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', { params: { path: { id: siteId, patch_id: write.id } }, body: write.body }))
        : ok(api.POST('/api/v1/shield/sites/{id}/virtual-patches', { params: { path: { id: siteId } }, body: write.body }));
    },
    invalidates,
    onDone,
  );
  const preview = useImpactPreview(siteId);
  return (
    <form className="shield-form" onChange={() => preview.reset()} onSubmit={(e) => { e.preventDefault(); save.mutate(new FormData(e.currentTarget)); }}>
      {row ? (
        <>
          <ManagedEditWarning labels={row.labels} />
          <Facts layout="grid" items={[['Request', <code key="r">{row.method} {row.url_pattern}</code>], ['Parameter', <code key="p">{row.match_param}</code>], ['Pattern', <code key="m">{row.match_regex}</code>], ['Action', row.action]]} />
          <p className="muted">Only labels can change: a different match is a different patch (delete this one and create another).</p>
        </>
      ) : (
        <>
          <div className="grid-2">
            <Field label="URL pattern" hint="Starts with /; * matches any run of characters.">
              {(p) => <input {...p} name="url_pattern" required placeholder="/search" />}
            </Field>
            <Field label="Method">
              {(p) => (
                <select {...p} name="method" defaultValue="ANY">
                  {HTTP_METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
                </select>
              )}
            </Field>
            <Field label="Parameter" hint="Query, form, multipart or JSON key.">
              {(p) => <input {...p} name="match_param" required placeholder="q" />}
            </Field>
            <Field label="Action">
              {(p) => (
                <select {...p} name="action" defaultValue="block">
                  {ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
                </select>
              )}
            </Field>
          </div>
          <Field label="Pattern (RE2)" hint="Tested against the parameter's value; (?i) ignores case. No backreferences or lookaround.">
            {(p) => <input {...p} name="match_regex" required spellCheck={false} placeholder="(?i)union\s+select" />}
          </Field>
          <Field label="Expires in days" hint="Leave empty for a patch that does not expire.">
            {(p) => <input {...p} name="expires_in_days" type="number" min={1} max={3650} inputMode="numeric" />}
          </Field>
        </>
      )}
      <LabelsField labels={row?.labels} />
      <ImpactResult preview={preview} fieldLabels={FIELD_LABELS} />
      <ErrorMessage title="Not saved" error={save.error} fieldLabels={FIELD_LABELS} />
      <FormActions
        busy={save.isPending}
        onCancel={onCancel}
        label={row ? 'Save patch' : 'Create patch'}
        extra={<ImpactButton preview={preview} propose={(form) => ({ operations: [operationOf('virtual_patch', patchWrite(form, row))] })} />}
      />
    </form>
  );
}

export function VirtualPatches({ siteId }: { siteId: string }) {
  return (
    <RuleTab<VirtualPatch>
      siteId={siteId}
      kind="virtual-patches"
      title="Virtual patches"
      noun="virtual patch"
      emptyText="No virtual patches: nothing on this site is patched."
      intro={<p className="muted">A stop-gap for a known vulnerability: requests whose parameter matches the pattern are blocked (or logged, or challenged) until the code is fixed.</p>}
      fetchPage={(cursor) => ok(api.GET('/api/v1/shield/sites/{id}/virtual-patches', { params: { path: { id: siteId }, query: { cursor } } }))}
      columns={columns}
      describe={describe}
      remove={(p) => ok(api.DELETE('/api/v1/shield/sites/{id}/virtual-patches/{patch_id}', { params: { path: { id: siteId, patch_id: p.id } } }))}
      renderForm={(props) => <PatchForm key={props.row?.id ?? 'new'} siteId={siteId} {...props} />}
    />
  );
}
