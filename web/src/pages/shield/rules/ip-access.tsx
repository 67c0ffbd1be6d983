// IP access rules of a site: allow, deny or challenge by address, network, AS or country. Type and
// value are the rule's identity; action, note, expiry and labels can change. Writers can also
// import a CSV file (csv-import.tsx). The form previews a rule's impact on recorded traffic before
// it is saved.
import { useState } from 'react';
import { api, ok } from '../../../api/client.ts';
import type { BodyOf } from '../../../api/types.ts';
import { ManagedEditWarning, StatusBadge, Time } from '../../../components/badges.tsx';
import { Field, useWrite } from '../../../components/forms.tsx';
import { rulesKey, type IpRule } from '../shared/api.ts';
import { ErrorMessage } from '../../../components/status.tsx';
import { Facts } from '../../../components/facts.tsx';
import { FormActions, LabelsField } from '../shared/form-parts.tsx';
import { isoToLocal, localToIso, text } from '../shared/form-values.ts';
import { operationOf, useImpactPreview, type RuleWrite } from '../shared/impact.ts';
import { ImpactButton, ImpactResult } from '../shared/impact-report.tsx';
import { textToLabels } from '../shared/labels.ts';
import { RuleTab, type Column, type FormProps } from '../shared/rule-tab.tsx';
import { CsvImport, type ImportOutcome } from './csv-import.tsx';

const TYPES = ['ip', 'cidr', 'asn', 'country'] as const satisfies ReadonlyArray<IpRule['type']>;
const ACTIONS = ['deny', 'allow', 'challenge'] as const satisfies ReadonlyArray<IpRule['action']>;
const FIELD_LABELS = { type: 'Type', value: 'Value', action: 'Action', note: 'Note', expires_at: 'Expires at', labels: 'Labels' };

const describe = (r: IpRule) => `${r.type} ${r.value}`;

const columns: ReadonlyArray<Column<IpRule>> = [
  { header: 'Value', cell: (r) => <code className="shield-cell-code">{r.value}</code> },
  { header: 'Type', cell: (r) => r.type },
  { header: 'Action', cell: (r) => <StatusBadge status={r.action} /> },
  { header: 'Note', cell: (r) => r.note || <span className="muted">—</span> },
  { header: 'Expires', cell: (r) => (r.expires_at ? <>{r.status === 'expired' && <StatusBadge status="expired" />} <Time at={r.expires_at} /></> : 'never') },
];

type IpRuleCreate = BodyOf<'/api/v1/shield/sites/{id}/ip-access', 'post'>;
type IpRuleUpdate = BodyOf<'/api/v1/shield/sites/{id}/ip-access/{rule_id}', 'patch'>;

/** What Save sends for the form: the new rule, or the changes to `row`. The impact preview proposes the same. */
function ipRuleWrite(form: FormData, row: IpRule | undefined): RuleWrite<IpRuleCreate, IpRuleUpdate> {
  const expires = text(form, 'expires_at');
  const common = {
    action: text(form, 'action') as IpRule['action'],
    note: text(form, 'note'),
    // Sent only when changed: an expired rule's unchanged time would be refused as past.
    ...(row && expires === isoToLocal(row.expires_at) ? {} : { expires_at: localToIso(expires) }),
    labels: textToLabels(text(form, 'labels')),
  };
  return row ? { op: 'update', id: row.id, body: common } : { op: 'create', body: { type: text(form, 'type') as IpRule['type'], value: text(form, 'value'), ...common } };
}

function IpRuleForm({ siteId, row, onDone, onCancel }: FormProps<IpRule> & { siteId: string }) {
  const save = useWrite(
    (form: FormData) => {
      const write = ipRuleWrite(form, row);
      return write.op === 'update'
        ? ok(api.PATCH('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: siteId, rule_id: write.id } }, body: write.body }))
        : ok(api.POST('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: siteId } }, body: write.body }));
    },
    [rulesKey(siteId, 'ip-access')],
    onDone,
  );
  const preview = useImpactPreview(siteId);
  return (
    <form className="shield-form" onChange={() => preview.reset()} onSubmit={(e) => { e.preventDefault(); save.mutate(new FormData(e.currentTarget)); }}>
      {row ? (
        <>
          <ManagedEditWarning labels={row.labels} />
          <Facts layout="grid" items={[['Type', row.type], ['Value', <code key="v">{row.value}</code>]]} />
        </>
      ) : (
        <div className="grid-2">
          <Field label="Type">
            {(p) => (
              <select {...p} name="type" defaultValue="ip">
                {TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
              </select>
            )}
          </Field>
          <Field label="Value" hint="203.0.113.7, 198.51.100.0/24, AS64500 or NL.">
            {(p) => <input {...p} name="value" required spellCheck={false} />}
          </Field>
        </div>
      )}
      <div className="grid-2">
        <Field label="Action" hint="allow skips the other rules.">
          {(p) => (
            <select {...p} name="action" defaultValue={row?.action ?? 'deny'}>
              {ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          )}
        </Field>
        <Field label="Expires at" hint="Your local time; empty: never.">
          {(p) => <input {...p} name="expires_at" type="datetime-local" defaultValue={isoToLocal(row?.expires_at)} />}
        </Field>
      </div>
      <Field label="Note" hint="Why the rule exists.">
        {(p) => <input {...p} name="note" maxLength={1024} defaultValue={row?.note ?? ''} />}
      </Field>
      <LabelsField labels={row?.labels} />
      <ImpactResult preview={preview} fieldLabels={FIELD_LABELS} />
      <ErrorMessage title="Not saved" error={save.error} fieldLabels={FIELD_LABELS} />
      <FormActions
        busy={save.isPending}
        onCancel={onCancel}
        label={row ? 'Save rule' : 'Create rule'}
        extra={<ImpactButton preview={preview} propose={(form) => ({ operations: [operationOf('ip_access_rule', ipRuleWrite(form, row))] })} />}
      />
    </form>
  );
}

export function IpAccess({ siteId }: { siteId: string }) {
  const [importing, setImporting] = useState(false);
  const [outcome, setOutcome] = useState<ImportOutcome | null>(null);
  return (
    <RuleTab<IpRule>
      siteId={siteId}
      kind="ip-access"
      title="IP access rules"
      noun="IP access rule"
      emptyText="No IP access rules: every client reaches the other rules."
      intro={<p className="muted">Allow, deny or challenge clients by address, network, autonomous system or country. An allow rule lets a client skip every other rule.</p>}
      fetchPage={(cursor) => ok(api.GET('/api/v1/shield/sites/{id}/ip-access', { params: { path: { id: siteId }, query: { cursor } } }))}
      columns={columns}
      describe={describe}
      remove={(r) => ok(api.DELETE('/api/v1/shield/sites/{id}/ip-access/{rule_id}', { params: { path: { id: siteId, rule_id: r.id } } }))}
      renderForm={(props) => <IpRuleForm key={props.row?.id ?? 'new'} siteId={siteId} {...props} />}
      writeActions={<button type="button" onClick={() => { setOutcome(null); setImporting(true); }}>Import CSV</button>}
    >
      {outcome && (
        <p className="success" role="status">
          Imported {outcome.created} rule{outcome.created === 1 ? '' : 's'}
          {outcome.skipped > 0 && <>; {outcome.skipped} duplicate row{outcome.skipped === 1 ? '' : 's'} skipped (lines {outcome.skipped_rows.map((r) => r.line).join(', ')})</>}.
        </p>
      )}
      <CsvImport siteId={siteId} open={importing} onClose={() => setImporting(false)} onImported={(result) => { setOutcome(result); setImporting(false); }} />
    </RuleTab>
  );
}
